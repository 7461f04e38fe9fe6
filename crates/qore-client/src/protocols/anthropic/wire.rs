//! The Anthropic Messages response shapes, borrowed from the frame being decoded.
//!
//! One flat shape per level: a streamed event ([`StreamEvent`]) has every field any event
//! kind has, a content block ([`Block`]) every field any block kind has; fields an event or
//! block does not carry stay `None`, unknown fields are skipped without being built. Strings
//! are `Cow`s that borrow from the frame whenever they hold no escapes, so decoding a typical
//! delta allocates nothing. The string fields of blocks and deltas are [`Text`]: a value of
//! another JSON type (a block kind this build does not know, reusing a field name) reads as
//! absent instead of failing the whole frame.

use std::borrow::Cow;

use qore_core::Usage;
use serde::{Deserialize, Deserializer};

/// The `type` of a streamed event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    MessageStart,
    ContentBlockStart,
    ContentBlockDelta,
    ContentBlockStop,
    MessageDelta,
    MessageStop,
    Ping,
    Error,
    /// A kind this build does not know (or none): skipped.
    #[default]
    #[serde(other)]
    Unknown,
}

/// The `data` of one SSE frame. The rare, large members are boxed so that the frequent
/// `content_block_delta` event stays small (serde moves the whole event through each layer).
#[derive(Deserialize)]
pub struct StreamEvent<'a> {
    #[serde(rename = "type", default)]
    pub kind: EventKind,
    #[serde(default)]
    pub index: Option<u32>,
    /// `message_start`.
    #[serde(borrow, default)]
    pub message: Option<Box<MessageBody<'a>>>,
    /// `content_block_start`.
    #[serde(borrow, default)]
    pub content_block: Option<Box<Block<'a>>>,
    /// `content_block_delta` and `message_delta`.
    #[serde(borrow, default)]
    pub delta: Option<Delta<'a>>,
    /// `message_delta`.
    #[serde(default)]
    pub usage: Option<Box<WireUsage>>,
    /// `error`.
    #[serde(borrow, default)]
    pub error: Option<Box<WireError<'a>>>,
}

/// A message: the `message` of `message_start`, or a whole (non-streamed) response body,
/// which may also be an error envelope (`{"type": "error", "error": {...}}`).
#[derive(Deserialize)]
pub struct MessageBody<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    /// `null` (some gateways) reads as empty.
    #[serde(borrow, default, deserialize_with = "null_as_empty")]
    pub content: Vec<Block<'a>>,
    #[serde(borrow, default)]
    pub stop_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(borrow, default)]
    pub error: Option<WireError<'a>>,
}

/// The `type` of a content block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    Text,
    Thinking,
    RedactedThinking,
    ToolUse,
    /// Server tools (`server_tool_use`, `web_search_tool_result`, `mcp_tool_use`, ...) and
    /// anything newer: skipped (see the module doc of [`super`]).
    #[default]
    #[serde(other)]
    Other,
}

/// A content block (`content_block_start`, or an entry of a whole body's `content`).
#[derive(Deserialize)]
pub struct Block<'a> {
    #[serde(rename = "type", default)]
    pub kind: BlockKind,
    #[serde(borrow, default)]
    pub text: Text<'a>,
    #[serde(borrow, default)]
    pub thinking: Text<'a>,
    #[serde(borrow, default)]
    pub signature: Text<'a>,
    /// `redacted_thinking`: the encrypted reasoning.
    #[serde(borrow, default)]
    pub data: Text<'a>,
    #[serde(borrow, default)]
    pub id: Text<'a>,
    #[serde(borrow, default)]
    pub name: Text<'a>,
    /// `tool_use`: the whole input in a whole body, `{}` at the start of a streamed block.
    #[serde(default)]
    pub input: Option<serde_json::Value>,
}

/// A `content_block_delta`'s delta (`text_delta`, `thinking_delta`, `signature_delta`,
/// `input_json_delta`, `citations_delta`) or a `message_delta`'s delta (`stop_reason`).
#[derive(Deserialize)]
pub struct Delta<'a> {
    #[serde(borrow, default)]
    pub text: Text<'a>,
    #[serde(borrow, default)]
    pub thinking: Text<'a>,
    #[serde(borrow, default)]
    pub signature: Text<'a>,
    #[serde(borrow, default)]
    pub partial_json: Text<'a>,
    #[serde(borrow, default)]
    pub stop_reason: Text<'a>,
}

/// Token counts; gateways send `null` for what they do not know.
#[derive(Deserialize)]
pub struct WireUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens_details: Option<OutputDetails>,
}

impl WireUsage {
    /// In our vocabulary: cache reads are cached input, thinking tokens reasoning.
    pub fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cached_input_tokens: self.cache_read_input_tokens,
            cache_creation_input_tokens: self.cache_creation_input_tokens,
            reasoning_tokens: self
                .output_tokens_details
                .as_ref()
                .and_then(|d| d.thinking_tokens),
        }
    }
}

#[derive(Deserialize)]
pub struct OutputDetails {
    #[serde(default)]
    pub thinking_tokens: Option<u64>,
}

/// `{"type": "overloaded_error", "message": "Overloaded"}`.
#[derive(Deserialize)]
pub struct WireError<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Text<'a>,
    #[serde(borrow, default)]
    pub message: Text<'a>,
}

fn null_as_empty<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<Vec<T>>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// An optional string field: a JSON string borrowed when it can be; `null`, absence or a
/// value of any other type read as `None`.
pub use crate::protocols::shared::LooseText as Text;
