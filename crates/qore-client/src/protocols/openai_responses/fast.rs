//! The fast path for the events that make up nearly every streamed response: the deltas
//! (`response.output_text.delta`, `response.reasoning_summary_text.delta`,
//! `response.reasoning_text.delta`, `response.function_call_arguments.delta`,
//! `response.refusal.delta`), `{"type": ..., "item_id": ..., "output_index": ...,
//! "content_index"/"summary_index": ..., "delta": "...", ...}`, and the other small events
//! that carry no whole item or response (`.done` texts and arguments, parts opening and
//! closing).
//!
//! Read with the shared [`Scanner`] (see `protocols/json_scan.rs` for why it is
//! hand-written); it builds the same borrowed [`WireEvent`] the serde path builds, and the
//! decoder handles both alike from there, so the two paths cannot disagree on what an
//! event means.
//!
//! Contract: [`parse`] returns `Some` only when the whole payload is valid JSON (RFC 8259,
//! with the input already known to be UTF-8) of a shape it fully understands: one object
//! whose `type` and `item_id` are strings or null, `output_index`/`content_index`/
//! `summary_index` integers that fit a `u32` or null, `delta`/`text`/`refusal`/`arguments`
//! strings or null, `item` and `response` absent or null, none of these keys twice, and
//! any other key skipped with [`Scanner::skip`] (as serde ignores it). Anything else
//! (an event with a whole item or response, text as an object, invalid JSON, a key with
//! escapes) returns `None` and the caller decodes the payload with the serde path, which
//! also reports errors. It has no side effects, so falling back is free.

use std::borrow::Cow;

use super::wire::{Arguments, LooseText, WireEvent};
use crate::protocols::{json_scan::Scanner, shared};

/// Decode `data` if it has a shape the fast path reads; `None` otherwise (see the module
/// doc).
#[inline]
pub fn parse(data: &str) -> Option<WireEvent<'_>> {
    let mut r = Scanner::new(data);
    let mut event = WireEvent {
        kind: None,
        item_id: None,
        output_index: None,
        content_index: None,
        summary_index: None,
        delta: None,
        text: None,
        refusal: None,
        arguments: None,
        item: None,
        response: None,
    };
    r.object_once(|r, key| match key {
        b"type" => {
            event.kind = r.opt_str()?;
            Some(1)
        }
        b"item_id" => {
            event.item_id = r.opt_str()?;
            Some(2)
        }
        b"output_index" => {
            event.output_index = r.nullable(Scanner::index)?;
            Some(4)
        }
        b"content_index" => {
            event.content_index = r.nullable(Scanner::index)?;
            Some(8)
        }
        b"summary_index" => {
            event.summary_index = r.nullable(Scanner::index)?;
            Some(16)
        }
        b"delta" => {
            event.delta = loose_text(r)?;
            Some(32)
        }
        b"text" => {
            event.text = loose_text(r)?;
            Some(64)
        }
        b"refusal" => {
            event.refusal = loose_text(r)?;
            Some(128)
        }
        b"arguments" => {
            event.arguments = r.opt_str()?.map(Arguments);
            Some(256)
        }
        // A whole item or response: serde's job (only `null` is read here).
        b"item" => r.null().map(|()| 512),
        b"response" => r.null().map(|()| 1024),
        _ => r.skip(0).map(|()| 0),
    })?;
    r.at_end().then_some(event)
}

/// A string or `null` where the serde path reads a [`LooseText`]; its other shapes (an
/// object with a `text`, any other value) are left to serde.
fn loose_text<'a>(r: &mut Scanner<'a>) -> Option<Option<LooseText<'a>>> {
    let text: Option<Cow<'a, str>> = r.opt_str()?;
    Some(text.map(|text| shared::LooseText(Some(text))))
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
