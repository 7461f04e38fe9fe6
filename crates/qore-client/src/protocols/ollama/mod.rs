//! Ollama's native chat API (`POST {base}/api/chat`, models at `GET {base}/api/tags`), with
//! the base URL being the server root as Ollama documents it (`http://localhost:11434`).
//!
//! Promises: streamed (NDJSON, [`crate::Framing::Ndjson`]) and whole-body answers decode to
//! the same events: text, thinking, whole tool calls (arguments as JSON objects; ids kept,
//! or synthesized process-unique when the server sends none), `done_reason` as the stop
//! reason, `prompt_eval_count` / `eval_count` as usage; `{"error": ...}` lines inside a 200
//! answer and HTTP error bodies become errors that keep the body; an answer without its
//! `done: true` line is incomplete. Requests are encoded from history with thinking, tool
//! calls and tool results (`role: tool` with `tool_name`) replayed; `think`, `format` and
//! other top-level fields go through [`crate::RequestOptions::extra`].
//! Fill-in-the-middle goes to `POST {base}/api/generate` with `prompt` and `suffix`; its
//! NDJSON lines carry the text in `response` and end the same way.
//! Ollama's own server needs no key; a key (Ollama's hosted API) is sent as a bearer token.
//! Response format (`format`) and stop sequences (`options.stop`) are said in the wire's
//! own fields (`settings.rs`); a tool choice other than `auto` cannot be.

mod error;
mod fast;
mod models;
mod request;
mod settings;
mod stream;
mod wire;

use qore_core::{ErrorInfo, ResponseFormat, ToolChoice};
use serde_json::{Map, Value};

use crate::codec::{ChatRequest, FimRequest, Protocol, StreamDecoder};
use crate::ModelInfo;

pub use stream::{synthesize_call_id, OllamaStreamDecoder};

/// The name of this protocol on the command line.
pub const NAME: &str = "ollama";

/// Ollama's native chat protocol.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ollama;

impl Protocol for Ollama {
    fn name(&self) -> &'static str {
        NAME
    }

    fn chat_path(&self, _model: &str, _stream: bool) -> String {
        "api/chat".to_owned()
    }

    fn models_path(&self) -> &'static str {
        "api/tags"
    }

    fn encode(&self, request: &ChatRequest<'_>) -> Result<serde_json::Value, ErrorInfo> {
        request::encode(request)
    }

    fn conversation_key(&self) -> Option<&'static str> {
        Some("messages")
    }

    fn conversation<'h>(
        &'h self,
        history: &'h [qore_core::Message],
    ) -> Option<Box<dyn crate::Conversation + 'h>> {
        Some(Box::new(request::Messages { history }))
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(OllamaStreamDecoder::new())
    }

    fn fim_path(&self, _model: &str, _stream: bool) -> Option<String> {
        Some("api/generate".to_owned())
    }

    fn encode_fim(&self, request: &FimRequest<'_>) -> Result<serde_json::Value, ErrorInfo> {
        request::encode_fim(request)
    }

    fn fim_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(OllamaStreamDecoder::generate())
    }

    /// Ollama has no `tool_choice`: the tools are left out instead.
    fn forbid_tool_calls(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut fields = serde_json::Map::new();
        fields.insert("tools".into(), serde_json::Value::Null);
        fields
    }

    /// `None` for every choice but `auto`: `/api/chat` has no `tool_choice`.
    fn tool_choice_fields(&self, choice: &ToolChoice) -> Option<Map<String, Value>> {
        settings::tool_choice(choice)
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

    fn models(&self, body: &[u8]) -> Result<Vec<ModelInfo>, ErrorInfo> {
        models::parse(body)
    }
}
