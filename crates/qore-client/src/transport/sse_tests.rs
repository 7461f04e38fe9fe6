//! The SSE framer by the event-stream rules: fields, line ends, BOM, UTF-8, the end of a
//! body and borrowing from the chunk; the multi-byte cases at every split of their bytes.

use super::*;
use crate::fuzz_targets::sse_reference as reference;
use std::convert::Infallible;

use crate::fuzz_targets::Frame;

fn own(f: SseFrame<'_>) -> Frame {
    (f.event.map(str::to_owned), f.data.to_owned())
}

/// Feed `chunks` in order, then finish; collect every frame.
fn run(chunks: &[&[u8]]) -> Vec<Frame> {
    let mut framer = SseFramer::new();
    let mut out = Vec::new();
    for chunk in chunks {
        framer
            .feed(chunk, |f| {
                out.push(own(f));
                Ok::<_, Infallible>(())
            })
            .unwrap();
    }
    let _ = framer
        .finish(|f| {
            out.push(own(f));
            Ok::<_, Infallible>(())
        })
        .unwrap();
    out
}

fn whole(body: &str) -> Vec<Frame> {
    run(&[body.as_bytes()])
}

fn frame(event: Option<&str>, data: &str) -> Frame {
    (event.map(str::to_owned), data.to_owned())
}

/// Whole, split in two at every offset, and one byte at a time: all equal the reference.
fn check_every_split(name: &str, body: &str) {
    let expected = reference(body);
    assert!(!expected.is_empty(), "{name}: no frames in body");
    assert_eq!(whole(body), expected, "{name}: whole body");
    let bytes = body.as_bytes();
    for at in 0..=bytes.len() {
        let (a, b) = bytes.split_at(at);
        assert_eq!(run(&[a, b]), expected, "{name}: split at byte {at}");
    }
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(run(&singles), expected, "{name}: one byte at a time");
    // Empty chunks in between change nothing either (a pending CR survives them).
    let mut with_empty: Vec<&[u8]> = Vec::new();
    for b in &singles {
        with_empty.push(b);
        with_empty.push(b"");
    }
    assert_eq!(
        run(&with_empty),
        expected,
        "{name}: bytes with empty chunks"
    );
}

#[test]
fn multibyte_utf8_at_every_split() {
    let body = "\u{feff}event: grüße\r\ndata: héllo wörld 😀\r\n\r\n: kommentar ✓\n\
                data: {\"text\":\"日本語\"}\rdata: second line ü\r\r\
                data:😀😀\n\ndata: tail without blank line é\n";
    let expected = reference(body);
    assert_eq!(
        expected,
        vec![
            frame(Some("grüße"), "héllo wörld 😀"),
            frame(None, "{\"text\":\"日本語\"}\nsecond line ü"),
            frame(None, "😀😀"),
            frame(None, "tail without blank line é"),
        ]
    );
    check_every_split("multibyte", body);
}

#[test]
fn comments_are_ignored() {
    assert_eq!(
        whole(": hello\n:\ndata: x\n: between\n\n"),
        vec![frame(None, "x")]
    );
}

#[test]
fn multi_line_data_is_joined_with_lf() {
    assert_eq!(
        whole("data: a\ndata: b\ndata:\ndata: c\n\n"),
        vec![frame(None, "a\nb\n\nc")]
    );
}

#[test]
fn event_names_apply_to_one_frame() {
    assert_eq!(
        whole("event: one\ndata: 1\n\ndata: 2\n\nevent: x\nevent: three\ndata: 3\n\n"),
        vec![
            frame(Some("one"), "1"),
            frame(None, "2"),
            frame(Some("three"), "3")
        ]
    );
    // An empty name is no name.
    assert_eq!(whole("event:\ndata: d\n\n"), vec![frame(None, "d")]);
}

#[test]
fn crlf_cr_and_lf_mixed() {
    assert_eq!(
        whole("data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\ndata: e\n\r"),
        vec![
            frame(None, "a"),
            frame(None, "b"),
            frame(None, "c"),
            frame(None, "d"),
            frame(None, "e"),
        ]
    );
}

#[test]
fn crlf_split_between_chunks_is_one_line_end() {
    let frames = run(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
    assert_eq!(frames, vec![frame(None, "a\nb")]);
    // But a CR then a CR is two line ends, hence a dispatch.
    let frames = run(&[b"data: a\r", b"\rdata: b\r", b"\r"]);
    assert_eq!(frames, vec![frame(None, "a"), frame(None, "b")]);
}

#[test]
fn field_without_colon_has_empty_value() {
    assert_eq!(whole("data\n\n"), vec![frame(None, "")]);
    assert_eq!(whole("data\ndata\n\n"), vec![frame(None, "\n")]);
    // `event` without colon: empty name, so none.
    assert_eq!(whole("event\ndata: x\n\n"), vec![frame(None, "x")]);
}

#[test]
fn only_one_space_after_colon_is_stripped() {
    assert_eq!(
        whole("data:x\n\ndata:  two\n\ndata:\tt\n\n"),
        vec![frame(None, "x"), frame(None, " two"), frame(None, "\tt")]
    );
    assert_eq!(whole("data: a: b\n\n"), vec![frame(None, "a: b")]);
}

#[test]
fn empty_data_dispatches_an_empty_frame() {
    assert_eq!(whole("data:\n\n"), vec![frame(None, "")]);
    assert_eq!(whole("data: \n\n"), vec![frame(None, "")]);
}

#[test]
fn bom_at_start_is_skipped_once() {
    assert_eq!(whole("\u{feff}data: x\n\n"), vec![frame(None, "x")]);
    assert_eq!(
        run(&[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]),
        vec![frame(None, "x")]
    );
    // A second BOM is part of the field name, so the line is an unknown field.
    assert_eq!(
        whole("\u{feff}\u{feff}data: x\n\ndata: y\n\n"),
        vec![frame(None, "y")]
    );
    // Not at the start: not a BOM.
    assert_eq!(
        whole("data: a\n\n\u{feff}data: b\n\n"),
        vec![frame(None, "a")]
    );
}

#[test]
fn trailing_frame_is_flushed_by_finish() {
    let mut framer = SseFramer::new();
    let mut out = Vec::new();
    framer
        .feed(b"data: a\n\ndata: b\n", |f| {
            out.push(own(f));
            Ok::<_, Infallible>(())
        })
        .unwrap();
    assert_eq!(out, vec![frame(None, "a")]);
    let _ = framer
        .finish(|f| {
            out.push(own(f));
            Ok::<_, Infallible>(())
        })
        .unwrap();
    assert_eq!(out, vec![frame(None, "a"), frame(None, "b")]);
    // Even a last line without its line end.
    assert_eq!(
        whole("event: e\ndata: [DONE]"),
        vec![frame(Some("e"), "[DONE]")]
    );
    // A cut line after whole data is not a data line that could prove it whole: the frame
    // it left open is not dispatched, never under half an event name.
    for cut in [
        "data: {\"a\":1}\nevent: mess",
        "event: message_delta\ndata: {\"a\":1}\nevent: mes",
        "data: {\"a\":1}\nid: 4",
        "data: {\"a\":1}\n: keep-al",
    ] {
        assert_eq!(whole(cut), vec![], "{cut:?}");
    }
    // Nothing pending, nothing flushed.
    assert_eq!(whole("data: a\n\n"), vec![frame(None, "a")]);
    assert_eq!(whole(""), vec![]);
}

#[test]
fn finish_resets_for_a_new_stream() {
    let mut framer = SseFramer::new();
    let mut out = Vec::new();
    let mut push = |f: SseFrame<'_>| {
        out.push(own(f));
        Ok::<_, Infallible>(())
    };
    framer.feed(b"event: e\ndata: a\r", &mut push).unwrap();
    let _ = framer.finish(&mut push).unwrap();
    framer
        .feed(b"\xEF\xBB\xBF\ndata: b\n\n", &mut push)
        .unwrap();
    let _ = framer.finish(&mut push).unwrap();
    assert_eq!(out, vec![frame(Some("e"), "a"), frame(None, "b")]);
}

#[test]
fn event_only_frame_is_dropped() {
    assert_eq!(
        whole("event: ping\n\ndata: x\n\nevent: lone\nid: 3\nretry: 10\n\n"),
        vec![frame(None, "x")]
    );
    assert_eq!(whole("event: ping\n"), vec![]);
}

#[test]
fn id_retry_and_unknown_fields_are_ignored() {
    assert_eq!(
        whole("id: 7\nretry: 100\nfoo: bar\ndata: x\nDATA: y\n\n"),
        vec![frame(None, "x")]
    );
}

#[test]
fn done_sentinel() {
    let frames = whole("data: {}\n\ndata: [DONE]\n\ndata:  [DONE] \n\n");
    let done: Vec<bool> = frames
        .iter()
        .map(|(e, d)| {
            SseFrame {
                event: e.as_deref(),
                data: d,
            }
            .is_done()
        })
        .collect();
    assert_eq!(done, vec![false, true, true]);
}

#[test]
fn invalid_utf8_is_replaced_not_dropped() {
    // (Invalid bytes between a frame's fields, which are valid, leave the fields as they are.)
    let frames = run(&[
        b"event: \xFFx\ndata: a\xC3\n\ndata: \xF0\x9F",
        b"\x98\x80\n\nevent: e\nid: \xFF\ndata: b\n\ndata: c\nevent: f\n\n",
    ]);
    let want = [
        (Some("\u{fffd}x"), "a\u{fffd}"),
        (None, "😀"),
        (Some("e"), "b"),
    ];
    let mut want: Vec<Frame> = want.iter().map(|&(e, d)| frame(e, d)).collect();
    want.push(frame(Some("f"), "c"));
    assert_eq!(frames, want);
}

#[test]
fn fast_path_borrows_from_the_chunk() {
    let chunk: &[u8] =
        b"data: {\"a\":1}\n\nevent: delta\ndata: {\"b\":2}\r\n\r\ndata: x\ndata: y\n\nevent: e\ndata: open\n";
    let range = chunk.as_ptr_range();
    let mut framer = SseFramer::new();
    let mut seen = Vec::new();
    framer
        .feed(chunk, |f| {
            let borrowed = range.contains(&f.data.as_ptr())
                && f.event.into_iter().all(|e| range.contains(&e.as_ptr()));
            seen.push((own(f), borrowed));
            Ok::<_, Infallible>(())
        })
        .unwrap();
    assert_eq!(
        seen,
        vec![
            (frame(None, "{\"a\":1}"), true),
            (frame(Some("delta"), "{\"b\":2}"), true),
            // Two data lines must be joined: copied, correctly.
            (frame(None, "x\ny"), false),
        ]
    );
    // The open frame was saved before the chunk went away.
    let mut rest = Vec::new();
    framer
        .feed(b"\n\n", |f| {
            rest.push(own(f));
            Ok::<_, Infallible>(())
        })
        .unwrap();
    assert_eq!(rest, vec![frame(Some("e"), "open")]);
}

#[test]
fn error_from_on_frame_stops_feeding() {
    let mut framer = SseFramer::new();
    let mut seen = Vec::new();
    let result = framer.feed(b"data: 1\n\ndata: 2\n\ndata: 3\n\n", |f| {
        seen.push(f.data.to_owned());
        if f.data == "2" {
            Err("stop")
        } else {
            Ok(())
        }
    });
    assert_eq!(result, Err("stop"));
    assert_eq!(seen, vec!["1", "2"]);
    // Still usable afterwards.
    let mut later = Vec::new();
    framer
        .feed(b"data: 4\n\n", |f| {
            later.push(own(f));
            Ok::<_, Infallible>(())
        })
        .unwrap();
    assert_eq!(later, vec![frame(None, "4")]);
}

#[path = "sse_recorded_tests.rs"]
mod recorded;
