//! Decoding one chunk (or a whole response) straight into the decoder, without building it.
//!
//! Why not `#[derive(Deserialize)]` on the chunk: the derived chunk → choices → delta tree is
//! over 600 bytes that serde moves through several `Option` layers per chunk, which showed up
//! as the largest cost of stream decoding (memmove, measured with perf). Here the chunk and its
//! choices are visited with [`DeserializeSeed`]s that hand each choice's `delta` (or
//! `message`) to a [`ChoiceSink`] (the stream decoder) as soon as it is read; only the small leaf shapes of
//! [`super::wire`] are built. Keys we do not act on are skipped unread ([`IgnoredAny`]).
//!
//! A choice's `index` normally comes before its `delta`; when it comes after, the delta is
//! held until the index is known, so only the first choice (index 0) ever reaches the decoder.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;

use qore_core::ResponseEvent;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::wire::{Delta, WireUsage};

/// What a chunk's first choice is handed to as it is read (the stream decoder). This module
/// knows only this, never the decoder itself.
pub trait ChoiceSink {
    /// Whether the response's `MessageStart` is queued already.
    fn started(&self) -> bool;
    /// Queue the `MessageStart` of this response; returns its position in `out`.
    fn start(&mut self, out: &mut VecDeque<ResponseEvent>) -> usize;
    /// The first choice's delta (or whole message).
    fn delta(&mut self, delta: &Delta<'_>, out: &mut VecDeque<ResponseEvent>);
    /// The first choice finished, for `reason`.
    fn finish_reason(&mut self, reason: &str, out: &mut VecDeque<ResponseEvent>);
}

/// What a chunk carried besides its choices, for the decoder to finish the chunk with.
pub struct ChunkTail<'a> {
    pub id: Option<Cow<'a, str>>,
    pub model: Option<Cow<'a, str>>,
    /// Where a `MessageStart` was queued before `id` and `model` had been read.
    pub start_at: Option<usize>,
    pub usage: Option<WireUsage>,
    pub error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum ChunkField {
    Id,
    Model,
    Choices,
    Usage,
    Error,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum ChoiceField {
    Index,
    Delta,
    Message,
    FinishReason,
    #[serde(other)]
    Other,
}

/// Visits a chunk object; choices go to the decoder as they are read.
pub struct ChunkSeed<'s, S> {
    pub decoder: &'s mut S,
    pub out: &'s mut VecDeque<ResponseEvent>,
}

impl<'de, S: ChoiceSink> DeserializeSeed<'de> for ChunkSeed<'_, S> {
    type Value = ChunkTail<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, S: ChoiceSink> Visitor<'de> for ChunkSeed<'_, S> {
    type Value = ChunkTail<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Chat Completions chunk object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let ChunkSeed { decoder, out } = self;
        let first = !decoder.started();
        let mut tail = ChunkTail {
            id: None,
            model: None,
            start_at: None,
            usage: None,
            error: None,
        };
        while let Some(field) = map.next_key::<ChunkField>()? {
            match field {
                ChunkField::Id if first => tail.id = map.next_value()?,
                ChunkField::Model if first => tail.model = map.next_value()?,
                ChunkField::Choices => {
                    if first && tail.start_at.is_none() {
                        tail.start_at = Some(decoder.start(out));
                    }
                    map.next_value_seed(ChoicesSeed {
                        decoder: &mut *decoder,
                        out: &mut *out,
                    })?;
                }
                ChunkField::Usage => tail.usage = map.next_value()?,
                ChunkField::Error => tail.error = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(tail)
    }
}

struct ChoicesSeed<'s, S> {
    decoder: &'s mut S,
    out: &'s mut VecDeque<ResponseEvent>,
}

impl<'de, S: ChoiceSink> DeserializeSeed<'de> for ChoicesSeed<'_, S> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, S: ChoiceSink> Visitor<'de> for ChoicesSeed<'_, S> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of choices or null")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let ChoicesSeed { decoder, out } = self;
        while seq
            .next_element_seed(ChoiceSeed {
                decoder: &mut *decoder,
                out: &mut *out,
            })?
            .is_some()
        {}
        Ok(())
    }
}

struct ChoiceSeed<'s, S> {
    decoder: &'s mut S,
    out: &'s mut VecDeque<ResponseEvent>,
}

impl<'de, S: ChoiceSink> DeserializeSeed<'de> for ChoiceSeed<'_, S> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, S: ChoiceSink> Visitor<'de> for ChoiceSeed<'_, S> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a choice object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let ChoiceSeed { decoder, out } = self;
        let mut index: Option<u32> = None;
        let mut finish: Option<Cow<'de, str>> = None;
        let mut held: Option<Delta<'de>> = None;
        while let Some(field) = map.next_key::<ChoiceField>()? {
            match field {
                ChoiceField::Index => index = map.next_value()?,
                ChoiceField::Delta | ChoiceField::Message => match index {
                    Some(0) => {
                        if let Some(delta) = map.next_value::<Option<Delta<'de>>>()? {
                            decoder.delta(&delta, out);
                        }
                    }
                    None => held = map.next_value()?,
                    Some(_) => {
                        map.next_value::<IgnoredAny>()?;
                    }
                },
                ChoiceField::FinishReason => finish = map.next_value()?,
                ChoiceField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if index.unwrap_or(0) != 0 {
            return Ok(()); // n > 1: only the first choice is the assistant's turn
        }
        if let Some(delta) = held {
            decoder.delta(&delta, out);
        }
        if let Some(reason) = finish {
            decoder.finish_reason(&reason, out);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// The chunk visitor is the lower module: it names nothing of the stream decoder above it.
    #[test]
    fn names_nothing_of_the_stream_decoder() {
        let source = include_str!("chunk.rs");
        for upper in [
            concat!("super::", "stream"),
            concat!("ChatStream", "Decoder"),
        ] {
            assert!(!source.contains(upper), "chunk.rs names {upper}");
        }
    }
}
