//! Google Gemini (`generativelanguage.googleapis.com`, API version `v1beta`).
//!
//! Base URL: `https://generativelanguage.googleapis.com` (no version: the paths carry it).
//! Chat: `POST v1beta/models/{model}:streamGenerateContent?alt=sse` (SSE) or
//! `:generateContent` (one JSON body); the model may be given as `x` or `models/x` (or a
//! tuned model, `tunedModels/x`). Listing: `GET v1beta/models`. Auth: `x-goog-api-key`.
//!
//! Promises: streamed and whole answers decode to the same events (`stream.rs`): text and
//! thoughts, `thoughtSignature`s kept on the part they came with, function calls with ids
//! unique across the conversation, finish reasons (filters fail the turn), usage with
//! thoughts counted as output, error envelopes also inside a 200 answer. Requests are
//! encoded from history (`request.rs`) with every signature replayed on its part and tool
//! schemas reduced to the OpenAPI subset Gemini accepts (`schema.rs`). [`retry_delay`]
//! reads the server's retry advice from an error body. Tool choice (`toolConfig`), response
//! format and stop sequences (in `generationConfig`) are said in the wire's own fields
//! (`settings.rs`).

mod error;
mod fast;
mod finish;
mod ids;
mod models;
mod request;
mod schema;
mod settings;
mod stream;
mod wire;

use qore_core::{ErrorInfo, ResponseFormat, ToolChoice};
use serde_json::{Map, Value};

use crate::codec::{ChatRequest, Protocol, StreamDecoder};
use crate::ModelInfo;

pub use error::retry_delay;
pub use ids::is_synthesized as is_synthesized_call_id;
pub use schema::sanitize as sanitize_schema;
pub use stream::GeminiStreamDecoder;

/// The name of this protocol on the command line.
pub const NAME: &str = "gemini";

/// The Gemini protocol.
#[derive(Debug, Clone, Default)]
pub struct Gemini;

/// `models/x` for `x`; a name that already has a collection prefix is kept.
fn resource_name(model: &str) -> String {
    let model = model.trim_start_matches('/');
    if model.starts_with("models/") || model.starts_with("tunedModels/") {
        model.to_owned()
    } else {
        format!("models/{model}")
    }
}

impl Protocol for Gemini {
    fn name(&self) -> &'static str {
        NAME
    }

    fn chat_path(&self, model: &str, stream: bool) -> String {
        let name = resource_name(model);
        if stream {
            format!("v1beta/{name}:streamGenerateContent?alt=sse")
        } else {
            format!("v1beta/{name}:generateContent")
        }
    }

    fn models_path(&self) -> &'static str {
        "v1beta/models?pageSize=1000"
    }

    fn auth_headers(&self, api_key: &str) -> Vec<(String, String)> {
        vec![("x-goog-api-key".to_owned(), api_key.to_owned())]
    }

    fn encode(&self, request: &ChatRequest<'_>) -> Result<serde_json::Value, ErrorInfo> {
        request::encode(request)
    }

    fn conversation_key(&self) -> Option<&'static str> {
        Some("contents")
    }

    fn conversation<'h>(
        &'h self,
        history: &'h [qore_core::Message],
    ) -> Option<Box<dyn crate::Conversation + 'h>> {
        Some(Box::new(request::Contents::new(history)))
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(GeminiStreamDecoder::new())
    }

    fn forbid_tool_calls(&self) -> Map<String, Value> {
        settings::tool_choice(&ToolChoice::None)
    }

    fn tool_choice_fields(&self, choice: &ToolChoice) -> Option<Map<String, Value>> {
        Some(settings::tool_choice(choice))
    }

    fn response_format_fields(&self, format: &ResponseFormat) -> Option<Map<String, Value>> {
        Some(settings::response_format(format))
    }

    fn stop_fields(&self, stop: &[String]) -> Option<Map<String, Value>> {
        Some(settings::stop(stop))
    }

    fn error(&self, status: u16, body: &str) -> ErrorInfo {
        error::from_http(status, body)
    }

    fn retry_delay(&self, body: &str) -> Option<std::time::Duration> {
        error::retry_delay(body)
    }

    fn models(&self, body: &[u8]) -> Result<Vec<ModelInfo>, ErrorInfo> {
        models::parse(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_accept_bare_and_prefixed_model_names() {
        let gemini = Gemini;
        assert_eq!(
            gemini.chat_path("gemini-2.5-flash", true),
            "v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            gemini.chat_path("models/gemini-2.5-flash", false),
            "v1beta/models/gemini-2.5-flash:generateContent"
        );
        assert_eq!(
            gemini.chat_path("tunedModels/mine", false),
            "v1beta/tunedModels/mine:generateContent"
        );
        assert!(gemini.models_path().starts_with("v1beta/models"));
        assert_eq!(
            gemini.auth_headers("k"),
            vec![("x-goog-api-key".to_owned(), "k".to_owned())]
        );
    }
}
