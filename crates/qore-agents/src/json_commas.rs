//! The trailing-comma stripper that lets partials write `,` after every element: a comma
//! followed (after whitespace) by `]` or `}` is removed, and so is a comma right after `[`
//! or `{` (a first element that rendered to nothing).
//!
//! Promises: string-aware (commas, brackets, `\"` and `\\` inside JSON strings are never
//! touched); one pass, no allocation when there is nothing to strip; everything else,
//! whitespace included, is kept byte for byte, so the caller's JSON parser still reports
//! real mistakes (a missing comma, an unclosed bracket) where they are.
//!
//! Hand-written because it is a dozen lines on the rendering hot path and no crate does
//! exactly this (json5 parsers accept much more than trailing commas).

use std::borrow::Cow;

/// `text` without trailing commas (see the module doc).
pub fn strip_trailing_commas(text: &str) -> Cow<'_, str> {
    strip(text).0
}

/// [`strip_trailing_commas`] of one piece of a text cut between JSON tokens, so that the
/// pieces of a text are stripped apart and joined by [`join_pieces`]: `None` when the
/// piece ends inside a string.
pub fn strip_piece(text: &str) -> Option<Cow<'_, str>> {
    let (out, in_string) = strip(text);
    (!in_string).then_some(out)
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Append stripped `pieces` to `out` as [`strip_trailing_commas`] of their concatenation
/// would read: a piece's last comma is dropped when the next piece opens with `]` or `}`.
/// `false` (and `out` unspecified) when a piece opens with a comma: the caller strips the
/// whole text instead.
pub fn join_pieces<'p>(pieces: impl IntoIterator<Item = &'p [u8]>, out: &mut Vec<u8>) -> bool {
    // Where the last comma written stands, when only whitespace follows it.
    let mut pending: Option<usize> = None;
    for bytes in pieces {
        let Some(first) = bytes.iter().position(|b| !is_space(*b)) else {
            out.extend_from_slice(bytes);
            continue;
        };
        match bytes[first] {
            b',' => return false,
            b']' | b'}' => {
                if let Some(at) = pending.take() {
                    out.remove(at);
                }
            }
            _ => {}
        }
        let start = out.len();
        out.extend_from_slice(bytes);
        let last = bytes.iter().rposition(|b| !is_space(*b)).unwrap_or(first);
        pending = (bytes[last] == b',').then_some(start + last);
    }
    true
}

/// The range of UTF-8 `text` that `str::trim` keeps, decoding only its ends (a text that
/// is not UTF-8 where it is decoded is kept from there).
pub fn trim_range(text: &[u8]) -> std::ops::Range<usize> {
    const WINDOW: usize = 64;
    let mut start = 0;
    while start < text.len() {
        let window = &text[start..text.len().min(start + WINDOW)];
        let valid = match std::str::from_utf8(window) {
            Ok(s) => s,
            Err(e) => std::str::from_utf8(&window[..e.valid_up_to()]).unwrap_or_default(),
        };
        let space = valid.len() - valid.trim_start().len();
        start += space;
        if space == 0 || space < valid.len() {
            break;
        }
    }
    let mut end = text.len();
    while end > start {
        let mut from = end.saturating_sub(WINDOW).max(start);
        while from < end && text[from] & 0xC0 == 0x80 {
            from += 1; // a character's continuation byte: start at the next character
        }
        let Ok(valid) = std::str::from_utf8(&text[from..end]) else {
            break;
        };
        let space = valid.len() - valid.trim_end().len();
        end -= space;
        if space == 0 || space < valid.len() {
            break;
        }
    }
    start..end
}

/// Where a scan stands with respect to JSON strings.
#[derive(Default)]
struct Strings {
    inside: bool,
    escaped: bool,
}

impl Strings {
    /// Take byte `b`; `true` when it is part of a string (its closing quote included).
    fn take(&mut self, b: u8) -> bool {
        if !self.inside {
            self.inside = b == b'"';
            return self.inside;
        }
        match b {
            _ if self.escaped => self.escaped = false,
            b'\\' => self.escaped = true,
            b'"' => self.inside = false,
            _ => {}
        }
        true
    }
}

/// Whether `text` ends inside a list, right after its `[` or after a comma (whitespace
/// aside): where list elements may follow.
pub fn ends_in_a_list(text: &str) -> bool {
    let mut open = Vec::new();
    let mut strings = Strings::default();
    let mut last = 0u8;
    for &b in text.as_bytes() {
        if strings.take(b) {
            last = b'"';
            continue;
        }
        match b {
            b'[' | b'{' => open.push(b),
            b']' | b'}' => {
                open.pop();
            }
            _ => {}
        }
        if !is_space(b) {
            last = b;
        }
    }
    open.last() == Some(&b'[') && matches!(last, b'[' | b',')
}

/// The stripped text, and whether it ends inside a string.
fn strip(text: &str) -> (Cow<'_, str>, bool) {
    let bytes = text.as_bytes();
    let mut drop: Vec<usize> = Vec::new();
    let mut strings = Strings::default();
    // The last comma seen outside strings with only whitespace after it, and whether the
    // last structural byte was an opening bracket.
    let mut pending: Option<usize> = None;
    let mut after_open = false;
    for (i, &b) in bytes.iter().enumerate() {
        if strings.take(b) {
            // A string is a value (harmless again inside it).
            pending = None;
            after_open = false;
            continue;
        }
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b',' => {
                if after_open {
                    drop.push(i);
                } else if let Some(earlier) = pending.replace(i) {
                    // `,,`: the earlier one separated nothing.
                    drop.push(earlier);
                }
            }
            b']' | b'}' => {
                if let Some(at) = pending.take() {
                    drop.push(at);
                }
                after_open = false;
            }
            b'[' | b'{' => {
                pending = None;
                after_open = true;
            }
            _ => {
                pending = None;
                after_open = false;
            }
        }
    }
    if drop.is_empty() {
        return (Cow::Borrowed(text), strings.inside);
    }
    drop.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for at in drop {
        out.push_str(&text[last..at]);
        last = at + 1;
    }
    out.push_str(&text[last..]);
    (Cow::Owned(out), strings.inside)
}

#[cfg(test)]
mod tests {
    use super::strip_trailing_commas as strip;

    #[test]
    fn trailing_commas_before_closers_go() {
        assert_eq!(strip("[1, 2, ]"), "[1, 2 ]");
        assert_eq!(strip("{\"a\": 1,\n}"), "{\"a\": 1\n}");
        assert_eq!(strip("[ {\"a\": [1,],}, ]"), "[ {\"a\": [1]} ]");
    }

    #[test]
    fn leading_and_doubled_commas_go() {
        assert_eq!(strip("[ , 1]"), "[  1]");
        assert_eq!(strip("[1, 2]"), "[1, 2]");
        assert_eq!(strip("[,]"), "[]");
    }

    #[test]
    fn strings_are_never_touched() {
        let text = r#"["a,]", "b\",}", "c\\", ]"#;
        assert_eq!(strip(text), r#"["a,]", "b\",}", "c\\" ]"#);
        let keep = r#"{"k": ",]}"}"#;
        assert!(matches!(strip(keep), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn pieces_stripped_apart_and_joined_are_the_whole_text_stripped() {
        let texts: &[&[&str]] = &[
            &["[", "{\"a\": [1,],},", "\n{\"b\": 2},", "]"],
            &["[\n{\"s\": \",]\"}, ", "", "  ", "{}, ", "\n ]"],
            &["{\"k\": [", "1,", "2 ,", "\n", "]}"],
            &["[", "]"],
            &["[1,", "{\"x\": \"\\\\\"},", "2", "]"],
        ];
        for pieces in texts {
            let whole = strip(&pieces.concat()).into_owned();
            let stripped: Vec<String> = (pieces.iter())
                .map(|p| super::strip_piece(p).unwrap().into_owned())
                .collect();
            let mut joined = Vec::new();
            assert!(super::join_pieces(
                stripped.iter().map(String::as_bytes),
                &mut joined
            ));
            assert_eq!(String::from_utf8(joined).unwrap(), whole, "{pieces:?}");
        }
        assert!(super::strip_piece("[\"open").is_none());
        assert!(!super::join_pieces([&b"[1"[..], b", 2]"], &mut Vec::new()));
    }

    #[test]
    fn trimmed_ends_are_str_trims() {
        let long = format!("{}[1]{}", " \u{3000}".repeat(40), "\u{2028}\n".repeat(40));
        let texts = [
            "",
            "   ",
            "[1]",
            " \n\t[1, 2]\r\n ",
            "\u{a0}\u{3000}[\"ü\"]\u{2029}\u{85}",
            "日本[\"語\"]日本",
            "\u{3000}",
            &long,
        ];
        for text in texts {
            let kept = super::trim_range(text.as_bytes());
            assert_eq!(&text[kept], text.trim(), "{text:?}");
        }
    }

    #[test]
    fn where_list_elements_may_follow() {
        let cases = [
            ("[", true),
            ("[\n{\"a\": \"[,\"},\n", true),
            ("{\"a\": [1, ", true),
            ("{\"a\": 1,", false),
            ("[1", false),
            ("[\"unclosed [,", false),
            ("[[1],", true),
            ("[[1]", false),
        ];
        for (text, expected) in cases {
            assert_eq!(super::ends_in_a_list(text), expected, "{text:?}");
        }
    }

    #[test]
    fn a_missing_comma_is_left_for_the_parser() {
        let text = "[1 2]";
        assert_eq!(strip(text), text);
        assert!(serde_json::from_str::<serde_json::Value>(&strip(text)).is_err());
    }

    #[test]
    fn the_result_parses_for_every_prefix_of_a_partial_style_list() {
        let mut text = String::from("[");
        for n in 0..5 {
            let json = format!("{text}]");
            let parsed: Vec<u32> = serde_json::from_str(&strip(&json)).unwrap();
            assert_eq!(parsed, (0..n).collect::<Vec<_>>());
            text.push_str(&format!("{n},\n"));
        }
    }
}
