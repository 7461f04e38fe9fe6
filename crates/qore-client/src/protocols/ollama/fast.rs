//! The fast path for the line shape that makes up nearly every streamed Ollama answer:
//! `{"model": ..., "created_at": ..., "message": {"role": ..., "content": ..., "thinking": ...},
//! "done": false}`.
//!
//! Read with the shared [`Scanner`] (see `protocols/json_scan.rs` for why it is
//! hand-written); it reads the same values the serde path reads into its borrowed
//! [`super::wire::ChatLine`] (the model, the message's text and thinking, as `Cow`s that
//! borrow from the line when they have no escapes), and the decoder turns them into events
//! with the same methods.
//!
//! Contract: [`parse`] returns `Some` only when the whole line is valid JSON (RFC 8259, with
//! the input already known to be UTF-8) of a shape it fully understands: an object with a
//! string or null `model`, a null or object `message` whose `content` / `thinking` are
//! strings or null and whose `tool_calls` is null or empty, `"done": false`, a null or
//! absent `error`, and none of the fields of the last line (`done_reason`,
//! `prompt_eval_count`, `eval_count`); no duplicate keys it reads; every other key skipped
//! (its value checked by [`Scanner::skip`]). Anything else, invalid JSON, tool calls and
//! the `done: true` line included, returns `None` and the caller decodes the line with the
//! serde path, which also reports errors. It has no side effects, so falling back is free.
//!
//! Ollama writes every such line with the same keys in the same order and no whitespace, so
//! [`parse`] first tries that exact layout ([`ollama_layout`]: keys compared as literals, no
//! key dispatch), then the general reader ([`any_layout`]) for every other layout.

use std::borrow::Cow;

use crate::protocols::json_scan::Scanner;

/// What a line of the common shape says: the fields of [`super::wire::ChatLine`] the serde
/// path would fill (its `message`'s text and thinking, and the model), kept small so that
/// taking the fast path moves no large struct around.
#[derive(Default)]
pub struct FastLine<'a> {
    pub model: Option<Cow<'a, str>>,
    pub content: Option<Cow<'a, str>>,
    pub thinking: Option<Cow<'a, str>>,
}

/// Decode `data` if it has the common shape; `None` otherwise (see the module doc).
pub fn parse(data: &str) -> Option<FastLine<'_>> {
    ollama_layout(data).or_else(|| any_layout(data))
}

/// The layout Ollama writes: `{"model":…,"created_at":…,"message":{"role":…,"content":…`
/// (`,"thinking":…`) `},"done":false}`, values of any JSON form where they are skipped.
/// Each key appears once, so there are no duplicates to look for.
fn ollama_layout(data: &str) -> Option<FastLine<'_>> {
    let mut r = Scanner::new(data);
    r.literal(br#"{"model":"#)?;
    let model = r.opt_str()?;
    r.literal(br#","created_at":"#)?;
    r.skip(0)?;
    r.literal(br#","message":{"role":"#)?;
    r.skip(0)?;
    r.literal(br#","content":"#)?;
    let content = r.opt_str()?;
    let thinking = match r.literal(br#","thinking":"#) {
        Some(()) => r.opt_str()?,
        None => None,
    };
    r.literal(br#"},"done":false}"#)?;
    r.at_end().then_some(FastLine {
        model,
        content,
        thinking,
    })
}

/// Any layout of the common shape, read key by key.
fn any_layout(data: &str) -> Option<FastLine<'_>> {
    let mut r = Scanner::new(data);
    let mut line = FastLine::default();
    r.object_once(|r, key| match key {
        b"model" => {
            line.model = r.opt_str()?;
            Some(1)
        }
        b"message" => {
            r.nullable(|r| message(r, &mut line))?;
            Some(2)
        }
        // The last line (and its counters) stays with serde.
        b"done" => (!r.bool()?).then_some(4),
        b"error" => r.null().map(|()| 8),
        b"done_reason" | b"prompt_eval_count" | b"eval_count" => None,
        _ => r.skip(0).map(|()| 0),
    })?;
    r.at_end().then_some(line)
}

/// `{"role": ..., "content": ..., "thinking": ..., "tool_calls": null | []}`.
fn message<'a>(r: &mut Scanner<'a>, line: &mut FastLine<'a>) -> Option<()> {
    r.object_once(|r, key| match key {
        b"content" => {
            line.content = r.opt_str()?;
            Some(1)
        }
        b"thinking" => {
            line.thinking = r.opt_str()?;
            Some(2)
        }
        // Whole calls (arguments as JSON values) are serde's job; an empty list is not.
        b"tool_calls" => r.nullable(|r| r.array(|_| None)).map(|_| 4),
        _ => r.skip(0).map(|()| 0),
    })
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
