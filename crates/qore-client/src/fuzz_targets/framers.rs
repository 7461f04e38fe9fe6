//! The framer targets: the SSE and NDJSON framers against plain reference readings of the
//! spec, at the input's chunking, whole and byte by byte.

use std::convert::Infallible;

use super::chunked;
use crate::transport::framing::Framer;
use crate::transport::ndjson::NdjsonFramer;
use crate::transport::sse::{SseFrame, SseFramer};

/// A frame, owned: its event name and its data.
pub type Frame = (Option<String>, String);

/// The SSE framer target (see the module doc of [`super`]).
pub fn sse_framer(data: &[u8]) {
    let (body, chunks) = chunked(data);
    let expected = sse_reference(&String::from_utf8_lossy(body));
    check(&expected, body, &chunks, || Framer::Sse(SseFramer::new()));
}

/// The NDJSON framer target.
pub fn ndjson_framer(data: &[u8]) {
    let (body, chunks) = chunked(data);
    let expected = ndjson_reference(&String::from_utf8_lossy(body));
    check(&expected, body, &chunks, || {
        Framer::Ndjson(NdjsonFramer::new())
    });
}

fn check(expected: &[Frame], body: &[u8], chunks: &[&[u8]], framer: impl Fn() -> Framer) {
    assert_eq!(run(framer(), &[body]), expected, "whole body");
    assert_eq!(run(framer(), chunks), expected, "chunks {chunks:?}");
    let mut singles: Vec<&[u8]> = Vec::with_capacity(body.len() * 2);
    for byte in body.chunks(1) {
        singles.extend([byte, b""]);
    }
    assert_eq!(run(framer(), &singles), expected, "one byte at a time");
}

/// Feed `chunks` in order, then finish; every frame, owned.
fn run(mut framer: Framer, chunks: &[&[u8]]) -> Vec<Frame> {
    let mut out = Vec::new();
    let mut own = |f: SseFrame<'_>| {
        out.push((f.event.map(str::to_owned), f.data.to_owned()));
        Ok::<_, Infallible>(())
    };
    for chunk in chunks {
        framer
            .feed(chunk, &mut own)
            .unwrap_or_else(|never| match never {});
    }
    framer
        .finish(&mut own)
        .unwrap_or_else(|never| match never {});
    out
}

/// The SSE spec, written as plainly as possible: normalise line ends, split into lines.
pub fn sse_reference(body: &str) -> Vec<Frame> {
    let body = body.strip_prefix('\u{feff}').unwrap_or(body);
    let body = body.replace("\r\n", "\n").replace('\r', "\n");
    let mut frames = Vec::new();
    let mut data: Option<String> = None;
    let mut event = String::new();
    for line in body.split('\n') {
        if line.is_empty() {
            if let Some(d) = data.take() {
                frames.push(((!event.is_empty()).then(|| event.clone()), d));
            }
            event.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (name, value) = match line.split_once(':') {
            Some((n, v)) => (n, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match name {
            "data" => match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_owned()),
            },
            "event" => event = value.to_owned(),
            _ => {}
        }
    }
    // End of body: a frame left open is still dispatched.
    if let Some(d) = data {
        frames.push(((!event.is_empty()).then_some(event), d));
    }
    frames
}

/// NDJSON, plainly: every line (LF-separated, one trailing CR dropped) that is not blank.
pub fn ndjson_reference(body: &str) -> Vec<Frame> {
    body.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .filter(|line| !line.chars().all(|c| matches!(c, ' ' | '\t' | '\r')))
        .map(|line| (None, line.to_owned()))
        .collect()
}
