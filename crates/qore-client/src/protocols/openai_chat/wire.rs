//! The Chat Completions response shapes, borrowed from the frame being decoded.
//!
//! The leaf shapes of a chunk (the chunk and its choices are visited by [`super::chunk`]).
//! Strings are `Cow`s that borrow from the frame whenever they contain no escapes, and
//! `tool_calls` live in an inline small vector, so decoding a typical delta allocates
//! nothing. Unknown fields are skipped without being built.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use smallvec::SmallVec;

use crate::protocols::shared::visit_strings;
pub use crate::protocols::shared::Arguments;

/// A choice's `delta` (streamed) or `message` (whole response): the same shape.
#[derive(Deserialize)]
pub struct Delta<'a> {
    #[serde(borrow, default)]
    pub content: Option<Content<'a>>,
    /// DeepSeek (and vLLM, llama.cpp with reasoning formats).
    #[serde(borrow, default)]
    pub reasoning_content: Option<Cow<'a, str>>,
    /// OpenRouter.
    #[serde(borrow, default)]
    pub reasoning: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub refusal: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub tool_calls: Option<SmallVec<[ToolCallDelta<'a>; 1]>>,
}

#[derive(Deserialize)]
pub struct ToolCallDelta<'a> {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
pub struct FunctionDelta<'a> {
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub arguments: Option<Arguments<'a>>,
}

#[derive(Deserialize)]
pub struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    #[serde(default)]
    pub prompt_tokens_details: Option<TokenDetails>,
    #[serde(default)]
    pub completion_tokens_details: Option<TokenDetails>,
    /// DeepSeek's name for cached input tokens.
    #[serde(default)]
    pub prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize)]
pub struct TokenDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

/// `content`: a string, or an array of parts (Magistral's `thinking` parts among them).
pub enum Content<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<ContentPart<'a>>),
}

#[derive(Deserialize)]
pub struct ContentPart<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub text: Option<Cow<'a, str>>,
    /// Magistral: `{"type": "thinking", "thinking": [{"type": "text", "text": "..."}]}`.
    #[serde(borrow, default)]
    pub thinking: Option<Content<'a>>,
}

struct TextOrParts<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for TextOrParts<'a> {
    type Value = Content<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string or an array of content parts")
    }

    visit_strings!(Content::Text);

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut parts = Vec::new();
        while let Some(part) = seq.next_element()? {
            parts.push(part);
        }
        Ok(Content::Parts(parts))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TextOrParts(PhantomData))
    }
}
