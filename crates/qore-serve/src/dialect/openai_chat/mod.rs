//! OpenAI Chat Completions (`POST /v1/chat/completions`) answered by qore: the inverse of
//! qore-client's `openai_chat` codec.
//!
//! Contract:
//! - [`request`]: a body -> [`Inbound`]; a history the client's encoder writes decodes to
//!   the same history (tool results as user messages, thinking from `reasoning_content`);
//!   what cannot be carried and would change the answer is a 400 naming the field, hints
//!   are named in [`Inbound::dropped`];
//! - [`response`]: a finished turn -> one `chat.completion` body;
//! - [`stream`]: events -> `chat.completion.chunk` frames, `finish_reason`, the usage chunk
//!   when asked, `[DONE]`; a failure after the first byte is an in-stream `{"error"}`;
//! - [`error`]: [`ServeError`] -> `{"error": {"message", "type", "param", "code"}}`;
//! - ids are `chatcmpl-` and a ULID. No I/O here.

pub(crate) mod error;
pub(crate) mod json;
mod messages;
pub(crate) mod request;
pub(crate) mod response;
pub(crate) mod stream;

use axum::http::HeaderMap;
use qore_core::StreamOutcome;

use super::{Dialect, StreamEncoder};
use crate::{Inbound, ReplyMeta, ServeError};

pub use stream::ChatEncoder;

/// The Chat Completions dialect.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAiChat;

impl Dialect for OpenAiChat {
    fn name(&self) -> &'static str {
        "chat_completions"
    }

    fn wire(&self) -> &'static str {
        qore_client::protocols::openai_chat::NAME
    }

    fn decode(&self, body: &[u8], _headers: &HeaderMap) -> Result<Inbound, ServeError> {
        request::decode(body)
    }

    fn new_id(&self) -> String {
        format!("chatcmpl-{}", ulid::Ulid::generate())
    }

    fn encoder(&self, meta: &ReplyMeta) -> Box<dyn StreamEncoder> {
        Box::new(ChatEncoder::new(meta.clone()))
    }

    fn response(&self, meta: &ReplyMeta, outcome: &StreamOutcome) -> serde_json::Value {
        response::body(meta, outcome)
    }

    fn error_body(&self, error: &ServeError) -> serde_json::Value {
        error::body(error)
    }
}
