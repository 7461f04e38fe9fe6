//! Mistral (`https://api.mistral.ai/v1`; Codestral's own `https://codestral.mistral.ai/v1`):
//! chat over Chat Completions, fill-in-the-middle over `POST {base}/fim/completions`.
//!
//! Promises: chat requests, answers (Magistral's thinking content arrays included), errors
//! (`{"object": "error", "message", "type"}`, `{"detail": …}`) and listings are exactly those
//! of [`crate::protocols::openai_chat`]. A fill-in-the-middle request is encoded by
//! `fim.rs`; its answer is Chat Completions-shaped (`chat.completion.chunk` frames with
//! `choices[0].delta.content`, usage and `finish_reason` on the last, then `[DONE]`; a whole
//! body has `choices[0].message.content`) and is decoded by the Chat Completions decoder,
//! so the completion streams as text deltas with usage and a stop reason. Request settings
//! are Chat Completions' fields, with `tool_choice: "any"` where OpenAI says `"required"`.

mod fim;

use qore_core::{ErrorInfo, ResponseFormat, ToolChoice};
use serde_json::{Map, Value};

use crate::codec::{FimRequest, Protocol, StreamDecoder};
use crate::protocols::openai_chat::{settings, ChatStreamDecoder, OpenAiChat};
use crate::protocols::shared::delegate_chat;

/// The name of this protocol on the command line.
pub const NAME: &str = "mistral";

/// Mistral's API (Chat Completions plus FIM).
#[derive(Debug, Clone, Default)]
pub struct Mistral {
    chat: OpenAiChat,
}

impl Protocol for Mistral {
    fn name(&self) -> &'static str {
        NAME
    }

    // Chat: paths, credentials, encoding, decoding, errors and listings of Chat Completions.
    delegate_chat!(chat);

    /// Chat Completions' `tool_choice`, with Mistral's documented `"any"` for "call some
    /// tool".
    fn tool_choice_fields(&self, choice: &ToolChoice) -> Option<Map<String, Value>> {
        Some(settings::tool_choice(choice, "any"))
    }

    fn response_format_fields(&self, format: &ResponseFormat) -> Option<Map<String, Value>> {
        Some(settings::response_format(format))
    }

    fn stop_fields(&self, stop: &[String]) -> Option<Map<String, Value>> {
        Some(settings::stop(stop))
    }

    fn fim_path(&self, _model: &str, _stream: bool) -> Option<String> {
        Some("fim/completions".to_owned())
    }

    fn encode_fim(&self, request: &FimRequest<'_>) -> Result<serde_json::Value, ErrorInfo> {
        fim::encode(request)
    }

    fn fim_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(ChatStreamDecoder::new())
    }
}
