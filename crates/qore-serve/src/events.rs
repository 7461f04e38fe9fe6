//! [`EventSource`]: what a relay, the usage normaliser and an opened upstream read (a
//! provider's stream, or a turn run by the server's tool loop). On its own so that the
//! producers of events (`upstream`, `server_tools`, `usage`) need not depend on the relay,
//! and through it on the request's `Exchange`.

use futures_util::Stream;
use qore_client::ResponseStream;
use qore_core::{ResponseEvent, StreamOutcome};

/// What a relay reads: a provider's stream, or a turn run by the server's tool loop.
pub trait EventSource: Stream<Item = ResponseEvent> + Unpin + Send {
    /// How it ended; `None` until its last event was yielded.
    fn outcome(&self) -> Option<&StreamOutcome>;
}

impl EventSource for ResponseStream {
    fn outcome(&self) -> Option<&StreamOutcome> {
        ResponseStream::outcome(self)
    }
}
