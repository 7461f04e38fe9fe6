//! OpenAI Chat Completions (`POST {base}/chat/completions`), as spoken by OpenAI and by
//! every OpenAI-compatible server (llama.cpp, Mistral, DeepSeek, OpenRouter, LM Studio).
//!
//! Promises: streamed (SSE, `[DONE]`-terminated) and whole-body answers decode to the same
//! events; text, `reasoning_content`/`reasoning` (DeepSeek, OpenRouter), content arrays with
//! thinking parts (Magistral), refusals; tool calls merged by `index` whether ids and names
//! come once or in every chunk; usage with cached and reasoning tokens; finish reasons;
//! error envelopes, also inside a 200 stream. Fill-in-the-middle goes to the Completions
//! endpoint (`POST {base}/completions` with `prompt` and `suffix`, [`completions`]), whose
//! answers carry `choices[].text`. Tool choice, response format and stop sequences are
//! all said in this wire's own fields (`settings`).

mod chunk;
pub mod completions;
pub(crate) mod error;
mod fast;
pub(crate) mod models;
mod request;
pub(crate) mod settings;
mod stream;
mod wire;

use qore_core::{ErrorInfo, ResponseFormat, ToolChoice};
use serde_json::{Map, Value};

use crate::codec::{ChatRequest, FimRequest, Protocol, StreamDecoder};
use crate::ModelInfo;

pub use request::assistant_message;
pub use stream::ChatStreamDecoder;

/// The name of this protocol on the command line.
pub const NAME: &str = "openai-chat";

/// The Chat Completions protocol.
#[derive(Debug, Clone, Default)]
pub struct OpenAiChat {
    /// Send thinking blocks back as `reasoning_content` on assistant turns (DeepSeek's
    /// thinking mode with tools requires it; OpenAI rejects the field).
    pub replay_reasoning: bool,
}

impl Protocol for OpenAiChat {
    fn name(&self) -> &'static str {
        NAME
    }

    fn chat_path(&self, _model: &str, _stream: bool) -> String {
        "chat/completions".to_owned()
    }

    fn models_path(&self) -> &'static str {
        "models"
    }

    fn encode(&self, request: &ChatRequest<'_>) -> Result<serde_json::Value, ErrorInfo> {
        request::encode(request, self.replay_reasoning)
    }

    fn conversation_key(&self) -> Option<&'static str> {
        Some("messages")
    }

    fn conversation<'h>(
        &'h self,
        history: &'h [qore_core::Message],
    ) -> Option<Box<dyn crate::Conversation + 'h>> {
        Some(Box::new(request::Messages {
            history,
            replay_reasoning: self.replay_reasoning,
        }))
    }

    fn encoding_tag(&self) -> String {
        format!("{NAME} replay_reasoning={}", self.replay_reasoning)
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(ChatStreamDecoder::new())
    }

    fn fim_path(&self, _model: &str, _stream: bool) -> Option<String> {
        Some("completions".to_owned())
    }

    fn encode_fim(&self, request: &FimRequest<'_>) -> Result<serde_json::Value, ErrorInfo> {
        completions::encode_fim(request)
    }

    fn fim_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(completions::TextCompletionDecoder::new())
    }

    fn tool_choice_fields(&self, choice: &ToolChoice) -> Option<Map<String, Value>> {
        Some(settings::tool_choice(choice, "required"))
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
