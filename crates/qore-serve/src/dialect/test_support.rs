//! What the dialects' tests share: reading encoded bytes back through a qore-client
//! decoder, as `ResponseStream` does (framed in slices, then finished), and the events a
//! stream is built from.

use std::collections::VecDeque;

use qore_client::transport::sse::SseFramer;
use qore_client::StreamDecoder;
use qore_core::{ErrorInfo, ResponseEvent, ToolCallInput};

/// What `decoder` makes of `bytes` fed in slices of `step`: its events, and how the stream
/// ended (the first error of the framer or the decoder).
pub fn decode(
    mut decoder: Box<dyn StreamDecoder>,
    bytes: &[u8],
    step: usize,
) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    let mut framer = SseFramer::new();
    let mut out = VecDeque::new();
    for piece in bytes.chunks(step.max(1)) {
        let fed = framer.feed(piece, |frame| decoder.frame(frame, &mut out));
        if let Err(err) = fed {
            return (out.into(), Err(err));
        }
    }
    let end = framer
        .finish(|frame| decoder.frame(frame, &mut out))
        .and_then(|_| decoder.finish(&mut out));
    (out.into(), end)
}

pub fn text(t: &str) -> ResponseEvent {
    ResponseEvent::TextDelta { text: t.into() }
}

pub fn thinking(t: &str) -> ResponseEvent {
    ResponseEvent::ThinkingDelta { text: t.into() }
}

pub fn start(id: &str, name: &str) -> ResponseEvent {
    ResponseEvent::ToolCallStart {
        id: id.into(),
        name: name.into(),
    }
}

pub fn args(id: &str, delta: &str) -> ResponseEvent {
    ResponseEvent::ToolCallArgsDelta {
        id: id.into(),
        delta: delta.into(),
    }
}

pub fn end(id: &str, input: ToolCallInput) -> ResponseEvent {
    ResponseEvent::ToolCallEnd {
        id: id.into(),
        input,
    }
}
