//! The fast path for the chunk shape that makes up nearly every streamed llama.cpp
//! `/completion` (or `/infill`) answer: `{"index": 0, "content": ..., "tokens": [...],
//! "stop": false, "id_slot": ..., "tokens_predicted": N, "tokens_evaluated": M}`.
//!
//! Read with the shared [`Scanner`] (see `protocols/json_scan.rs` for why it is
//! hand-written); it reads the same values the serde path reads into its borrowed
//! [`super::wire::CompletionChunk`] (the text and the model, as `Cow`s that borrow from the
//! frame when they have no escapes; the counters are checked, their values not kept, as a
//! chunk with `stop: false` makes no use of them), and the decoder turns them into events
//! with the same methods.
//!
//! Contract: [`parse`] returns `Some` only when the whole payload is valid JSON (RFC 8259,
//! with the input already known to be UTF-8) of a shape it fully understands: an object
//! with `"stop": false`, string or null `content` / `stop_type` / `model`, boolean
//! `stopped_word` / `stopped_limit`, `tokens_predicted` / `tokens_evaluated` null or plain
//! non-negative integers that fit a `u64`, null or absent `timings` and `error`; no
//! duplicate keys it reads; every other key skipped (its value checked by
//! [`Scanner::skip`]). Anything else, invalid JSON and the `stop: true` chunk included,
//! returns `None` and the caller decodes the payload with the serde path, which also
//! reports errors. It has no side effects, so falling back is free.
//!
//! The server writes every such chunk with the same keys in the same order and no
//! whitespace, so [`parse`] first tries that exact layout ([`server_layout`]: keys compared
//! as literals, no key dispatch), then the general reader ([`any_layout`]).

use std::borrow::Cow;

use crate::protocols::json_scan::Scanner;

/// What a chunk of the common shape says: the fields of [`super::wire::CompletionChunk`]
/// the decoder uses for a chunk with `stop: false`, kept small so that taking the fast path
/// moves no large struct around.
#[derive(Default)]
pub struct FastChunk<'a> {
    pub content: Option<Cow<'a, str>>,
    pub model: Option<Cow<'a, str>>,
}

/// Decode `data` if it has the common shape; `None` otherwise (see the module doc).
pub fn parse(data: &str) -> Option<FastChunk<'_>> {
    server_layout(data).or_else(|| any_layout(data))
}

/// The layout the server writes: `{"index":…,"content":…,"tokens":…,"stop":false,
/// "id_slot":…,"tokens_predicted":…,"tokens_evaluated":…}`, values of any JSON form where
/// they are skipped. Each key appears once, so there are no duplicates to look for.
fn server_layout(data: &str) -> Option<FastChunk<'_>> {
    let mut r = Scanner::new(data);
    r.literal(br#"{"index":"#)?;
    r.skip(0)?;
    r.literal(br#","content":"#)?;
    let content = r.opt_str()?;
    r.literal(br#","tokens":"#)?;
    r.skip(0)?;
    r.literal(br#","stop":false,"id_slot":"#)?;
    r.skip(0)?;
    r.literal(br#","tokens_predicted":"#)?;
    count(&mut r)?;
    r.literal(br#","tokens_evaluated":"#)?;
    count(&mut r)?;
    r.literal(b"}")?;
    r.at_end().then_some(FastChunk {
        content,
        model: None,
    })
}

/// Any layout of the common shape, read key by key.
fn any_layout(data: &str) -> Option<FastChunk<'_>> {
    let mut r = Scanner::new(data);
    let mut chunk = FastChunk::default();
    r.object_once(|r, key| match key {
        b"content" => {
            chunk.content = r.opt_str()?;
            Some(1)
        }
        // The last chunk (usage, stop reason) stays with serde.
        b"stop" => (!r.bool()?).then_some(2),
        // Read (serde would reject another type), not kept: used by the last chunk only.
        b"stop_type" => r.opt_str().map(|_| 4),
        b"stopped_word" => r.bool().map(|_| 8),
        b"stopped_limit" => r.bool().map(|_| 16),
        b"tokens_evaluated" => count(r).map(|_| 32),
        b"tokens_predicted" => count(r).map(|_| 64),
        b"model" => {
            chunk.model = r.opt_str()?;
            Some(128)
        }
        b"timings" => r.null().map(|()| 256),
        b"error" => r.null().map(|()| 512),
        _ => r.skip(0).map(|()| 0),
    })?;
    r.at_end().then_some(chunk)
}

/// `null` or a count: a plain non-negative integer (no sign, fraction or exponent) that
/// fits a `u64`, which serde reads as the same `u64`; anything else is left to serde.
fn count(r: &mut Scanner<'_>) -> Option<Option<u64>> {
    r.nullable(|r| {
        let text = r.number()?;
        text.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| text.parse().ok())?
    })
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
