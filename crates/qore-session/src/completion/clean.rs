//! What the editor inserts, from a model's reply: a completion at the cursor
//! ([`clean_completion`]) or the new text of a selection ([`clean_refactor`]).
//!
//! Promises (pure functions; bad or odd input gives `None` or the text as it is, never a panic):
//! - line endings: `\r\n` in a reply becomes `\n` (the caller writes the file's own endings);
//! - fences: the body of the first fenced block (```` ```lang ```` … ```` ``` ````, a missing
//!   closing fence meaning "to the end"); a fence opened and closed on one line gives the text
//!   between the first and the last fence; no fence, the whole reply;
//! - prose: at most [`MAX_PROSE_LINES`] leading lines are dropped when they read as prose —
//!   starting "Here is", "Here's", "The completed", "The refactored" or "I've changed" (any
//!   case), or shorter than 50 chars, ending in `:`, starting with a capital letter and holding
//!   no code punctuation (so `else:`, `def f():` and `Foo(x):` are code, `Completion:` prose);
//!   blank lines right after dropped prose go with it;
//! - a completion loses what repeats the text around the cursor: its head when it restates the
//!   tail of the text before the cursor (a tail starting at a line's start or at its first
//!   non-blank char, not blank itself; the longest wins), and its trailing whole lines when
//!   they equal the lines after the cursor's line;
//! - [`Mode::Single`] keeps the first line only; a one-line result loses its trailing newline;
//!   a blank result is `None` (no item at all);
//! - [`Completion::replace`]: how many chars right of the cursor the editor overwrites (see
//!   [`replace_length`]);
//! - a refactor's text is trimmed of line breaks at both ends and re-indented to the
//!   selection's indentation when the reply's common indentation differs.

/// How many leading prose lines are dropped at most.
pub const MAX_PROSE_LINES: usize = 3;

/// Prose lines shorter than this (in chars) that end in `:` are prose.
const SHORT_PROSE_CHARS: usize = 50;

/// What a reply opening with one of these says is prose (compared in lower case).
const PROSE_OPENINGS: [&str; 6] = [
    "here is",
    "here's",
    "the completed",
    "the refactored",
    "i've changed",
    "i have changed",
];

/// Closers: what ends a bracket or a statement, which a completion may overwrite right of
/// the cursor.
const CLOSERS: &str = ")]};,";

/// The text around the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CursorText<'a> {
    /// The text before the cursor: the prefix, ending with the cursor line's text left of it.
    pub before: &'a str,
    /// The text after the cursor: the cursor line's text right of it, then the suffix.
    pub after: &'a str,
}

/// Whether a completion may span lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Up to the end of the cursor's line.
    Single,
    /// As many lines as the model wrote.
    Multi,
}

/// What the editor inserts at the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The text inserted at the cursor.
    pub text: String,
    /// How many chars (Unicode scalar values) right of the cursor the text overwrites.
    pub replace: usize,
}

/// The completion to insert from a model's `reply`, or `None` when nothing is left.
pub fn clean_completion(reply: &str, cursor: &CursorText<'_>, mode: Mode) -> Option<Completion> {
    let reply = reply.replace("\r\n", "\n");
    let body = fenced_body(&reply).unwrap_or(&reply);
    let body = drop_prose(body);
    let body = drop_restated_before(body, cursor.before);
    let mut text = drop_restated_after(body, cursor.after);
    if mode == Mode::Single {
        text = text.split('\n').next().unwrap_or_default();
    }
    let trimmed = text.trim_end_matches('\n');
    if !trimmed.contains('\n') {
        text = trimmed;
    }
    if text.trim().is_empty() {
        return None;
    }
    let right = cursor.after.split('\n').next().unwrap_or_default();
    let right = right.strip_suffix('\r').unwrap_or(right);
    Some(Completion {
        text: text.to_string(),
        replace: replace_length(text, right),
    })
}

/// The new text of a selection from a model's `reply`, indented as the selection
/// (`selection_indent`), or `None` when nothing is left.
pub fn clean_refactor(reply: &str, selection_indent: &str) -> Option<String> {
    let reply = reply.replace("\r\n", "\n");
    let body = fenced_body(&reply).unwrap_or(&reply);
    let body = drop_prose(body.trim_matches(['\r', '\n'])).trim_matches(['\r', '\n']);
    if body.trim().is_empty() {
        return None;
    }
    Some(reindent(body, selection_indent))
}

/// How many chars of `right` (the cursor line's text right of the cursor) the completion
/// `text` overwrites: the longest common prefix of its first line and `right`; the whole of
/// `right` when what remains after that prefix is only closers (`)]};,`) and whitespace
/// and the first line ends in a closer of its own (a suggestion that brings no closer never
/// overwrites one), or when the text ends with a closer found in `right`.
pub fn replace_length(text: &str, right: &str) -> usize {
    let first = text.split('\n').next().unwrap_or_default();
    let common = first
        .chars()
        .zip(right.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let rest: String = right.chars().skip(common).collect();
    if rest.is_empty() {
        return common;
    }
    let is_closer = |c: char| CLOSERS.contains(c);
    let only_closers = rest.chars().all(|c| is_closer(c) || c.is_whitespace());
    let first_ends_closed = first.trim_end().chars().last().is_some_and(is_closer);
    let text_ends_with_found_closer = text
        .trim_end()
        .chars()
        .last()
        .is_some_and(|c| is_closer(c) && rest.contains(c));
    if (only_closers && first_ends_closed) || text_ends_with_found_closer {
        right.chars().count()
    } else {
        common
    }
}

/// The body of the first fenced block, or `None` when the text holds no fence.
fn fenced_body(text: &str) -> Option<&str> {
    const FENCE: &str = "```";
    let open = text.find(FENCE)?;
    let after_open = &text[open + FENCE.len()..];
    let (tag, body) = after_open.split_once('\n').unwrap_or((after_open, ""));
    if tag.contains(FENCE) || !after_open.contains('\n') {
        let last = after_open.rfind(FENCE)?;
        return Some(&after_open[..last]);
    }
    let body = match body.find(FENCE) {
        Some(close) => &body[..close],
        None => body,
    };
    Some(match body.rfind('\n') {
        Some(end) if body[end..].trim().is_empty() => &body[..end],
        _ if body.trim().is_empty() => "",
        _ => body,
    })
}

/// Whether a line reads as prose rather than code.
fn is_prose(line: &str) -> bool {
    let line = line.trim();
    let lower = line.to_lowercase();
    if PROSE_OPENINGS
        .iter()
        .any(|opening| lower.starts_with(opening))
    {
        return true;
    }
    line.chars().count() < SHORT_PROSE_CHARS
        && line.ends_with(':')
        && line.chars().next().is_some_and(char::is_uppercase)
        && !line.contains(|c: char| "(){}[]=<>;\"'`".contains(c))
}

/// The text without its leading prose lines (at most [`MAX_PROSE_LINES`]) and the blank
/// lines that follow them.
fn drop_prose(text: &str) -> &str {
    let mut rest = text;
    let mut dropped = 0;
    while dropped < MAX_PROSE_LINES {
        let (line, tail) = rest.split_once('\n').unwrap_or((rest, ""));
        if !is_prose(line) {
            break;
        }
        rest = tail;
        dropped += 1;
    }
    if dropped == 0 {
        return text;
    }
    while let Some((line, tail)) = rest.split_once('\n') {
        if !line.trim().is_empty() {
            break;
        }
        rest = tail;
    }
    rest
}

/// The text without a head that restates the tail of `before`.
fn drop_restated_before<'a>(text: &'a str, before: &str) -> &'a str {
    let line_starts = std::iter::once(0).chain(before.match_indices('\n').map(|(i, _)| i + 1));
    let mut longest = 0;
    for start in line_starts {
        let line_tail = &before[start..];
        let blank = line_tail.len() - line_tail.trim_start_matches([' ', '\t']).len();
        for tail in [line_tail, &line_tail[blank..]] {
            if tail.len() > longest && !tail.trim().is_empty() && text.starts_with(tail) {
                longest = tail.len();
            }
        }
    }
    &text[longest..]
}

/// The text without trailing whole lines equal to the lines after the cursor's line.
fn drop_restated_after<'a>(text: &'a str, after: &str) -> &'a str {
    let body = text.trim_end_matches('\n');
    let lines: Vec<&str> = body.split('\n').collect();
    let next: Vec<&str> = after.split('\n').skip(1).collect();
    for repeated in (1..lines.len()).rev() {
        let kept = lines.len() - repeated;
        let tail = &lines[kept..];
        let same = next.len() >= repeated
            && tail
                .iter()
                .zip(&next)
                .all(|(a, b)| a.trim_end() == b.trim_end());
        if same && tail.iter().any(|line| !line.trim().is_empty()) {
            let cut: usize = lines[..kept].iter().map(|line| line.len() + 1).sum();
            return &body[..cut - 1];
        }
    }
    text
}

/// The text re-indented to `indent` when its common indentation is another one.
fn reindent(text: &str, indent: &str) -> String {
    let common = text
        .split('\n')
        .filter(|line| !line.trim().is_empty())
        .map(|line| &line[..line.len() - line.trim_start_matches([' ', '\t']).len()])
        .reduce(|a, b| {
            let same = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            &a[..same]
        })
        .unwrap_or_default();
    if common == indent {
        return text.to_string();
    }
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| match line.strip_prefix(common) {
            _ if line.trim().is_empty() => String::new(),
            Some(rest) => format!("{indent}{rest}"),
            None => line.to_string(),
        })
        .collect();
    lines.join("\n")
}

#[cfg(test)]
#[path = "clean_tests.rs"]
mod tests;
