//! Newline-delimited JSON framing (Ollama's `application/x-ndjson`): bytes in, one frame per
//! non-blank line out.
//!
//! [`NdjsonFramer`] promises:
//! - a frame per line, ending in LF or CRLF; blank lines (only spaces, tabs or CR) are skipped;
//! - the same frames whatever the chunking: a line, a CRLF pair or a multi-byte UTF-8
//!   character may be split across chunks;
//! - a line borrowed straight from the chunk when it lies wholly inside it; otherwise
//!   gathered in one buffer the framer reuses;
//! - invalid UTF-8 becomes U+FFFD (never a panic, never a dropped line);
//! - [`NdjsonFramer::finish`] dispatches a last line the server did not end with a newline
//!   when it is one complete JSON value; any other unterminated tail was cut and is
//!   reported, not dispatched ([`StreamEnd`] states the rule for both framers).
//!
//! Frames are handed out as [`SseFrame`]s with no event name, so every decoder has one input
//! type. Hand-written for the same reasons as [`super::sse`]: a push framer fed from the
//! task that reads the socket, borrowing, with no allocation per line.

use std::borrow::Cow;

use memchr::memchr;

use super::sse::{complete_data, SseFrame, StreamEnd};

/// Push framer for an NDJSON body.
#[derive(Debug, Default)]
pub struct NdjsonFramer {
    /// A line not yet terminated when the previous chunk ended.
    line: Vec<u8>,
}

impl NdjsonFramer {
    /// A framer at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed the next bytes of the body; `on_frame` is called once per complete line.
    /// Stops at and returns the first error `on_frame` returns.
    pub fn feed<E>(
        &mut self,
        chunk: &[u8],
        mut on_frame: impl FnMut(SseFrame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut pos = 0;
        while let Some(i) = memchr(b'\n', &chunk[pos..]) {
            let end = pos + i;
            if self.line.is_empty() {
                dispatch(&chunk[pos..end], &mut on_frame)?;
            } else {
                self.line.extend_from_slice(&chunk[pos..end]);
                let line = std::mem::take(&mut self.line);
                let result = dispatch(&line, &mut on_frame);
                self.line = line;
                self.line.clear();
                result?;
            }
            pos = end + 1;
        }
        self.line.extend_from_slice(&chunk[pos..]);
        Ok(())
    }

    /// End of body: dispatch a last line that lacked its newline if it is whole; report it
    /// as [`StreamEnd::MidLine`] (not dispatched) if it was cut.
    pub fn finish<E>(
        &mut self,
        mut on_frame: impl FnMut(SseFrame<'_>) -> Result<(), E>,
    ) -> Result<StreamEnd, E> {
        let line = std::mem::take(&mut self.line);
        if blank(&line) {
            return Ok(StreamEnd::Clean);
        }
        if !complete_data(&line) {
            return Ok(StreamEnd::MidLine);
        }
        dispatch(&line, &mut on_frame).map(|()| StreamEnd::Clean)
    }
}

/// A line with nothing to read: spaces, tabs and CRs only (whether it ended with its newline
/// or the body ended first, the same rule).
fn blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

fn dispatch<E>(
    line: &[u8],
    on_frame: &mut impl FnMut(SseFrame<'_>) -> Result<(), E>,
) -> Result<(), E> {
    if blank(line) {
        return Ok(());
    }
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let data = super::sse::decode(line);
    on_frame(SseFrame {
        event: None,
        data: match &data {
            Cow::Borrowed(s) => s,
            Cow::Owned(s) => s.as_str(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(chunks: &[&[u8]]) -> Vec<String> {
        let mut framer = NdjsonFramer::new();
        let mut out = Vec::new();
        for chunk in chunks {
            framer
                .feed(chunk, |f| {
                    assert!(f.event.is_none());
                    out.push(f.data.to_owned());
                    Ok::<(), ()>(())
                })
                .unwrap();
        }
        let end = framer
            .finish(|f| {
                out.push(f.data.to_owned());
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(end, StreamEnd::Clean);
        out
    }

    #[test]
    fn every_split_point_gives_the_same_lines() {
        let body = "{\"a\":\"é😀\"}\r\n\n  \n{\"b\":2}\n{\"c\":3}".as_bytes();
        let whole = frames(&[body]);
        assert_eq!(whole, vec!["{\"a\":\"é😀\"}", "{\"b\":2}", "{\"c\":3}"]);
        for i in 0..=body.len() {
            for j in i..=body.len() {
                assert_eq!(
                    frames(&[&body[..i], &body[i..j], &body[j..]]),
                    whole,
                    "{i} {j}"
                );
            }
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_not_dropped() {
        assert_eq!(
            frames(&[b"{\"a\":\"\xff\"}\n"]),
            vec!["{\"a\":\"\u{FFFD}\"}"]
        );
    }

    #[test]
    fn an_error_stops_the_chunk() {
        let mut framer = NdjsonFramer::new();
        let mut seen = 0;
        let result = framer.feed(b"1\n2\n3\n", |_| {
            seen += 1;
            if seen == 2 {
                Err("stop")
            } else {
                Ok(())
            }
        });
        assert_eq!(result, Err("stop"));
        assert_eq!(seen, 2);
    }
}
