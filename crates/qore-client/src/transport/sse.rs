//! Server-Sent Events framing: bytes of a `text/event-stream` body in, [`SseFrame`]s out.
//!
//! [`SseFramer`] promises:
//! - the WHATWG event-stream interpretation: lines end in CRLF, LF or a lone CR; a blank
//!   line dispatches the frame if it has at least one `data` field (a frame with only
//!   `event:` is dropped); `:` starts a comment; one optional space after a field's colon
//!   is stripped; a line without a colon is a field with an empty value; `data` fields are
//!   joined with `'\n'`; `event` names the frame (an empty name means none); `id`, `retry`
//!   and unknown fields are ignored; one UTF-8 BOM at the start of the stream is skipped;
//! - the same frames whatever the chunking: a frame, a line, the CR and LF of one CRLF, a
//!   multi-byte UTF-8 character or the BOM may each be split across chunks;
//! - a frame borrowed straight from the chunk (no copy, no allocation) when it lies wholly
//!   inside that chunk and has a single `data` line; otherwise its bytes are gathered in
//!   buffers the framer reuses, so steady state allocates nothing per frame;
//! - data and event name decoded as UTF-8, in one pass when both lie in the chunk; invalid
//!   bytes become U+FFFD (never a panic, never a dropped frame);
//! - [`SseFramer::finish`] at end of body dispatches a last frame the server did not close
//!   with a blank line when its lines are whole; see [`StreamEnd`] for a last line that lacks
//!   its line end.
//!
//! It is hand-written because no crate gives a push framer that borrows, does not allocate
//! per event and is correct at every byte split: `eventsource-stream` allocates a `String`
//! per event and wants a `Stream` to pull from, while the decoders here are fed chunk by
//! chunk from the task that reads the socket.

use std::borrow::Cow;

use memchr::{memchr, memchr2};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// How a streamed body ended, as [`SseFramer::finish`] and
/// [`super::ndjson::NdjsonFramer::finish`] see it.
///
/// The rule for the last line: a line ends at its line end. When the body ends after one
/// (whether or not an SSE frame's closing blank line followed), every line was received
/// whole: [`StreamEnd::Clean`]. A last line WITHOUT its line end was either sent that way or
/// cut when the connection closed; it is taken as whole only when what it completes — the
/// SSE frame's data, or the NDJSON line — is one complete JSON object or array, or `[DONE]`
/// (a cut cannot leave that: its closing bracket was the line's last byte; a bare number
/// could be cut and still parse, and no wire sends one), and dispatched.
/// Anything else (half a JSON value, half a UTF-8 character, a bare field name) is
/// [`StreamEnd::MidLine`]: not dispatched, never handed to a decoder as if it were data.
/// A blank tail (spaces, tabs) is ignored.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// Every line was whole; pending frames were dispatched.
    Clean,
    /// The body stopped in the middle of a line; that line was dropped.
    MidLine,
}

/// Whether the data of an unterminated last line is whole: `[DONE]`, or one JSON object or
/// array.
pub(super) fn complete_data(data: &[u8]) -> bool {
    let data = data.trim_ascii();
    data == b"[DONE]"
        || (matches!(data.first(), Some(b'{' | b'['))
            && serde_json::from_slice::<serde::de::IgnoredAny>(data).is_ok())
}

/// One dispatched SSE event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseFrame<'a> {
    /// The `event:` name, if the frame had one.
    pub event: Option<&'a str>,
    /// The `data:` lines joined with '\n' (the SSE spec's rule).
    pub data: &'a str,
}

impl SseFrame<'_> {
    /// The OpenAI-style end-of-stream sentinel: data `[DONE]`.
    pub fn is_done(&self) -> bool {
        self.data.trim() == "[DONE]"
    }
}

/// Where a field value of the frame being built lives.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// No such field yet.
    #[default]
    Absent,
    /// `chunk[start..end]` of the chunk being fed (only while inside one `feed` call).
    Chunk(usize, usize),
    /// In the framer's own buffer.
    Owned,
}

/// Push framer for an SSE body. Feed it every chunk in order, then call
/// [`SseFramer::finish`] once the body ends.
///
/// If `on_frame` returns an error, `feed` stops there and discards the rest of that chunk;
/// the framer stays usable, as if the chunk had ended right after the failed frame.
#[derive(Debug, Default)]
pub struct SseFramer {
    /// A line not yet terminated when the previous chunk ended.
    line: Vec<u8>,
    /// Data of the frame being built, when it cannot be borrowed from the chunk.
    data: Vec<u8>,
    /// Event name of the frame being built, when it cannot be borrowed from the chunk.
    event: Vec<u8>,
    data_at: Slot,
    event_at: Slot,
    /// The previous chunk ended in '\r': a '\n' opening the next chunk completes that CRLF.
    after_cr: bool,
    /// The first line of the stream has been seen (the BOM is checked there).
    started: bool,
}

impl SseFramer {
    /// A framer at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed the next bytes of the body; `on_frame` is called for each complete frame, in order.
    /// Stops at and returns the first error `on_frame` returns.
    pub fn feed<E>(
        &mut self,
        chunk: &[u8],
        mut on_frame: impl FnMut(SseFrame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let result = self.feed_lines(chunk, &mut on_frame);
        // Nothing may keep pointing into the chunk once it is gone.
        if let Slot::Chunk(start, end) = self.data_at {
            self.data.clear();
            self.data.extend_from_slice(&chunk[start..end]);
            self.data_at = Slot::Owned;
        }
        if let Slot::Chunk(start, end) = self.event_at {
            self.event.clear();
            self.event.extend_from_slice(&chunk[start..end]);
            self.event_at = Slot::Owned;
        }
        result
    }

    /// End of body: dispatch a frame that has data but lacked its terminating blank line
    /// (servers that close without it), unless its last line was cut (see [`StreamEnd`]),
    /// then reset.
    pub fn finish<E>(
        &mut self,
        mut on_frame: impl FnMut(SseFrame<'_>) -> Result<(), E>,
    ) -> Result<StreamEnd, E> {
        let line = std::mem::take(&mut self.line);
        let mut result = Ok(());
        let mut end = StreamEnd::Clean;
        if !line.trim_ascii().is_empty() {
            result = self.on_line(&line, 0, line.len(), false, &mut on_frame);
            // Only a data line can show it is whole (its data completes the JSON); a cut
            // `event:` line after whole data would name the frame with half a name.
            let field = line.strip_prefix(BOM).unwrap_or(&line);
            let field = field.split(|&b| b == b':').next().unwrap_or_default();
            let whole = match self.data_at {
                Slot::Owned if field == b"data" => complete_data(&self.data),
                _ => false,
            };
            if !whole {
                end = StreamEnd::MidLine;
                self.data_at = Slot::Absent;
            }
        }
        if result.is_ok() {
            result = self.dispatch(&line, &mut on_frame);
        }
        self.line = line;
        self.line.clear();
        self.data_at = Slot::Absent;
        self.event_at = Slot::Absent;
        self.after_cr = false;
        self.started = false;
        result.map(|()| end)
    }

    fn feed_lines<E>(
        &mut self,
        chunk: &[u8],
        on_frame: &mut impl FnMut(SseFrame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut pos = 0;
        if self.after_cr && !chunk.is_empty() {
            self.after_cr = false;
            if chunk[0] == b'\n' {
                pos = 1;
            }
        }
        while pos < chunk.len() {
            let Some(i) = memchr2(b'\n', b'\r', &chunk[pos..]) else {
                // An unterminated tail: keep it for the next chunk.
                self.line.extend_from_slice(&chunk[pos..]);
                return Ok(());
            };
            let end = pos + i;
            let mut next = end + 1;
            let mut cr_at_end = false;
            if chunk[end] == b'\r' {
                match chunk.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => cr_at_end = true,
                }
            }
            if self.line.is_empty() {
                self.on_line(chunk, pos, end, true, on_frame)?;
            } else {
                // The line began in an earlier chunk: complete it in the carry buffer.
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&chunk[pos..end]);
                let result = self.on_line(&line, 0, line.len(), false, on_frame);
                line.clear();
                self.line = line;
                result?;
            }
            self.after_cr = cr_at_end;
            pos = next;
        }
        Ok(())
    }

    /// Interpret the line `src[start..end]`. `borrowable` says `src` is the chunk being fed,
    /// so values may be kept as ranges into it instead of copied.
    fn on_line<E>(
        &mut self,
        src: &[u8],
        mut start: usize,
        end: usize,
        borrowable: bool,
        on_frame: &mut impl FnMut(SseFrame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.started {
            self.started = true;
            if src[start..end].starts_with(BOM) {
                start += BOM.len();
            }
        }
        let line = &src[start..end];
        let Some(&first) = line.first() else {
            return self.dispatch(src, on_frame);
        };
        if first == b':' {
            return Ok(()); // comment
        }
        // The two fields every frame of the wires has, without a search for the colon.
        let colon = if line.starts_with(b"data:") {
            Some(4)
        } else if line.starts_with(b"event:") {
            Some(5)
        } else {
            memchr(b':', line)
        };
        let (name, value_start) = match colon {
            Some(colon) => {
                let mut v = start + colon + 1;
                if v < end && src[v] == b' ' {
                    v += 1;
                }
                (&line[..colon], v)
            }
            None => (line, end),
        };
        match name {
            b"data" => {
                let value = &src[value_start..end];
                match self.data_at {
                    Slot::Absent if borrowable => self.data_at = Slot::Chunk(value_start, end),
                    Slot::Absent => {
                        self.data.clear();
                        self.data.extend_from_slice(value);
                        self.data_at = Slot::Owned;
                    }
                    Slot::Chunk(s, e) => {
                        // A second data line: the frame no longer is one slice of the chunk.
                        self.data.clear();
                        self.data.extend_from_slice(&src[s..e]);
                        self.data.push(b'\n');
                        self.data.extend_from_slice(value);
                        self.data_at = Slot::Owned;
                    }
                    Slot::Owned => {
                        self.data.push(b'\n');
                        self.data.extend_from_slice(value);
                    }
                }
            }
            b"event" => {
                if value_start == end {
                    self.event_at = Slot::Absent;
                } else if borrowable {
                    self.event_at = Slot::Chunk(value_start, end);
                } else {
                    self.event.clear();
                    self.event.extend_from_slice(&src[value_start..end]);
                    self.event_at = Slot::Owned;
                }
            }
            _ => {} // id, retry and unknown fields
        }
        Ok(())
    }

    /// Blank line: hand the frame being built to `on_frame` if it has data, then start afresh.
    /// `src` is the chunk that `Slot::Chunk` ranges point into.
    fn dispatch<E>(
        &mut self,
        src: &[u8],
        on_frame: &mut impl FnMut(SseFrame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let data: &[u8] = match self.data_at {
            Slot::Absent => {
                self.event_at = Slot::Absent;
                return Ok(());
            }
            Slot::Chunk(s, e) => &src[s..e],
            Slot::Owned => &self.data,
        };
        // An `event:` line just before its one `data:` line, both in the chunk (every frame
        // of a per-event stream): one validation of both.
        if let (Slot::Chunk(es, ee), Slot::Chunk(ds, de)) = (self.event_at, self.data_at) {
            if let Ok(both) = std::str::from_utf8(&src[es.min(ds)..ee.max(de)]) {
                let base = es.min(ds);
                let result = on_frame(SseFrame {
                    event: Some(&both[es - base..ee - base]),
                    data: &both[ds - base..de - base],
                });
                self.data_at = Slot::Absent;
                self.event_at = Slot::Absent;
                return result;
            }
        }
        let event: Option<&[u8]> = match self.event_at {
            Slot::Absent => None,
            Slot::Chunk(s, e) => Some(&src[s..e]),
            Slot::Owned => Some(&self.event),
        };
        let data = decode(data);
        let event = event.map(decode);
        let result = on_frame(SseFrame {
            event: event.as_deref(),
            data: &data,
        });
        self.data_at = Slot::Absent;
        self.event_at = Slot::Absent;
        result
    }
}

/// UTF-8 with one validation pass; lossy (allocating) only for invalid input. (std's
/// `from_utf8_lossy` walks valid input chunk by chunk, measurably slower per frame.)
pub(super) fn decode(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
