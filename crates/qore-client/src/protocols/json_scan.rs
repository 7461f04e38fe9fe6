//! [`Scanner`]: a strict, allocation-free JSON reader for the fast paths of the stream
//! decoders (`protocols/*/fast.rs`).
//!
//! Why hand-written: a streamed answer is a long run of small JSON documents, and going
//! through serde's visitor machinery (key strings to field enums, `Option` layers, one
//! `IgnoredAny` walk per unused key) was the largest per-delta cost left after framing
//! (measured against the parse floors in `benches/chat_stream.rs` and
//! `benches/decode_protocols.rs`). A fast path matches keys as bytes, skips the values it
//! does not use, and builds the same borrowed wire structs its protocol's serde path builds.
//!
//! Contract: every method returns `None` on anything it does not accept, invalid JSON
//! included (RFC 8259, the input already known to be UTF-8), and never panics; strings
//! are borrowed when they have no escapes. A fast path built on it returns `None` for any
//! shape it does not fully understand, so its caller falls back to serde, which also
//! reports errors. Keys with escapes and nesting deeper than [`MAX_DEPTH`] are left to serde.

use std::borrow::Cow;

/// Nesting deeper than this in a skipped value is left to serde.
pub const MAX_DEPTH: u32 = 64;

pub struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Self {
        Scanner {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        }
    }

    /// Whitespace and then the end of the input.
    pub fn at_end(&mut self) -> bool {
        self.ws();
        self.pos == self.bytes.len()
    }

    /// The next byte after whitespace, not consumed.
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.bytes.get(self.pos).copied()
    }

    /// `null`, or `value` read by `read`: `Some(None)` for `null`.
    pub fn nullable<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|()| None);
        }
        read(self).map(Some)
    }

    /// `true` or `false`.
    pub fn bool(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.literal(b"true").map(|()| true),
            b'f' => self.literal(b"false").map(|()| false),
            _ => None,
        }
    }

    /// A string (not `null`).
    pub fn str(&mut self) -> Option<Cow<'a, str>> {
        (self.peek()? == b'"').then_some(())?;
        self.string()
    }

    /// Read an object whose values `field` reads, each key at most once: `field` returns
    /// the key's bit (a distinct power of two, or 0 for a key it skipped or may repeat).
    pub fn object_once(
        &mut self,
        mut field: impl FnMut(&mut Self, &[u8]) -> Option<u32>,
    ) -> Option<()> {
        let mut seen = 0u32;
        self.object(|r, key| {
            let bit = field(r, key)?;
            (seen & bit == 0).then_some(())?;
            seen |= bit;
            Some(())
        })
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// Skip whitespace, then take `byte` if it is next.
    pub fn eat(&mut self, byte: u8) -> bool {
        self.ws();
        if self.bytes.get(self.pos) == Some(&byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// An object; `field` is called with each key, positioned at its value.
    pub fn object(&mut self, mut field: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
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
    pub fn key(&mut self) -> Option<&'a [u8]> {
        (self.bytes.get(self.pos) == Some(&b'"')).then_some(())?;
        let start = self.pos + 1;
        let end = plain_run(self.bytes, start);
        (self.bytes.get(end) == Some(&b'"')).then_some(())?;
        self.pos = end + 1;
        Some(&self.bytes[start..end])
    }

    pub fn null(&mut self) -> Option<()> {
        self.ws();
        self.literal(b"null")
    }

    pub fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.bytes[self.pos..].starts_with(word).then_some(())?;
        self.pos += word.len();
        Some(())
    }

    /// `null` or a string.
    pub fn opt_str(&mut self) -> Option<Option<Cow<'a, str>>> {
        self.ws();
        match self.bytes.get(self.pos)? {
            b'n' => self.literal(b"null").map(|()| None),
            b'"' => self.string().map(Some),
            _ => None,
        }
    }

    /// A string, borrowed when it has no escapes (the opening quote at `pos`).
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
    pub fn skip(&mut self, depth: u32) -> Option<()> {
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

    pub fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
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
    pub fn number(&mut self) -> Option<&'a str> {
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
    pub fn index(&mut self) -> Option<u32> {
        self.number()?.parse().ok()
    }
}

/// The end of the run of string bytes starting at `pos` that need no attention: the position
/// of the first `"`, `\\` or control character (or the end). Eight bytes at a time.
pub fn plain_run(bytes: &[u8], mut pos: usize) -> usize {
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
#[path = "json_scan_tests.rs"]
mod tests;
