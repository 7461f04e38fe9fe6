//! The inbound dialects: one module per HTTP API qore answers, each with the same file set
//! as the client codecs it mirrors: `request.rs` (body -> [`Inbound`]), `response.rs` (a
//! finished turn -> one JSON body), `stream.rs` (events -> SSE in the vendor's order and
//! shapes), `error.rs` ([`ServeError`] -> the vendor's error envelope and in-stream error).
//!
//! A dialect does no I/O and knows nothing of routing, keys or the store: the server feeds
//! it bytes and events. Each is tested both ways against qore-client's codec for the same
//! wire: a request the client encodes decodes here to the same conversation, and a stream
//! encoded here decodes through the client to the same events.

use axum::http::HeaderMap;
use qore_core::{ResponseEvent, StreamOutcome};

use crate::{Inbound, ReplyMeta, ServeError};

pub mod anthropic;
pub mod completions;
pub mod openai_chat;
pub mod openai_responses;
pub mod splice;
pub mod sse;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod text_delta_tests;

/// One inbound HTTP API.
pub trait Dialect: Send + Sync + 'static {
    /// A short name for logs and metric labels (`chat_completions`, `messages`, `responses`).
    fn name(&self) -> &'static str;

    /// The client wire this dialect mirrors (qore-client's protocol name): vendor-only
    /// content (thinking signatures, vendor headers) goes on only to that wire.
    fn wire(&self) -> &'static str;

    /// Decode a request body (headers for what travels there: `anthropic-beta` …).
    /// A malformed body is a 400 naming the field.
    fn decode(&self, body: &[u8], headers: &HeaderMap) -> Result<Inbound, ServeError>;

    /// A fresh reply id in the dialect's form (`chatcmpl-…`, `msg_…`, `resp_…`).
    fn new_id(&self) -> String;

    /// An encoder for one streamed reply.
    fn encoder(&self, meta: &ReplyMeta) -> Box<dyn StreamEncoder>;

    /// The whole (non-streamed) reply of a finished turn. Only called with
    /// [`StreamOutcome::Finished`]; failures go through [`Dialect::error_body`].
    fn response(&self, meta: &ReplyMeta, outcome: &StreamOutcome) -> serde_json::Value;

    /// The error envelope for `error` (the status is `error.status`).
    fn error_body(&self, error: &ServeError) -> serde_json::Value;
}

/// Writes one streamed reply as SSE bytes. Called with `start` once, then every event in
/// order, then `finish` once with how the turn ended: a finished turn gets the dialect's
/// closing events, a failed one its in-stream error event (the status is already out), a
/// cancelled one nothing more.
pub trait StreamEncoder: Send {
    fn start(&mut self, out: &mut Vec<u8>);
    fn event(&mut self, event: &ResponseEvent, out: &mut Vec<u8>);
    fn finish(&mut self, outcome: &StreamOutcome, error: Option<&ServeError>, out: &mut Vec<u8>);
}
