//! `@path` mentions in a message: where they are and which path each names.
//!
//! The rule ([`mentions`]):
//! - a mention is an `@` at the start of the text or after white space, followed by a path:
//!   `a@b` (an e-mail address, a decorator glued to a word) is no mention, and neither is a
//!   lone `@`;
//! - the path runs to the next white space; a backslash takes the next character as it is
//!   (`@my\ notes.txt` names `my notes.txt`); or it is quoted, `@"my notes.txt"`, running to
//!   the next `"` (an unclosed quote is no mention);
//! - sentence punctuation right after an unquoted path is not part of it: trailing `,` `;`
//!   `:` `!` `?` `)` `]` `}` `'` `"`, and a trailing `.` unless it follows `/` or `.` or is
//!   the whole path (`@src/main.rs.` names `src/main.rs`; `@.`, `@..` and `@src/.` keep
//!   theirs); escape or quote a path that really ends in one of them;
//! - a literal `@` before a word is written `\@word` (no mention: `\` is not white space);
//! - an `@` in code is code: inside a fenced block (a line starting, after at most three
//!   spaces, with three or more backticks or tildes, to the line with a like fence at least
//!   as long, or to the end) or an inline code span (a run of backticks to the next run of
//!   the same length; an unclosed run is text), as in Markdown.
//!
//! The text itself is never changed: the mentions are read from it, and what they attach is
//! added by the caller (see the `attach` module).

/// One mention: the path it names and the byte range of the whole token (from the `@`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    pub path: String,
    pub start: usize,
    pub end: usize,
}

/// Characters that end a sentence or a parenthesis rather than a path.
const TRAILING: &[char] = &[',', ';', ':', '!', '?', ')', ']', '}', '\'', '"'];

/// Every mention in `text`, in order (see the module doc for the rule).
pub fn mentions(text: &str) -> Vec<Mention> {
    let code = code_spans(text);
    let in_code = |at: usize| code.iter().any(|span| span.contains(&at));
    let mut found = Vec::new();
    let mut before: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let starts = c == '@' && before.is_none_or(char::is_whitespace);
        before = Some(c);
        if !starts || in_code(at) {
            continue;
        }
        let rest = &text[at + 1..];
        let Some((path, len)) = mention_path(rest) else {
            continue;
        };
        let end = at + 1 + len;
        found.push(Mention {
            path,
            start: at,
            end,
        });
        // Go on after the token.
        while chars.peek().is_some_and(|(i, _)| *i < end) {
            if let Some((_, c)) = chars.next() {
                before = Some(c);
            }
        }
    }
    found
}

/// The byte ranges of `text` that are code (see the module doc): fenced blocks, then inline
/// spans in the lines outside them.
fn code_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let mut fence: Option<(char, usize, usize)> = None; // (character, length, block start)
    let mut prose_from = 0;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let line_end = line_start + line.len();
        let indent = line.len() - line.trim_start_matches(' ').len();
        let marker = (indent <= 3)
            .then(|| fence_marker(&line[indent..]))
            .flatten();
        match (fence, marker) {
            (None, Some((c, n))) => {
                inline_spans(text, prose_from..line_start, &mut spans);
                fence = Some((c, n, line_start));
            }
            (Some((c, n, start)), Some((close, m)))
                if close == c && m >= n && line[indent + m..].trim().is_empty() =>
            {
                spans.push(start..line_end);
                fence = None;
                prose_from = line_end;
            }
            _ => {}
        }
        line_start = line_end;
    }
    match fence {
        Some((_, _, start)) => spans.push(start..text.len()),
        None => inline_spans(text, prose_from..text.len(), &mut spans),
    }
    spans
}

/// The fence a line starts with: its character and length (three or more).
fn fence_marker(line: &str) -> Option<(char, usize)> {
    let c = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = line.len() - line.trim_start_matches(c).len();
    (n >= 3).then_some((c, n))
}

/// The inline code spans of `text[range]`, added to `spans`.
fn inline_spans(
    text: &str,
    range: std::ops::Range<usize>,
    spans: &mut Vec<std::ops::Range<usize>>,
) {
    let bytes = text.as_bytes();
    let run_at = |i: usize| {
        bytes[i..range.end]
            .iter()
            .take_while(|b| **b == b'`')
            .count()
    };
    let mut i = range.start;
    while i < range.end {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let open = run_at(i);
        let mut j = i + open;
        let mut close = None;
        while j < range.end {
            if bytes[j] == b'`' {
                let run = run_at(j);
                if run == open {
                    close = Some(j + run);
                    break;
                }
                j += run;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                spans.push(i..end);
                i = end;
            }
            None => i += open,
        }
    }
}

/// Where the path of the mention being typed at the end of `before_cursor` starts (the byte
/// after its `@`), for completion: the last word must be an `@` at the start of the text or
/// after white space. Quoted and escaped paths are not completed.
pub fn typed_mention(before_cursor: &str) -> Option<usize> {
    let start = before_cursor.rfind(char::is_whitespace).map_or(0, |i| {
        i + before_cursor[i..].chars().next().map_or(1, char::len_utf8)
    });
    let word = &before_cursor[start..];
    let path = word.strip_prefix('@')?;
    (!path.starts_with('"') && !path.contains('\\')).then_some(start + 1)
}

/// The path at the start of `rest` (the text after an `@`) and the bytes it takes there.
fn mention_path(rest: &str) -> Option<(String, usize)> {
    if let Some(quoted) = rest.strip_prefix('"') {
        let close = quoted.find('"')?;
        let path = &quoted[..close];
        return (!path.is_empty()).then(|| (path.to_owned(), close + 2));
    }
    // (character, escaped, byte offset after it)
    let mut taken: Vec<(char, bool, usize)> = Vec::new();
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        if c.is_whitespace() {
            break;
        }
        if c == '\\' {
            match chars.next() {
                Some((j, next)) => taken.push((next, true, j + next.len_utf8())),
                None => taken.push((c, false, i + 1)),
            }
            continue;
        }
        taken.push((c, false, i + c.len_utf8()));
    }
    while let Some(&(c, escaped, _)) = taken.last() {
        let cut = !escaped && (TRAILING.contains(&c) || (c == '.' && loose_dot(&taken)));
        if !cut {
            break;
        }
        taken.pop();
    }
    let &(_, _, len) = taken.last()?;
    Some((taken.iter().map(|(c, _, _)| c).collect(), len))
}

/// Whether the `.` ending `taken` is a full stop rather than part of the path.
fn loose_dot(taken: &[(char, bool, usize)]) -> bool {
    match taken.len().checked_sub(2).map(|i| taken[i]) {
        None => false,
        Some((before, escaped, _)) => escaped || (before != '/' && before != '.'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_follow_the_rule() {
        // (text, the paths it mentions)
        let cases: &[(&str, &[&str])] = &[
            ("look at @src/main.rs please", &["src/main.rs"]),
            ("@a.rs and @b/c.rs", &["a.rs", "b/c.rs"]),
            ("mail me at me@example.com", &[]),
            ("a lone @ sign", &[]),
            ("@", &[]),
            ("what does @src/main.rs. say?", &["src/main.rs"]),
            (
                "see @src/lib.rs, then @Cargo.toml!",
                &["src/lib.rs", "Cargo.toml"],
            ),
            ("(@notes.md)", &[]),
            ("list (see @docs) now", &["docs"]),
            ("the root: @.", &["."]),
            ("the parent: @..", &[".."]),
            ("@src/.", &["src/."]),
            ("@../outside", &["../outside"]),
            (r"@my\ notes.txt is here", &["my notes.txt"]),
            ("@\"my notes.txt\" is here", &["my notes.txt"]),
            ("@\"unclosed path", &[]),
            ("@\"\" empty", &[]),
            (r"\@decorator is literal", &[]),
            (r"@odd\.", &["odd."]),
            ("tab\t@x\nnewline\n@y", &["x", "y"]),
            ("@@twice", &["@twice"]),
            ("@.,", &["."]),
            ("ünï @dïr/fïle.rs", &["dïr/fïle.rs"]),
            // Code is code: fenced blocks (``` or ~~~, closed or not) and inline spans.
            ("```py\n@property\ndef x(): ...\n```\nsee @a.rs", &["a.rs"]),
            (
                "@a.rs\n~~~~\n@b.rs\n~~~\n@c.rs\n~~~~\n@d.rs",
                &["a.rs", "d.rs"],
            ),
            ("  ```\n@open.rs never closed", &[]),
            ("```\n@x\n``` not a close\n@y\n```", &[]),
            ("use `@Override` on @Main.java", &["Main.java"]),
            ("``a ` @in`` @out", &["out"]),
            ("an unclosed ` @tick", &["tick"]),
            ("    ```\n@indented.rs", &["indented.rs"]),
        ];
        for (text, paths) in cases {
            let found: Vec<String> = mentions(text).into_iter().map(|m| m.path).collect();
            assert_eq!(found, *paths, "{text:?}");
        }
    }

    #[test]
    fn the_mention_being_typed_is_the_last_word() {
        // (text before the cursor, where the typed path starts)
        let cases: &[(&str, Option<usize>)] = &[
            ("@sr", Some(1)),
            ("look at @src/ma", Some(9)),
            ("look at\t@", Some(9)),
            ("me@sr", None),
            ("@src/main.rs and more", None),
            ("@\"my no", None),
            ("@my\\ no", None),
            ("", None),
            ("ü @x", Some(4)),
        ];
        for (text, start) in cases {
            assert_eq!(typed_mention(text), *start, "{text:?}");
        }
    }

    #[test]
    fn a_mention_spans_its_token() {
        let text = "see @\"a b.rs\" and @c.rs.";
        let spans: Vec<&str> = mentions(text)
            .iter()
            .map(|m| &text[m.start..m.end])
            .collect();
        assert_eq!(spans, ["@\"a b.rs\"", "@c.rs"]);
    }
}
