//! The fast path for the one chunk shape that makes up nearly every streamed delta:
//! `{..., "choices": [{"index": 0, "delta": {...}, "finish_reason": ...}], ...}`.
//!
//! Why hand-written: a streamed answer is a long run of small JSON documents, and going
//! through serde's visitor machinery (key strings to field enums, `Option` layers, one
//! `IgnoredAny` walk per unused key) was the largest per-delta cost left after framing
//! (measured against the parse floor in `benches/chat_stream.rs`). This reader matches keys
//! as bytes, skips the values it does not use with a strict but cheap scanner, and builds
//! the same borrowed [`Delta`] the serde path builds.
//!
//! Contract: [`parse`] returns `Some` only when the whole payload is valid JSON (RFC 8259,
//! with the input already known to be UTF-8) of a shape it fully understands: one choice at
//! index 0, string or null `content`/`reasoning_content`/`reasoning`/`refusal`, tool-call
//! deltas with string arguments, no usage, no error, no duplicate keys it reads. Anything
//! else, invalid JSON included, returns `None` and the caller decodes the payload with the
//! serde path, which also reports errors. It has no side effects, so falling back is free.

use std::borrow::Cow;

use smallvec::SmallVec;

use super::wire::{Arguments, Content, Delta, FunctionDelta, ToolCallDelta};

/// What the fast path read from a chunk.
pub struct FastChunk<'a> {
    pub delta: Option<Delta<'a>>,
    pub finish_reason: Option<Cow<'a, str>>,
}

/// Nesting deeper than this in a skipped value is left to serde.
const MAX_DEPTH: u32 = 64;

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

/// Decode `data` if it has the common shape; `None` otherwise (see the module doc).
pub fn parse(data: &str) -> Option<FastChunk<'_>> {
    let mut r = Reader {
        text: data,
        bytes: data.as_bytes(),
        pos: 0,
    };
    let mut chunk = FastChunk {
        delta: None,
        finish_reason: None,
    };
    let mut choices = false;
    r.object(|r, key| match key {
        b"choices" if !choices => {
            choices = true;
            r.choices(&mut chunk)
        }
        b"usage" | b"error" => r.null(),
        b"choices" => None,
        _ => r.skip(0),
    })?;
    r.ws();
    (choices && r.pos == r.bytes.len()).then_some(chunk)
}

impl<'a> Reader<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// Skip whitespace, then take `byte` if it is next.
    fn eat(&mut self, byte: u8) -> bool {
        self.ws();
        if self.bytes.get(self.pos) == Some(&byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// An object; `field` is called with each key, positioned at its value.
    fn object(&mut self, mut field: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{').then_some(())?;
        if self.eat(b'}') {
            return Some(());
        }
        loop {
            self.ws();
            let key = self.key()?;
            self.eat(b':').then_some(())?;
            field(self, key)?;
            if self.eat(b',') {
                continue;
            }
            return self.eat(b'}').then_some(());
        }
    }

    /// A key without escapes (keys with escapes go to serde).
    fn key(&mut self) -> Option<&'a [u8]> {
        (self.bytes.get(self.pos) == Some(&b'"')).then_some(())?;
        let start = self.pos + 1;
        let end = plain_run(self.bytes, start);
        (self.bytes.get(end) == Some(&b'"')).then_some(())?;
        self.pos = end + 1;
        Some(&self.bytes[start..end])
    }

    fn null(&mut self) -> Option<()> {
        self.ws();
        self.literal(b"null")
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.bytes[self.pos..].starts_with(word).then_some(())?;
        self.pos += word.len();
        Some(())
    }

    /// `null` or a string.
    fn opt_str(&mut self) -> Option<Option<Cow<'a, str>>> {
        self.ws();
        match self.bytes.get(self.pos)? {
            b'n' => self.literal(b"null").map(|()| None),
            b'"' => self.string().map(Some),
            _ => None,
        }
    }

    /// A string, borrowed when it has no escapes.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.pos += 1; // the opening quote
        let start = self.pos;
        self.pos = plain_run(self.bytes, self.pos);
        match *self.bytes.get(self.pos)? {
            b'"' => {
                self.pos += 1;
                return Some(Cow::Borrowed(&self.text[start..self.pos - 1]));
            }
            b'\\' => {}
            _ => return None, // a control character
        }
        let mut owned = String::from(&self.text[start..self.pos]);
        loop {
            match *self.bytes.get(self.pos)? {
                b'"' => {
                    self.pos += 1;
                    return Some(Cow::Owned(owned));
                }
                b'\\' => {
                    self.pos += 1;
                    let escaped = match *self.bytes.get(self.pos)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let c = self.unicode_escape()?;
                            owned.push(c);
                            continue;
                        }
                        _ => return None,
                    };
                    self.pos += 1;
                    owned.push(escaped);
                }
                0..=0x1f => return None,
                _ => {
                    let run = self.pos;
                    self.pos = plain_run(self.bytes, self.pos);
                    owned.push_str(&self.text[run..self.pos]);
                }
            }
        }
    }

    /// `\uXXXX` (the `u` at `pos`), with a following low surrogate when it is a high one.
    fn unicode_escape(&mut self) -> Option<char> {
        let first = self.hex4(self.pos + 1)?;
        self.pos += 5;
        let code = match first {
            0xD800..=0xDBFF => {
                self.bytes[self.pos..].starts_with(b"\\u").then_some(())?;
                let low = self.hex4(self.pos + 2)?;
                (0xDC00..=0xDFFF).contains(&low).then_some(())?;
                self.pos += 6;
                0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00)
            }
            0xDC00..=0xDFFF => return None,
            code => code,
        };
        char::from_u32(code)
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.bytes.get(at..at + 4)?;
        let text = std::str::from_utf8(digits).ok()?;
        u32::from_str_radix(text, 16)
            .ok()
            .filter(|_| digits.iter().all(u8::is_ascii_hexdigit))
    }

    /// Skip any JSON value, checking its grammar.
    fn skip(&mut self, depth: u32) -> Option<()> {
        (depth < MAX_DEPTH).then_some(())?;
        self.ws();
        match *self.bytes.get(self.pos)? {
            b'"' => self.string().map(drop),
            b'{' => self.object(|r, _| r.skip(depth + 1)),
            b'[' => self.array(|r| r.skip(depth + 1)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number().map(drop),
        }
    }

    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[').then_some(())?;
        if self.eat(b']') {
            return Some(());
        }
        loop {
            element(self)?;
            if self.eat(b',') {
                continue;
            }
            return self.eat(b']').then_some(());
        }
    }

    /// A number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`; returns its text.
    fn number(&mut self) -> Option<&'a str> {
        self.ws();
        let start = self.pos;
        let digits = |r: &mut Self| {
            let from = r.pos;
            while r.bytes.get(r.pos).is_some_and(u8::is_ascii_digit) {
                r.pos += 1;
            }
            r.pos > from
        };
        if self.bytes.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        if self.bytes.get(self.pos) == Some(&b'0') {
            self.pos += 1;
        } else {
            digits(self).then_some(())?;
        }
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            digits(self).then_some(())?;
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            digits(self).then_some(())?;
        }
        Some(&self.text[start..self.pos])
    }

    /// A small non-negative integer (an `index`).
    fn index(&mut self) -> Option<u32> {
        self.number()?.parse().ok()
    }

    /// `[choice]`: exactly one choice, at index 0.
    fn choices(&mut self, chunk: &mut FastChunk<'a>) -> Option<()> {
        let mut seen = false;
        self.array(|r| {
            (!seen).then_some(())?;
            seen = true;
            r.choice(chunk)
        })?;
        seen.then_some(())
    }

    fn choice(&mut self, chunk: &mut FastChunk<'a>) -> Option<()> {
        let mut seen = 0u8;
        self.object(|r, key| {
            let bit = match key {
                b"index" => 1,
                b"delta" => 2,
                b"finish_reason" => 4,
                b"message" => return None, // a whole response's shape: serde's job
                _ => return r.skip(0),
            };
            (seen & bit == 0).then_some(())?;
            seen |= bit;
            match bit {
                1 => (r.index()? == 0).then_some(()),
                2 => {
                    r.ws();
                    if r.bytes.get(r.pos) == Some(&b'n') {
                        return r.literal(b"null");
                    }
                    r.delta(chunk.delta.insert(Delta {
                        content: None,
                        reasoning_content: None,
                        reasoning: None,
                        refusal: None,
                        tool_calls: None,
                    }))
                }
                _ => {
                    chunk.finish_reason = r.opt_str()?;
                    Some(())
                }
            }
        })
    }

    fn delta(&mut self, delta: &mut Delta<'a>) -> Option<()> {
        let mut seen = 0u8;
        self.object(|r, key| {
            let bit = match key {
                b"content" => 1,
                b"reasoning_content" => 2,
                b"reasoning" => 4,
                b"refusal" => 8,
                b"tool_calls" => 16,
                _ => return r.skip(0),
            };
            (seen & bit == 0).then_some(())?;
            seen |= bit;
            match bit {
                1 => delta.content = r.opt_str()?.map(Content::Text),
                2 => delta.reasoning_content = r.opt_str()?,
                4 => delta.reasoning = r.opt_str()?,
                8 => delta.refusal = r.opt_str()?,
                _ => delta.tool_calls = r.tool_calls()?,
            }
            Some(())
        })
    }

    fn tool_calls(&mut self) -> Option<Option<SmallVec<[ToolCallDelta<'a>; 1]>>> {
        self.ws();
        if self.bytes.get(self.pos) == Some(&b'n') {
            return self.literal(b"null").map(|()| None);
        }
        let mut calls = SmallVec::new();
        self.array(|r| {
            calls.push(r.tool_call()?);
            Some(())
        })?;
        Some(Some(calls))
    }

    fn tool_call(&mut self) -> Option<ToolCallDelta<'a>> {
        let mut seen = 0u8;
        let mut call = ToolCallDelta {
            index: None,
            id: None,
            function: None,
        };
        self.object(|r, key| {
            let bit = match key {
                b"index" => 1,
                b"id" => 2,
                b"function" => 4,
                _ => return r.skip(0),
            };
            (seen & bit == 0).then_some(())?;
            seen |= bit;
            match bit {
                1 => call.index = Some(r.index()?),
                2 => call.id = r.opt_str()?,
                _ => call.function = Some(r.function()?),
            }
            Some(())
        })?;
        Some(call)
    }

    fn function(&mut self) -> Option<FunctionDelta<'a>> {
        let mut seen = 0u8;
        let mut function = FunctionDelta {
            name: None,
            arguments: None,
        };
        self.object(|r, key| {
            let bit = match key {
                b"name" => 1,
                b"arguments" => 2,
                _ => return r.skip(0),
            };
            (seen & bit == 0).then_some(())?;
            seen |= bit;
            match bit {
                1 => function.name = r.opt_str()?,
                _ => function.arguments = r.opt_str()?.map(Arguments),
            }
            Some(())
        })?;
        Some(function)
    }
}

/// The end of the run of string bytes starting at `pos` that need no attention: the position
/// of the first `"`, `\\` or control character (or the end). Eight bytes at a time.
fn plain_run(bytes: &[u8], mut pos: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(word) = bytes.get(pos..pos + 8) {
        let mut lanes = [0u8; 8];
        lanes.copy_from_slice(word);
        let v = u64::from_le_bytes(lanes);
        let zero_in = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
        let hits = zero_in(v ^ (ONES * u64::from(b'"')))
            | zero_in(v ^ (ONES * u64::from(b'\\')))
            | (v.wrapping_sub(ONES * 0x20) & !v & HIGH);
        if hits != 0 {
            // The lowest flagged lane is exact (borrows only run upwards from a true hit).
            return pos + (hits.trailing_zeros() / 8) as usize;
        }
        pos += 8;
    }
    while let Some(&b) = bytes.get(pos) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            break;
        }
        pos += 1;
    }
    pos
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
