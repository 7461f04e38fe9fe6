//! Anthropic Messages (`POST {base}/v1/messages`, SSE), as spoken by Anthropic, by gateways
//! that relay it (OpenRouter's `/api/v1/messages`) and by llama.cpp's server. The base URL
//! is the host without `/v1` (`https://api.anthropic.com`).
//!
//! Promises: streamed and whole-body answers decode to the same events: text, thinking with
//! its signature, redacted thinking, tool calls (several per message, interleaved by block
//! index), usage with cache reads and writes, every stop reason (`pause_turn` included),
//! error envelopes over HTTP and inside a 200 stream; a stream without `message_stop` fails
//! as incomplete. Requests replay history exactly as the API needs it back: thinking with
//! signatures, redacted thinking, tool calls, tool results first in their user turn, and
//! optional prompt-cache breakpoints. Every request carries `anthropic-version`; the key
//! goes in `x-api-key`. Tool choice, a JSON Schema for the answer and stop sequences are
//! said in the wire's own fields (`settings.rs`); "any JSON object" cannot be.
//!
//! Left out on purpose: blocks of tools the provider runs itself (`server_tool_use`,
//! `web_search_tool_result`, ...) and citations are skipped when decoding: history has no
//! block for them, and presenting a server tool call as a [`qore_core::ContentBlock::ToolUse`]
//! would make the engine run a tool the provider already ran.

mod error;
mod fast;
mod models;
mod request;
mod settings;
mod stream;
mod wire;

use qore_core::{ErrorInfo, ResponseFormat, ToolChoice};
use serde_json::{Map, Value};

use crate::codec::{ChatRequest, Protocol, StreamDecoder};
use crate::ModelInfo;

pub use request::DEFAULT_MAX_TOKENS;
pub use stream::MessagesStreamDecoder;

/// The name of this protocol on the command line.
pub const NAME: &str = "anthropic";

/// The `anthropic-version` header every request carries.
pub const API_VERSION: &str = "2023-06-01";

/// The Anthropic Messages protocol.
#[derive(Debug, Clone, Default)]
pub struct Anthropic {
    /// Mark prompt-cache breakpoints (`cache_control: {"type": "ephemeral"}`) on the last
    /// system block, the last tool and the last block of the last user turn.
    pub cache_breakpoints: bool,
}

impl Protocol for Anthropic {
    fn name(&self) -> &'static str {
        NAME
    }

    fn chat_path(&self, _model: &str, _stream: bool) -> String {
        "v1/messages".to_owned()
    }

    /// The API pages its listing (20 by default); one page of up to 1000 holds them all.
    fn models_path(&self) -> &'static str {
        "v1/models?limit=1000"
    }

    fn auth_headers(&self, api_key: &str) -> Vec<(String, String)> {
        vec![("x-api-key".to_owned(), api_key.to_owned())]
    }

    fn default_headers(&self) -> Vec<(String, String)> {
        vec![("anthropic-version".to_owned(), API_VERSION.to_owned())]
    }

    fn with_cache_marks(&self) -> Option<std::sync::Arc<dyn Protocol>> {
        Some(std::sync::Arc::new(Anthropic {
            cache_breakpoints: true,
        }))
    }

    fn thinking_needs_signature(&self) -> bool {
        true
    }

    /// `input_tokens`, `cache_read_input_tokens` and `cache_creation_input_tokens` add up
    /// to the prompt.
    fn cache_counted_beside_input(&self) -> bool {
        true
    }

    fn encode(&self, request: &ChatRequest<'_>) -> Result<serde_json::Value, ErrorInfo> {
        request::encode(request, self.cache_breakpoints)
    }

    fn conversation_key(&self) -> Option<&'static str> {
        Some("messages")
    }

    fn conversation<'h>(
        &'h self,
        history: &'h [qore_core::Message],
    ) -> Option<Box<dyn crate::Conversation + 'h>> {
        let turns = request::Turns::new(history, self.cache_breakpoints);
        Some(Box::new(turns))
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(MessagesStreamDecoder::new())
    }

    fn forbid_tool_calls(&self) -> Map<String, Value> {
        settings::tool_choice(&ToolChoice::None)
    }

    fn tool_choice_fields(&self, choice: &ToolChoice) -> Option<Map<String, Value>> {
        Some(settings::tool_choice(choice))
    }

    /// `None` for [`ResponseFormat::JsonObject`]: the wire asks for JSON by schema only.
    fn response_format_fields(&self, format: &ResponseFormat) -> Option<Map<String, Value>> {
        settings::response_format(format)
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
