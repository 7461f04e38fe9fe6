//! The Responses API shapes, borrowed from the frame (or body) being decoded.
//!
//! [`WireEvent`] is one streamed event: every field any event kind carries, all optional, so
//! one flat struct reads them all; strings are `Cow`s that borrow from the frame when they
//! contain no escapes, so a text delta costs no allocation before it becomes the event's
//! own text. The `response` object of lifecycle events ([`WireResponse`], a handful per
//! response) is read for its id, model, status, usage, error and output items; the rest of
//! it (the echoed instructions and tools) is skipped unread, as are all unknown fields.

use std::borrow::Cow;

use serde::Deserialize;

pub use crate::protocols::shared::Arguments;

/// One streamed event (`{"type": "response.output_text.delta", ...}`).
#[derive(Deserialize)]
pub struct WireEvent<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub item_id: Option<Cow<'a, str>>,
    #[serde(default)]
    pub output_index: Option<u32>,
    #[serde(default)]
    pub content_index: Option<u32>,
    #[serde(default)]
    pub summary_index: Option<u32>,
    /// Text deltas; an object in some early reasoning events (its `text` is read).
    #[serde(borrow, default)]
    pub delta: Option<LooseText<'a>>,
    /// `.done` events: the whole text of the part.
    #[serde(borrow, default)]
    pub text: Option<LooseText<'a>>,
    #[serde(borrow, default)]
    pub refusal: Option<LooseText<'a>>,
    /// `response.function_call_arguments.done`: the final arguments.
    #[serde(borrow, default)]
    pub arguments: Option<Arguments<'a>>,
    /// Boxed, as is `response`: a handful per response, and the event that carries every
    /// delta stays small to move.
    #[serde(borrow, default)]
    pub item: Option<Box<WireItem<'a>>>,
    #[serde(borrow, default)]
    pub response: Option<Box<WireResponse<'a>>>,
}

/// The parts of a `response` object the decoder reads (lifecycle events, whole bodies).
#[derive(Deserialize, Default)]
pub struct WireResponse<'a> {
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub status: Option<Cow<'a, str>>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(borrow, default)]
    pub incomplete_details: Option<IncompleteDetails<'a>>,
    /// `{"code", "message"}` of a failed response; `null` otherwise (rare: built as a value).
    #[serde(default)]
    pub error: Option<serde_json::Value>,
    #[serde(borrow, default)]
    pub output: Option<Vec<WireItem<'a>>>,
}

#[derive(Deserialize)]
pub struct IncompleteDetails<'a> {
    #[serde(borrow, default)]
    pub reason: Option<Cow<'a, str>>,
}

/// One output item: `message`, `reasoning`, `function_call` (others are skipped).
#[derive(Deserialize, Default)]
pub struct WireItem<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Option<Cow<'a, str>>,
    /// `msg_…`, `rs_…`, `fc_…`: the item's own id.
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    /// A function call's id, the one `function_call_output` refers to.
    #[serde(borrow, default)]
    pub call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub arguments: Option<Arguments<'a>>,
    #[serde(borrow, default)]
    pub encrypted_content: Option<Cow<'a, str>>,
    /// Reasoning summary parts (`summary_text`).
    #[serde(borrow, default)]
    pub summary: Option<Vec<WirePart<'a>>>,
    /// Message parts (`output_text`, `refusal`) or reasoning text (`reasoning_text`).
    #[serde(borrow, default)]
    pub content: Option<Vec<WirePart<'a>>>,
}

#[derive(Deserialize)]
pub struct WirePart<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub text: Option<LooseText<'a>>,
    #[serde(borrow, default)]
    pub refusal: Option<LooseText<'a>>,
}

#[derive(Deserialize)]
pub struct WireUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub input_tokens_details: Option<TokenDetails>,
    #[serde(default)]
    pub output_tokens_details: Option<TokenDetails>,
}

#[derive(Deserialize)]
pub struct TokenDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
    #[serde(default)]
    pub cache_write_tokens: Option<u64>,
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

/// Text that is a string on the wire, tolerated as an object with a `text` field or as any
/// other value (which reads as no text) so one odd field never fails the whole frame.
pub type LooseText<'a> = crate::protocols::shared::LooseText<'a, true>;
