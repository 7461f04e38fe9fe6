//! OpenAI Responses API (`POST {base}/responses`), as spoken by OpenAI, the ChatGPT Codex
//! backend (`…/backend-api/codex`), OpenRouter (`…/api/v1`) and llama.cpp.
//!
//! Promises: streamed answers in either framing (`event:` + `data:` lines, or `data:`-only
//! lines ending in `[DONE]`) and whole bodies decode to the same events: text and
//! refusals; reasoning items as thinking blocks (summary or reasoning text) whose
//! signature is the item's `encrypted_content`; function calls under their `call_id`, with
//! the final arguments; usage with cached and reasoning tokens; stop reasons from the
//! terminal event (`completed`, `incomplete`, `failed`, `error`); a stream without a
//! terminal event fails. Requests replay history statelessly (`store: false`, encrypted
//! reasoning included and sent back). Error envelopes keep status, type and body. Tool
//! choice and response format are said in the wire's own fields (`settings.rs`); stop
//! sequences cannot be (the API has no such parameter).

mod error;
mod fast;
mod items;
mod models;
mod request;
mod settings;
mod stream;
mod wire;

use qore_core::{ErrorInfo, ResponseFormat, ToolChoice};
use serde_json::{Map, Value};

use crate::codec::{ChatRequest, Protocol, StreamDecoder};
use crate::ModelInfo;

pub use stream::ResponsesDecoder;

/// The name of this protocol on the command line.
pub const NAME: &str = "openai-responses";

/// The Responses protocol.
#[derive(Debug, Clone)]
pub struct OpenAiResponses {
    /// Ask for `store: false` and encrypted reasoning, and replay it (the default). Off,
    /// the server keeps responses and the request says nothing about either.
    pub stateless: bool,
}

impl Default for OpenAiResponses {
    fn default() -> Self {
        OpenAiResponses { stateless: true }
    }
}

impl Protocol for OpenAiResponses {
    fn name(&self) -> &'static str {
        NAME
    }

    fn chat_path(&self, _model: &str, _stream: bool) -> String {
        "responses".to_owned()
    }

    fn models_path(&self) -> &'static str {
        "models"
    }

    fn encode(&self, request: &ChatRequest<'_>) -> Result<serde_json::Value, ErrorInfo> {
        request::encode(request, self.stateless)
    }

    fn conversation_key(&self) -> Option<&'static str> {
        Some("input")
    }

    fn conversation<'h>(
        &'h self,
        history: &'h [qore_core::Message],
    ) -> Option<Box<dyn crate::Conversation + 'h>> {
        Some(Box::new(request::Items::new(history)))
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(ResponsesDecoder::new())
    }

    fn tool_choice_fields(&self, choice: &ToolChoice) -> Option<Map<String, Value>> {
        Some(settings::tool_choice(choice))
    }

    fn response_format_fields(&self, format: &ResponseFormat) -> Option<Map<String, Value>> {
        Some(settings::response_format(format))
    }

    /// `None` for any stop sequence: the Responses API has no stop parameter.
    fn stop_fields(&self, stop: &[String]) -> Option<Map<String, Value>> {
        settings::stop(stop)
    }

    fn error(&self, status: u16, body: &str) -> ErrorInfo {
        error::from_http(status, body)
    }

    fn models(&self, body: &[u8]) -> Result<Vec<ModelInfo>, ErrorInfo> {
        models::parse(body)
    }
}
