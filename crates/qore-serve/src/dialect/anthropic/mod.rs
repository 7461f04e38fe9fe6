//! Anthropic Messages (`POST /v1/messages`, and `POST /v1/messages/count_tokens`), as
//! Anthropic's SDKs and Claude Code speak it.
//!
//! Promises:
//! - [`AnthropicMessages`] decodes a request into an [`Inbound`] (`request.rs`, with the
//!   conversation in `blocks.rs`): system, text, images, thinking with signatures,
//!   redacted thinking, tool calls and results, client tools, `tool_choice`, JSON-schema
//!   output, `max_tokens` (required), `temperature`, `top_p`, `stop_sequences`, `stream`;
//!   what would change the answer and cannot be carried (documents, search results,
//!   server-tool blocks) is a 400 naming the block and its place; hints (`cache_control`,
//!   `thinking`, `context_management`, `metadata`, hosted tools by type, `anthropic-beta`,
//!   unknown keys …) are dropped and named; what Claude Code sends decodes;
//! - a finished turn is one `message` body (`response.rs`), a streamed one Anthropic's
//!   event sequence with correct block indexes (`stream.rs`), errors Anthropic's envelope
//!   and type names (`error.rs`), over HTTP or as an `error` event in a started stream;
//! - `count_tokens.rs` answers `{"input_tokens": N}` with qore's heuristic estimate;
//! - tested both ways against qore-client's Anthropic codec and on every recorded
//!   Anthropic request in the shared fixtures.

mod blocks;
pub mod count_tokens;
pub mod error;
pub mod request;
pub mod response;
pub mod stream;

use axum::http::HeaderMap;
use qore_core::StreamOutcome;

use super::{Dialect, StreamEncoder};
use crate::{Inbound, ReplyMeta, ServeError};

pub use count_tokens::count_tokens;
pub use stream::MessagesEncoder;

/// The Anthropic Messages dialect.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnthropicMessages;

impl Dialect for AnthropicMessages {
    fn name(&self) -> &'static str {
        "messages"
    }

    fn wire(&self) -> &'static str {
        qore_client::protocols::anthropic::NAME
    }

    fn decode(&self, body: &[u8], headers: &HeaderMap) -> Result<Inbound, ServeError> {
        request::decode(body, headers)
    }

    fn new_id(&self) -> String {
        format!("msg_{}", ulid::Ulid::generate())
    }

    fn encoder(&self, meta: &ReplyMeta) -> Box<dyn StreamEncoder> {
        Box::new(MessagesEncoder::new(meta))
    }

    fn response(&self, meta: &ReplyMeta, outcome: &StreamOutcome) -> serde_json::Value {
        response::body(meta, outcome)
    }

    fn error_body(&self, error: &ServeError) -> serde_json::Value {
        error::body(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_msg_and_a_ulid_and_the_trait_reaches_each_part() {
        let dialect: &dyn Dialect = &AnthropicMessages;
        let (a, b) = (dialect.new_id(), dialect.new_id());
        assert!(a.starts_with("msg_") && a.len() == 30, "{a}");
        assert!(ulid::Ulid::from_string(&a[4..]).is_ok(), "{a}");
        assert_ne!(a, b);
        assert_eq!(dialect.name(), "messages");
        let body =
            br#"{"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}"#;
        let inbound = dialect.decode(body, &HeaderMap::new()).unwrap();
        assert_eq!(inbound.history.len(), 1);
        let error = ServeError::new(crate::ErrorKind::NotFound, "no such model");
        assert_eq!(
            dialect.error_body(&error)["error"]["type"],
            "not_found_error"
        );
    }
}
