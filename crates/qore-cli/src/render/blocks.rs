//! What one line of Markdown opens or is, told from that line alone: a code fence, an ATX
//! heading, a thematic break, a block quote, a list item, a blank line or text.
//!
//! Promises: the rules are CommonMark's where a single line can decide them (up to three
//! spaces before a heading, break or quote; fences of three or more backticks or tildes,
//! at any indentation so a code block inside a list item is seen; a backtick fence's info
//! string has no backtick; a heading's closing `#`s are not part of its text); a line that
//! fits none of them is text, with its indentation kept.

/// What a line is.
#[derive(Debug, PartialEq, Eq)]
pub enum Block<'a> {
    Blank,
    /// An opening fence: its indentation, character, length and info string.
    Fence {
        indent: usize,
        marker: char,
        len: usize,
        info: &'a str,
    },
    Heading {
        level: usize,
        text: &'a str,
    },
    Rule,
    /// One level of block quote; `rest` is what is inside it.
    Quote {
        rest: &'a str,
    },
    /// A list item: its indentation, the marker as written (`-`, `1.`), and its text.
    Item {
        indent: usize,
        marker: &'a str,
        ordered: bool,
        text: &'a str,
    },
    Text {
        indent: usize,
        text: &'a str,
    },
}

/// Columns of leading whitespace (a tab counts to the next multiple of four) and the rest.
pub fn indentation(line: &str) -> (usize, &str) {
    let mut columns = 0;
    for (at, ch) in line.char_indices() {
        match ch {
            ' ' => columns += 1,
            '\t' => columns += 4 - columns % 4,
            _ => return (columns, &line[at..]),
        }
    }
    (columns, "")
}

/// The run of `marker` that starts `text` (its length), when it is 3 or more.
fn fence_run(text: &str) -> Option<(char, usize)> {
    let marker = text.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = text.chars().take_while(|c| *c == marker).count();
    (len >= 3).then_some((marker, len))
}

/// `line` closes a fence of `marker` opened with `len` of them.
pub fn closes(line: &str, marker: char, len: usize) -> bool {
    let (_, text) = indentation(line);
    match fence_run(text) {
        Some((found, run)) => found == marker && run >= len && text[run..].trim().is_empty(),
        None => false,
    }
}

pub fn classify(line: &str) -> Block<'_> {
    let (indent, text) = indentation(line);
    if text.trim().is_empty() {
        return Block::Blank;
    }
    if let Some((marker, len)) = fence_run(text) {
        let info = text[len..].trim();
        if marker == '~' || !info.contains('`') {
            return Block::Fence {
                indent,
                marker,
                len,
                info,
            };
        }
    }
    if indent <= 3 {
        if let Some(block) = heading(text).or_else(|| rule(text)) {
            return block;
        }
        if let Some(rest) = text.strip_prefix('>') {
            let rest = rest.strip_prefix(' ').unwrap_or(rest);
            return Block::Quote { rest };
        }
    }
    if let Some((marker, ordered, rest)) = item(text) {
        return Block::Item {
            indent,
            marker,
            ordered,
            text: rest,
        };
    }
    Block::Text {
        indent,
        text: text.trim_end(),
    }
}

fn heading(text: &str) -> Option<Block<'_>> {
    let level = text.chars().take_while(|c| *c == '#').count();
    let rest = &text[level..];
    if !(1..=6).contains(&level) || !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let rest = rest.trim();
    // A closing sequence counts when it is all `#` and set off by a space (or is all).
    let body = rest.trim_end_matches('#');
    let text = match body.is_empty() || body.ends_with([' ', '\t']) {
        true => body.trim_end(),
        false => rest,
    };
    Some(Block::Heading { level, text })
}

fn rule(text: &str) -> Option<Block<'_>> {
    let marker = text
        .chars()
        .next()
        .filter(|c| matches!(c, '-' | '*' | '_'))?;
    let mut count = 0;
    for ch in text.chars() {
        match ch {
            c if c == marker => count += 1,
            ' ' | '\t' => {}
            _ => return None,
        }
    }
    (count >= 3).then_some(Block::Rule)
}

/// A list item's marker, whether it is numbered, and its text.
fn item(text: &str) -> Option<(&str, bool, &str)> {
    let after_marker = |marker_len: usize| {
        let rest = &text[marker_len..];
        match rest.is_empty() || rest.starts_with([' ', '\t']) {
            true => Some(rest.trim()),
            false => None,
        }
    };
    if text.starts_with(['-', '*', '+']) {
        return after_marker(1).map(|rest| (&text[..1], false, rest));
    }
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    if (1..=9).contains(&digits) && text[digits..].starts_with(['.', ')']) {
        return after_marker(digits + 1).map(|rest| (&text[..digits + 1], true, rest));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_told_apart() {
        let cases = [
            ("", Block::Blank),
            ("   \t", Block::Blank),
            (
                "```rust",
                Block::Fence {
                    indent: 0,
                    marker: '`',
                    len: 3,
                    info: "rust",
                },
            ),
            (
                "    ~~~~ py ",
                Block::Fence {
                    indent: 4,
                    marker: '~',
                    len: 4,
                    info: "py",
                },
            ),
            (
                "``` a`b",
                Block::Text {
                    indent: 0,
                    text: "``` a`b",
                },
            ),
            (
                "# Title",
                Block::Heading {
                    level: 1,
                    text: "Title",
                },
            ),
            (
                "### Mid ###",
                Block::Heading {
                    level: 3,
                    text: "Mid",
                },
            ),
            (
                "## C#",
                Block::Heading {
                    level: 2,
                    text: "C#",
                },
            ),
            (
                "#hashtag",
                Block::Text {
                    indent: 0,
                    text: "#hashtag",
                },
            ),
            ("---", Block::Rule),
            (" * * *", Block::Rule),
            ("> quoted", Block::Quote { rest: "quoted" }),
            (">> deeper", Block::Quote { rest: "> deeper" }),
            (
                "- item",
                Block::Item {
                    indent: 0,
                    marker: "-",
                    ordered: false,
                    text: "item",
                },
            ),
            (
                "    * nested",
                Block::Item {
                    indent: 4,
                    marker: "*",
                    ordered: false,
                    text: "nested",
                },
            ),
            (
                "12) twelfth",
                Block::Item {
                    indent: 0,
                    marker: "12)",
                    ordered: true,
                    text: "twelfth",
                },
            ),
            (
                "-not an item",
                Block::Text {
                    indent: 0,
                    text: "-not an item",
                },
            ),
            (
                "  continued text  ",
                Block::Text {
                    indent: 2,
                    text: "continued text",
                },
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(classify(line), expected, "{line:?}");
        }
    }

    #[test]
    fn a_fence_closes_on_its_own_marker_at_least_as_long() {
        let cases = [
            ("```", '`', 3, true),
            ("  `````  ", '`', 3, true),
            ("``", '`', 3, false),
            ("~~~", '`', 3, false),
            ("``` rust", '`', 3, false),
            ("~~~", '~', 4, false),
        ];
        for (line, marker, len, expected) in cases {
            assert_eq!(closes(line, marker, len), expected, "{line:?}");
        }
    }
}
