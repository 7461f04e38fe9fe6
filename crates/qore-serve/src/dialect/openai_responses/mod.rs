//! OpenAI Responses (`POST /v1/responses`), as codex and OpenAI's SDKs speak it.
//!
//! Contract:
//! - [`request`]: a body decodes to an [`Inbound`]: `input` (a string, or message,
//!   `function_call`, `function_call_output` and `reasoning` items) as qore-core messages,
//!   `instructions` as the first system message, function tools, `tool_choice`,
//!   `text.format`, `max_output_tokens`, `temperature`, `top_p`, `stream`, `store` (default
//!   true), `previous_response_id`. Hosted tools, their history items and every hint that
//!   is not passed on are dropped and named; what would change the answer (files,
//!   an unresolved `item_reference`, forcing a hosted tool, prompt templates) is a 400
//!   naming the field; [`request::decode_with`] reads an `item_reference` through the
//!   caller's store ([`response::item_origin`] tells which response an item id is from);
//! - reasoning items replayed by a stateless client (codex: `store: false`,
//!   `encrypted_content`) become thinking blocks signed with their encrypted content, the
//!   form qore-client's Responses codec reads and writes, so they reach a Responses
//!   upstream unchanged (the server leaves them out, named `thinking`, for an upstream of
//!   another wire, which could not verify them);
//! - [`response`]: a finished turn is a `response` object (`resp_<ulid>`, items `msg_…`,
//!   `rs_…`, `fc_…` with the model's `call_id`, usage with cached and reasoning tokens,
//!   `incomplete` on max tokens); [`response_object`] builds the same for a stored turn;
//! - [`stream`]: the typed events, each with its `sequence_number`, from
//!   `response.created` to `response.completed`/`.incomplete`/`.failed`;
//! - [`error`]: OpenAI's `{"error": {"message", "type", "param", "code"}}`.

use axum::http::HeaderMap;
use qore_core::StreamOutcome;

use super::{Dialect, StreamEncoder};
use crate::{Inbound, ReplyMeta, ServeError};

pub mod error;
mod fields;
mod input;
pub mod request;
pub mod response;
pub mod stream;

pub use input::Resolver;
pub use response::response_object;
pub use stream::ResponsesEncoder;

/// The Responses dialect.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAiResponses;

/// A fresh response id: `resp_` and a ULID.
pub fn new_response_id() -> String {
    format!("resp_{}", ulid::Ulid::generate())
}

impl Dialect for OpenAiResponses {
    fn name(&self) -> &'static str {
        "responses"
    }

    fn wire(&self) -> &'static str {
        qore_client::protocols::openai_responses::NAME
    }

    fn decode(&self, body: &[u8], _headers: &HeaderMap) -> Result<Inbound, ServeError> {
        request::decode(body)
    }

    fn new_id(&self) -> String {
        new_response_id()
    }

    fn encoder(&self, meta: &ReplyMeta) -> Box<dyn StreamEncoder> {
        Box::new(ResponsesEncoder::new(meta))
    }

    fn response(&self, meta: &ReplyMeta, outcome: &StreamOutcome) -> serde_json::Value {
        response::from_outcome(meta, outcome)
    }

    fn error_body(&self, error: &ServeError) -> serde_json::Value {
        error::error_body(error)
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod client_tests;
