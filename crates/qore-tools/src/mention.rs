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
//! - a literal `@` before a word is written `\@word` (no mention: `\` is not white space).
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
    let mut found = Vec::new();
    let mut before: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let starts = c == '@' && before.is_none_or(char::is_whitespace);
        before = Some(c);
        if !starts {
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
