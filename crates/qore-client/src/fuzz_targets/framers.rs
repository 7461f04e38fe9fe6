//! The framer targets: the SSE and NDJSON framers against plain reference readings of the
//! spec, at the input's chunking, whole and byte by byte. The end of a body follows the
//! framers' rule (`transport::sse::StreamEnd`): a last line without its line end that was
//! cut ([`StreamEnd::MidLine`]) is not dispatched, so neither is the frame it left open; a
//! body that ends with a line end always ends clean.

use std::convert::Infallible;

use super::chunked;
use crate::transport::ndjson::NdjsonFramer;
use crate::transport::sse::{SseFrame, SseFramer, StreamEnd};

/// A frame, owned: its event name and its data.
pub type Frame = (Option<String>, String);

/// The SSE framer target (see the module doc of [`super`]).
pub fn sse_framer(data: &[u8]) {
    let (body, chunks) = chunked(data);
    let reference = sse_reading(&String::from_utf8_lossy(body));
    let line_ended = body.ends_with(b"\n") || body.ends_with(b"\r");
    check(Wire::Sse, reference, line_ended, body, &chunks);
}

/// The NDJSON framer target.
pub fn ndjson_framer(data: &[u8]) {
    let (body, chunks) = chunked(data);
    let text = String::from_utf8_lossy(body);
    let frames = ndjson_reference(&text);
    let last = text.rsplit('\n').next().unwrap_or_default();
    let open_at_end = !last.chars().all(|c| matches!(c, ' ' | '\t' | '\r'));
    check(
        Wire::Ndjson,
        (frames, open_at_end),
        body.ends_with(b"\n"),
        body,
        &chunks,
    );
}

#[derive(Clone, Copy)]
enum Wire {
    Sse,
    Ndjson,
}

/// `reference`: the frames, and whether the last one was left open by the end of the body.
fn check(
    wire: Wire,
    reference: (Vec<Frame>, bool),
    line_ended: bool,
    body: &[u8],
    chunks: &[&[u8]],
) {
    let (whole, end) = run(wire, &[body]);
    if line_ended {
        assert_eq!(end, StreamEnd::Clean, "a body ending with a line end");
    }
    let (mut expected, open_at_end) = reference;
    if end == StreamEnd::MidLine && open_at_end {
        expected.pop();
    }
    assert_eq!(whole, expected, "whole body ({end:?})");
    assert_eq!(
        run(wire, chunks),
        (expected.clone(), end),
        "chunks {chunks:?}"
    );
    let mut singles: Vec<&[u8]> = Vec::with_capacity(body.len() * 2);
    for byte in body.chunks(1) {
        singles.extend([byte, b""]);
    }
    assert_eq!(run(wire, &singles), (expected, end), "one byte at a time");
}

/// Feed `chunks` in order, then finish; every frame, owned, and how the body ended.
fn run(wire: Wire, chunks: &[&[u8]]) -> (Vec<Frame>, StreamEnd) {
    let mut out = Vec::new();
    let mut own = |f: SseFrame<'_>| {
        out.push((f.event.map(str::to_owned), f.data.to_owned()));
        Ok::<_, Infallible>(())
    };
    let end = match wire {
        Wire::Sse => {
            let mut framer = SseFramer::new();
            for chunk in chunks {
                framer.feed(chunk, &mut own).unwrap_or_else(|n| match n {});
            }
            framer.finish(&mut own)
        }
        Wire::Ndjson => {
            let mut framer = NdjsonFramer::new();
            for chunk in chunks {
                framer.feed(chunk, &mut own).unwrap_or_else(|n| match n {});
            }
            framer.finish(&mut own)
        }
    };
    (out, end.unwrap_or_else(|n| match n {}))
}

/// The SSE spec, written as plainly as possible: normalise line ends, split into lines.
pub fn sse_reference(body: &str) -> Vec<Frame> {
    sse_reading(body).0
}

/// [`sse_reference`], and whether its last frame was left open by the end of the body.
fn sse_reading(body: &str) -> (Vec<Frame>, bool) {
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
    // End of body: a frame left open is still dispatched (when its last line was whole).
    let open_at_end = data.is_some();
    if let Some(d) = data {
        frames.push(((!event.is_empty()).then_some(event), d));
    }
    (frames, open_at_end)
}

/// NDJSON, plainly: every line (LF-separated, one trailing CR dropped) that is not blank.
pub fn ndjson_reference(body: &str) -> Vec<Frame> {
    body.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .filter(|line| !line.chars().all(|c| matches!(c, ' ' | '\t' | '\r')))
        .map(|line| (None, line.to_owned()))
        .collect()
}
