//! The shapes of an Ollama `/api/chat` (or `/api/generate`) answer line, borrowed from the
//! line being decoded.
//!
//! One type serves streamed lines and whole bodies (a whole body is the last line with the
//! full message). Strings are `Cow`s that borrow from the line whenever they contain no
//! escapes; unknown fields (`created_at`, durations, `role`) are skipped without being built.
//! Tool-call `arguments` arrive as a JSON object, complete in one line: they are read once
//! into the value the call ends with, never re-parsed.

use std::borrow::Cow;

use serde::Deserialize;

/// One line of the answer (or the whole non-streamed body).
#[derive(Deserialize)]
pub struct ChatLine<'a> {
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub message: Option<WireMessage<'a>>,
    /// `/api/generate`'s text delta (fill-in-the-middle); chat lines have none.
    #[serde(borrow, default)]
    pub response: Option<Cow<'a, str>>,
    #[serde(default)]
    pub done: bool,
    #[serde(borrow, default)]
    pub done_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    pub prompt_eval_count: Option<u64>,
    #[serde(default)]
    pub eval_count: Option<u64>,
    /// `{"error": "..."}`: usually a string; anything else is kept as its JSON text.
    #[serde(default)]
    pub error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
pub struct WireMessage<'a> {
    #[serde(borrow, default)]
    pub content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub tool_calls: Option<Vec<WireToolCall<'a>>>,
}

#[derive(Deserialize)]
pub struct WireToolCall<'a> {
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub function: WireFunction<'a>,
}

#[derive(Deserialize)]
pub struct WireFunction<'a> {
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    /// An object on this wire; a JSON-encoded string is accepted too (some proxies).
    #[serde(default)]
    pub arguments: Option<serde_json::Value>,
}
