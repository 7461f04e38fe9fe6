//! The fast path for the two events that make up nearly every streamed frame:
//! `content_block_delta` (`{"type": "content_block_delta", "index": 0, "delta": {"type":
//! "text_delta", "text": "..."}}`, also `thinking_delta`, `signature_delta` and
//! `input_json_delta`) and `ping`.
//!
//! Read with the shared [`Scanner`] (see `protocols/json_scan.rs` for why it is
//! hand-written); it builds the same borrowed [`Delta`] the serde path builds from a
//! [`super::wire::StreamEvent`], and the decoder hands it to the same `block_delta`.
//!
//! Contract: [`parse`] returns `Some` only when the whole payload is valid JSON (RFC 8259,
//! with the input already known to be UTF-8) of a shape it fully understands: an object whose
//! `type` is the string `content_block_delta` or `ping`, whose `index` is `null` or an
//! integer that fits a `u32`, whose `delta` is `null` or an object with `text`, `thinking`,
//! `signature`, `partial_json` and `stop_reason` each a string or `null`, with no
//! `message`, `content_block`, `usage` or `error` (left to serde, which also checks their
//! shape) and no duplicate keys it reads; every other key is skipped with
//! [`Scanner::skip`], as serde skips it. Anything else, invalid JSON included, returns `None`
//! and the caller decodes the payload with the serde path, which also reports errors. It has
//! no side effects, so falling back is free.

use super::wire::{Delta, Text};
use crate::protocols::json_scan::Scanner;

/// What a frame read by the fast path asks of the decoder.
pub enum FastEvent<'a> {
    /// Nothing: a `ping`, or a `content_block_delta` without a delta.
    Nothing,
    /// A `content_block_delta`: `delta` goes to the block at `index` (the serde path's
    /// `StreamEvent::index`, `None` when absent or `null`).
    BlockDelta(Option<u32>, Delta<'a>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    BlockDelta,
    Ping,
}

/// Decode `data` if it has one of the common shapes; `None` otherwise (see the module doc).
pub fn parse(data: &str) -> Option<FastEvent<'_>> {
    let mut r = Scanner::new(data);
    let mut kind = None;
    let mut index = None;
    let mut delta = None;
    r.object_once(|r, key| match key {
        b"type" => {
            kind = Some(match &*r.str()? {
                "content_block_delta" => Kind::BlockDelta,
                "ping" => Kind::Ping,
                _ => return None,
            });
            Some(1)
        }
        b"index" => {
            index = r.nullable(Scanner::index)?;
            Some(2)
        }
        b"delta" => {
            delta = r.nullable(read_delta)?;
            Some(4)
        }
        b"message" | b"content_block" | b"usage" | b"error" => None,
        _ => r.skip(0).map(|()| 0),
    })?;
    r.at_end().then_some(())?;
    match (kind?, delta) {
        (Kind::BlockDelta, Some(delta)) => Some(FastEvent::BlockDelta(index, delta)),
        _ => Some(FastEvent::Nothing),
    }
}

/// A delta object: its string fields as [`Text`], unknown keys (its `type`) skipped.
fn read_delta<'a>(r: &mut Scanner<'a>) -> Option<Delta<'a>> {
    let mut delta = Delta {
        text: Text(None),
        thinking: Text(None),
        signature: Text(None),
        partial_json: Text(None),
        stop_reason: Text(None),
    };
    r.object_once(|r, key| {
        let (field, bit) = match key {
            b"text" => (&mut delta.text, 1),
            b"thinking" => (&mut delta.thinking, 2),
            b"signature" => (&mut delta.signature, 4),
            b"partial_json" => (&mut delta.partial_json, 8),
            b"stop_reason" => (&mut delta.stop_reason, 16),
            _ => return r.skip(0).map(|()| 0),
        };
        *field = Text(r.opt_str()?);
        Some(bit)
    })?;
    Some(delta)
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
