//! SSE frames that repeat but for a value or two (a text delta's text, a sequence number),
//! written from a template instead of a `serde_json::Value` built per event.
//!
//! Promises: [`Template::new`] serializes the frame once exactly as [`sse::frame`] would,
//! with a marker string in each hole; [`Template::write`] appends the same bytes
//! [`sse::frame`] would write for the frame with the holes filled (a text through
//! serde_json's own string escaping, a number in decimal). A frame in which a marker is not
//! found exactly once gives no template, and the caller writes it the slow way.
//!
//! Why: a text delta is the hot path of every stream (one per token); building its `Value`
//! costs a map and a string per key, each allocated and freed, for bytes that differ from the
//! last delta's only in the text.

use std::io::Write as _;

use serde_json::Value;

use super::sse;

/// What fills a hole.
#[derive(Debug, Clone, Copy)]
pub enum Fill<'a> {
    Text(&'a str),
    Number(u64),
}

/// A frame cut at its holes: `pieces[0] hole pieces[1] hole … pieces[n]`.
#[derive(Debug, Clone)]
pub struct Template {
    pieces: Vec<Vec<u8>>,
    /// Which fill goes into each hole, in the order the holes appear in the bytes.
    order: Vec<usize>,
}

/// The marker of hole `n`: a string no real value holds (control characters on both sides).
pub fn marker(n: usize) -> String {
    format!("\u{1}qore-hole-{n}\u{1}")
}

impl Template {
    /// The frame `event`/`data`, whose values `marker(0)`, `marker(1)` … up to `holes`
    /// are the holes.
    pub fn new(event: Option<&str>, data: &Value, holes: usize) -> Option<Template> {
        let mut whole = Vec::new();
        sse::frame(&mut whole, event, data);
        let mut at: Vec<(usize, usize, usize)> = Vec::with_capacity(holes);
        for n in 0..holes {
            let quoted = serde_json::to_vec(&marker(n)).ok()?;
            let start = find(&whole, &quoted)?;
            if find(&whole[start + 1..], &quoted).is_some() {
                return None;
            }
            at.push((start, start + quoted.len(), n));
        }
        at.sort_unstable();
        let mut pieces = Vec::with_capacity(holes + 1);
        let mut from = 0;
        for &(start, end, _) in &at {
            pieces.push(whole[from..start].to_vec());
            from = end;
        }
        pieces.push(whole[from..].to_vec());
        let order = at.iter().map(|&(_, _, n)| n).collect();
        Some(Template { pieces, order })
    }

    /// Append the frame with `fills[n]` in hole `n` (a missing fill writes `null`).
    pub fn write(&self, out: &mut Vec<u8>, fills: &[Fill]) {
        out.extend_from_slice(&self.pieces[0]);
        for (piece, &n) in self.pieces[1..].iter().zip(&self.order) {
            match fills.get(n) {
                Some(Fill::Text(text)) => {
                    // Writing a str into a Vec cannot fail.
                    if serde_json::to_writer(&mut *out, text).is_err() {
                        out.extend_from_slice(b"null");
                    }
                }
                Some(Fill::Number(number)) => {
                    // Writing into a Vec cannot fail.
                    let _ = write!(out, "{number}");
                }
                None => out.extend_from_slice(b"null"),
            }
            out.extend_from_slice(piece);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// Texts that test the escaping: quotes, backslashes, line breaks, control characters,
    /// non-ASCII, markup, a marker look-alike.
    pub(crate) const TEXTS: &[&str] = &[
        "plain",
        "say \"hi\"\\n",
        "two\nlines\r\n\ttab",
        "\u{0}\u{1}\u{1f}\u{7f}",
        "héllo ✓ 🦀",
        "</script><b>x</b>",
        "\u{1}qore-hole-0\u{1}",
    ];

    #[test]
    fn a_filled_template_is_the_frame_serde_writes() {
        let cases: &[(Option<&str>, u64)] = &[
            (None, 0),
            (Some("response.x"), 7),
            (None, 12345678901234567890),
        ];
        for &(event, number) in cases {
            let shape =
                |text: Value, n: Value| json!({"a": 1, "text": text, "z": {"n": n, "k": [null]}});
            let template =
                Template::new(event, &shape(json!(marker(0)), json!(marker(1))), 2).unwrap();
            // The empty text too: a template fills it, though no encoder sends one as a delta.
            for text in TEXTS.iter().chain(&[""]) {
                let mut slow = Vec::new();
                sse::frame(&mut slow, event, &shape(json!(text), json!(number)));
                let mut fast = Vec::new();
                template.write(&mut fast, &[Fill::Text(text), Fill::Number(number)]);
                assert_eq!(
                    String::from_utf8(fast).unwrap(),
                    String::from_utf8(slow).unwrap()
                );
            }
        }
    }

    #[test]
    fn holes_in_either_order_take_their_own_fill() {
        // "b" sorts before "t": hole 1 comes first in the bytes.
        let template = Template::new(None, &json!({"t": marker(0), "b": marker(1)}), 2).unwrap();
        let mut out = Vec::new();
        template.write(&mut out, &[Fill::Text("x"), Fill::Number(3)]);
        assert_eq!(out, b"data: {\"b\":3,\"t\":\"x\"}\n\n");
    }

    #[test]
    fn a_missing_or_repeated_marker_gives_no_template() {
        assert!(Template::new(None, &json!({"a": "no hole"}), 1).is_none());
        assert!(Template::new(None, &json!({"a": marker(0), "b": marker(0)}), 1).is_none());
    }
}
