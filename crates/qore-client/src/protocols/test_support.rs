//! What the codecs' unit tests share: feeding frames or a whole body to a decoder the way
//! [`crate::Client`] does (frames in order, then `finish`; a frame's `Err` ends the body),
//! and folding the events into a turn with [`MessageAssembler`], as the client's consumers
//! do. Helpers that expect success panic with what they got: they are part of the test.

use std::collections::VecDeque;

use qore_core::{
    ContentBlock, ErrorInfo, Message, MessageAssembler, ResponseEvent, StopReason, StreamOutcome,
    Usage,
};

use crate::codec::{FimRequest, RequestOptions, StreamDecoder};
use crate::transport::sse::SseFrame;

/// Feed `frames` (`event:` name, data) to `decoder`, then end the body: every event pushed,
/// and the first error (a frame's, which stops the feeding, or the end's).
pub fn decode_frames<'a>(
    mut decoder: impl StreamDecoder,
    frames: impl IntoIterator<Item = (Option<&'a str>, &'a str)>,
) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    let mut out = VecDeque::new();
    for (event, data) in frames {
        if let Err(err) = decoder.frame(SseFrame { event, data }, &mut out) {
            return (out.into(), Err(err));
        }
    }
    let end = decoder.finish(&mut out);
    (out.into(), end)
}

/// [`decode_frames`] with data-only frames (one per item: an SSE `data:` payload or an
/// NDJSON line).
pub fn decode<S: AsRef<str>>(
    decoder: impl StreamDecoder,
    data: &[S],
) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    decode_frames(decoder, data.iter().map(|d| (None, d.as_ref())))
}

/// Decode `data` with `fast` and with `serde_only` (the same decoder with its fast path
/// off): both must give the same events and the same end, which are returned.
pub fn decode_both_ways<S: AsRef<str>>(
    fast: impl StreamDecoder,
    serde_only: impl StreamDecoder,
    data: &[S],
) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    let with_fast = decode(fast, data);
    let without = decode(serde_only, data);
    assert_eq!(with_fast, without, "the fast path changed the events");
    with_fast
}

/// The events of a whole (non-streamed) body.
pub fn decode_body(
    mut decoder: impl StreamDecoder,
    body: &[u8],
) -> Result<Vec<ResponseEvent>, ErrorInfo> {
    let mut out = VecDeque::new();
    decoder.body(body, &mut out)?;
    Ok(out.into())
}

/// The turn the events fold into.
pub fn fold(events: &[ResponseEvent]) -> StreamOutcome {
    let mut assembler = MessageAssembler::new();
    events.iter().for_each(|e| assembler.apply(e));
    assembler.finish()
}

/// The message, stop reason and usage of the finished turn the events fold into; any other
/// outcome fails the test, showing it and the events.
pub fn finished(events: &[ResponseEvent]) -> (Message, Option<StopReason>, Usage) {
    match fold(events) {
        StreamOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => (message, stop_reason, usage),
        other => panic!("not finished: {other:?}\n{events:?}"),
    }
}

/// [`finished`], with the message's blocks.
pub fn finished_blocks(events: &[ResponseEvent]) -> (Vec<ContentBlock>, Option<StopReason>, Usage) {
    let (message, stop_reason, usage) = finished(events);
    (message.blocks, stop_reason, usage)
}

/// The near misses of a payload a fast path must refuse or read exactly as serde does:
/// every proper prefix of `base` (a payload cut short) and `base` with the byte at each
/// position replaced by each of `bytes`, wherever the result is still UTF-8.
pub fn near_misses(base: &str, bytes: &[u8]) -> Vec<String> {
    let mut misses: Vec<String> = (0..base.len())
        .filter_map(|end| base.get(..end))
        .map(str::to_owned)
        .collect();
    for at in 0..base.len() {
        for &byte in bytes {
            let mut text = base.as_bytes().to_vec();
            text[at] = byte;
            if let Ok(text) = String::from_utf8(text) {
                misses.push(text);
            }
        }
    }
    misses
}

/// A fill-in-the-middle request for `model`: prefix `def add(a, b):\n    return `, suffix
/// `\n`, no open files.
pub fn fim_request<'a>(model: &'a str, options: &'a RequestOptions) -> FimRequest<'a> {
    FimRequest {
        model,
        prefix: "def add(a, b):\n    return ",
        suffix: "\n",
        extra: &[],
        options,
    }
}

/// The options of the fill-in-the-middle encoder tests: 32 tokens at most, temperature 0,
/// and `extra`'s fields.
pub fn fim_options(extra: &[(&str, serde_json::Value)]) -> RequestOptions {
    RequestOptions {
        max_tokens: Some(32),
        temperature: Some(0.0),
        extra: (extra.iter())
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        ..RequestOptions::default()
    }
}

/// The error a decoding ended with: the end's, else the first error event.
pub fn first_error(events: &[ResponseEvent], end: Result<(), ErrorInfo>) -> Option<ErrorInfo> {
    end.err().or_else(|| {
        events.iter().find_map(|e| match e {
            ResponseEvent::Error { error } => Some(error.clone()),
            _ => None,
        })
    })
}
