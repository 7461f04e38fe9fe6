//! The shape of a llama.cpp `/completion` or `/infill` answer chunk, borrowed from the frame.
//!
//! Streamed chunks are `data: {"content", "stop": false, "tokens_predicted", …}` SSE frames;
//! the last one (and a whole body) has `"stop": true`, `stop_type`, `tokens_evaluated`,
//! `timings` and the settings echoed back. Strings borrow from the frame when they contain
//! no escapes; the big echoed fields (`generation_settings`, `prompt`, `tokens`) are skipped
//! without being built.

use std::borrow::Cow;

use serde::Deserialize;

#[derive(Deserialize)]
pub struct CompletionChunk<'a> {
    #[serde(borrow, default)]
    pub content: Option<Cow<'a, str>>,
    #[serde(default)]
    pub stop: bool,
    /// `eos`, `word`, `limit` (or `none`) on the last chunk of current servers.
    #[serde(borrow, default)]
    pub stop_type: Option<Cow<'a, str>>,
    /// Older servers said why with three flags instead of `stop_type`.
    #[serde(default)]
    pub stopped_word: bool,
    #[serde(default)]
    pub stopped_limit: bool,
    #[serde(default)]
    pub tokens_evaluated: Option<u64>,
    #[serde(default)]
    pub tokens_predicted: Option<u64>,
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(default)]
    pub timings: Option<Timings>,
    /// `{"error": {"code", "message", "type"}}` inside a 200 stream.
    #[serde(default)]
    pub error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
pub struct Timings {
    /// Prompt tokens served from the slot's cache.
    #[serde(default)]
    pub cache_n: Option<u64>,
}
