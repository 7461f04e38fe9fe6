//! Mistral (`https://api.mistral.ai/v1`; Codestral's own `https://codestral.mistral.ai/v1`):
//! chat over Chat Completions, fill-in-the-middle over `POST {base}/fim/completions`.
//!
//! Promises: chat requests, answers (Magistral's thinking content arrays included), errors
//! (`{"object": "error", "message", "type"}`, `{"detail": …}`) and listings are exactly those
//! of [`crate::protocols::openai_chat`]. A fill-in-the-middle request is encoded by
//! `fim.rs`; its answer is Chat Completions-shaped (`chat.completion.chunk` frames with
//! `choices[0].delta.content`, usage and `finish_reason` on the last, then `[DONE]`; a whole
//! body has `choices[0].message.content`) and is decoded by the Chat Completions decoder,
//! so the completion streams as text deltas with usage and a stop reason.

mod fim;

use qore_core::ErrorInfo;

use crate::codec::{FimRequest, Protocol, StreamDecoder};
use crate::protocols::openai_chat::{ChatStreamDecoder, OpenAiChat};
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
