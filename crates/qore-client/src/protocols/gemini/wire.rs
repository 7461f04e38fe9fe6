//! The Gemini response shapes (`GenerateContentResponse`), borrowed from the frame being
//! decoded.
//!
//! Strings are `Cow`s that borrow from the frame whenever they contain no escapes.
//! Candidates and parts are plain `Vec`s and a function call is boxed: inline small vectors
//! made the chunk several hundred bytes that serde moved through every `Option` layer, which
//! cost more than the two small allocations (measured with callgrind on
//! `benches/decode_protocols.rs`: 406 vs 394 M instructions for 20k deltas). Keys we
//! do not act on are skipped without being built. The only owned JSON tree is a function
//! call's `args`, which is the tool call's input itself.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::Deserialize;

/// One streamed chunk, or a whole response: the same shape.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Chunk<'a> {
    #[serde(borrow, default)]
    pub candidates: Option<Vec<Candidate<'a>>>,
    #[serde(default)]
    pub usage_metadata: Option<UsageMetadata>,
    #[serde(borrow, default)]
    pub prompt_feedback: Option<PromptFeedback<'a>>,
    #[serde(borrow, default)]
    pub model_version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub response_id: Option<Cow<'a, str>>,
    /// `{"error": {...}}` in a 200 answer (a chunk or the whole body).
    #[serde(default)]
    pub error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate<'a> {
    #[serde(borrow, default)]
    pub content: Option<Content<'a>>,
    #[serde(borrow, default)]
    pub finish_reason: Option<Cow<'a, str>>,
    /// A human explanation of the finish reason (`"Model generated function call(s)."`).
    #[serde(borrow, default)]
    pub finish_message: Option<Cow<'a, str>>,
    #[serde(default)]
    pub index: Option<u32>,
}

#[derive(Deserialize)]
pub struct Content<'a> {
    #[serde(borrow, default)]
    pub parts: Option<Vec<Part<'a>>>,
}

/// One part. Gemini's `Part` holds one kind of data (text, a function call, code,
/// media) plus flags; kinds this engine does not represent are only noted as present.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part<'a> {
    #[serde(borrow, default)]
    pub text: Option<Cow<'a, str>>,
    /// The text is the model's reasoning (thought summary), not its answer.
    #[serde(default)]
    pub thought: Option<bool>,
    #[serde(borrow, default)]
    pub thought_signature: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub function_call: Option<Box<FunctionCall<'a>>>,
    /// Data kinds not represented in our content model (code execution, generated media).
    #[serde(default)]
    pub executable_code: Option<IgnoredAny>,
    #[serde(default)]
    pub code_execution_result: Option<IgnoredAny>,
    #[serde(default)]
    pub inline_data: Option<IgnoredAny>,
    #[serde(default)]
    pub file_data: Option<IgnoredAny>,
}

impl Part<'_> {
    /// The part carries a kind of data we do not represent (its events are not emitted).
    pub fn is_unrepresented(&self) -> bool {
        self.executable_code.is_some()
            || self.code_execution_result.is_some()
            || self.inline_data.is_some()
            || self.file_data.is_some()
    }
}

#[derive(Deserialize)]
pub struct FunctionCall<'a> {
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    /// The arguments object (absent for a call without arguments).
    #[serde(default)]
    pub args: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptFeedback<'a> {
    #[serde(borrow, default)]
    pub block_reason: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub block_reason_message: Option<Cow<'a, str>>,
}

/// `usageMetadata`. Counts are cumulative over a stream: each chunk repeats the totals so far.
#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub struct UsageMetadata {
    /// The whole prompt, cached part included.
    #[serde(default)]
    pub prompt_token_count: Option<u64>,
    /// Cached part of the prompt.
    #[serde(default)]
    pub cached_content_token_count: Option<u64>,
    /// The answer, thoughts excluded.
    #[serde(default)]
    pub candidates_token_count: Option<u64>,
    /// The thoughts (billed as output).
    #[serde(default)]
    pub thoughts_token_count: Option<u64>,
    /// Prompt tokens of built-in tool use (code execution results fed back; billed as input).
    #[serde(default)]
    pub tool_use_prompt_token_count: Option<u64>,
}
