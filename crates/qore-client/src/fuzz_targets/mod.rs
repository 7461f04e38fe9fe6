//! Fuzz targets: one function per target, `&[u8]` in, a panic on any broken promise. The
//! libFuzzer binaries under the repository's `fuzz/` and the seeded proptest pass in
//! `tests/fuzz_seeded.rs` call these same functions, so a target is written once.
//!
//! Promises (each checked on every input, beyond "no panic"):
//! - [`sse_framer`], [`ndjson_framer`]: the frames equal a plain reference reading of the
//!   whole body, fed whole, in the chunks the input's header chooses and one byte at a time
//!   (empty chunks included);
//! - [`decode`]: for the named wire, chat and fill-in-the-middle decoders give the same
//!   events and end whatever the chunking, the fast path gives what `serde_only` gives
//!   (streamed and whole body), and the events fold into a turn;
//! - [`text_protocol`]: the streaming parser gives what [`parse_reply`] gives wherever the
//!   reply is cut, a reply without blocks comes back as its text, and nothing inside a code
//!   fence becomes a call.
//!
//! Inputs that cut a body ([`split_input`]): the first byte's low three bits say how many
//! chunk widths follow (0..=7 bytes, a width of 0 being an empty chunk); the widths repeat
//! over the rest of the input, the body. No widths (or all zero): the body is one chunk.
//!
//! `#[doc(hidden)]`: test support, not part of the crate's API.
//!
//! [`parse_reply`]: crate::tool_loop::text_protocol::parse_reply

mod decoders;
mod framers;
mod text;

pub use decoders::decode;
pub use framers::{ndjson_framer, ndjson_reference, sse_framer, sse_reference, Frame};
pub use text::text_protocol;

/// The chunk widths the input's header chooses, and the body after it (see the module doc).
pub fn split_input(data: &[u8]) -> (Vec<usize>, &[u8]) {
    let Some((&head, rest)) = data.split_first() else {
        return (Vec::new(), data);
    };
    let count = usize::from(head & 7).min(rest.len());
    let (widths, body) = rest.split_at(count);
    (widths.iter().map(|&w| usize::from(w)).collect(), body)
}

/// Where `len` bytes are cut when `widths` repeat over them: the end of every chunk but the
/// last (which ends at `len`). Empty when there are no nonzero widths.
pub fn cut_points(len: usize, widths: &[usize]) -> Vec<usize> {
    let mut cuts = Vec::new();
    if widths.iter().all(|&w| w == 0) {
        return cuts;
    }
    let mut at = 0;
    for &width in widths.iter().cycle() {
        at += width;
        if at >= len {
            break;
        }
        cuts.push(at);
    }
    cuts
}

/// `body` cut at `cuts` (ascending, each at most `body.len()`).
pub fn chunks<'a>(body: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut from = 0;
    for &cut in cuts {
        out.push(&body[from..cut]);
        from = cut;
    }
    out.push(&body[from..]);
    out
}

/// The input's body cut in the chunks its header chooses.
pub fn chunked(data: &[u8]) -> (&[u8], Vec<&[u8]>) {
    let (widths, body) = split_input(data);
    (body, chunks(body, &cut_points(body.len(), &widths)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_chooses_repeating_widths() {
        let (widths, body) = split_input(&[2, 3, 0, b'a', b'b', b'c', b'd', b'e']);
        assert_eq!(widths, vec![3, 0]);
        assert_eq!(body, b"abcde");
        assert_eq!(chunks(body, &cut_points(body.len(), &widths)).len(), 3);
        assert_eq!(
            chunked(&[2, 2, 0, b'a', b'b', b'c', b'd', b'e']).1,
            vec![&b"ab"[..], b"", b"cd", b"", b"e"]
        );
        assert_eq!(chunked(&[0, b'x']).1, vec![&b"x"[..]]);
        assert_eq!(chunked(&[7, 0]).1, vec![&b""[..]]);
        assert_eq!(chunked(&[]).1, vec![&b""[..]]);
    }
}
