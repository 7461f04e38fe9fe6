//! `edit_file`: replace one piece of a text file with another.
//!
//! Promises:
//! - `old_string` must occur exactly once (overlapping occurrences count); with 0 or more
//!   than 1 the file is left alone and the error says how many places matched;
//! - when it occurs nowhere, a whitespace-tolerant fallback runs: its lines (blank lines at
//!   its start and end dropped) are compared with the file's lines with leading and trailing
//!   whitespace trimmed, and must match exactly one run of consecutive lines; those whole
//!   lines are then replaced by `new_string` (blank lines at its start and end dropped),
//!   re-indented by the difference between the file's indentation and `old_string`'s, with
//!   the file's line endings;
//! - the file is opened once and written atomically over exactly what was read, through the
//!   write path `write_file` uses (a file swapped in between is refused), and the result
//!   carries a unified diff of the change;
//! - binary, non-UTF-8, missing and sandbox-refused files are refused;
//! - the change is recorded when the options carry a recorder. Destructive; not
//!   parallel-safe.

use std::sync::Arc;

use qore_core::{CancellationToken, Tool, ToolFuture, ToolOutput, ToolSpec};
use serde::Deserialize;
use serde_json::json;

use crate::diff::unified_diff;
use crate::file_tool::{call_with_args, write_through};
use crate::util::{looks_binary, parse_args};
use crate::{spec, Sandbox, ToolOptions};

const NAME: &str = "edit_file";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    old_string: String,
    new_string: String,
}

/// Edits a file by replacing one exact (or whitespace-tolerant) match.
pub struct EditFile {
    spec: ToolSpec,
    sandbox: Arc<Sandbox>,
    options: Arc<ToolOptions>,
}

impl EditFile {
    pub fn new(sandbox: Arc<Sandbox>, options: Arc<ToolOptions>) -> Self {
        let spec = spec(
            NAME,
            "Edit a text file by replacing old_string with new_string. old_string must match \
             exactly one place in the file: copy it from the file and include enough \
             surrounding lines to make it unique. If it does not match exactly, lines are \
             compared ignoring leading/trailing whitespace (still exactly one place). Returns \
             a unified diff of the change.",
            json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File path relative to the project root."
                    },
                    "old_string": {
                        "type": "string",
                        "minLength": 1,
                        "description": "The text to replace; must occur exactly once."
                    },
                    "new_string": {
                        "type": "string",
                        "description": "The replacement text (may be empty to delete)."
                    }
                },
                "required": ["path", "old_string", "new_string"],
                "additionalProperties": false
            }),
        );
        EditFile {
            spec,
            sandbox,
            options,
        }
    }
}

impl Tool for EditFile {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn call(&self, input: serde_json::Value, cancel: CancellationToken) -> ToolFuture {
        call_with_args(NAME, &self.sandbox, &self.options, input, cancel, edit)
    }
}

fn edit(sandbox: &Sandbox, options: &ToolOptions, args: Args) -> ToolOutput {
    if let Err(why) = check_args(&args) {
        return ToolOutput::error(why);
    }
    let mut done = None;
    let written = write_through(sandbox, options, &args.path, |rel, bytes| {
        let (old, new, how) = edited(rel, bytes, &args).map_err(ToolOutput::error)?;
        let bytes = new.clone().into_bytes();
        done = Some((old, new, how));
        Ok(bytes)
    });
    match (written, done) {
        (Ok((rel, _)), Some((old, new, how))) => {
            let diff = unified_diff(&rel, &old, &new, options.diff_max_lines);
            ToolOutput::text(format!("Edited `{rel}` ({how}).\n{diff}"))
        }
        (Err(out), _) => out,
        (Ok((rel, _)), None) => ToolOutput::error(format!("`{rel}` was not changed")),
    }
}

/// Why the arguments cannot make an edit, before any file is looked at.
fn check_args(args: &Args) -> Result<(), &'static str> {
    if args.old_string.is_empty() {
        return Err(
            "old_string is empty; give the text to replace (use create_file or write_file to \
             write a whole file)",
        );
    }
    if args.old_string == args.new_string {
        return Err("old_string and new_string are the same; nothing would change");
    }
    Ok(())
}

/// The file `rel` holding `bytes` (`None`: no file) as the edit leaves it: the old text,
/// the new text and how `old_string` matched; or why it cannot be edited.
fn edited(
    rel: &str,
    bytes: Option<&[u8]>,
    args: &Args,
) -> Result<(String, String, String), String> {
    let Some(bytes) = bytes else {
        return Err(format!(
            "`{rel}` does not exist; use create_file to create it"
        ));
    };
    if looks_binary(bytes) {
        return Err(format!(
            "`{rel}` looks like a binary file; it cannot be edited"
        ));
    }
    let Ok(old) = std::str::from_utf8(bytes) else {
        return Err(format!(
            "`{rel}` is not valid UTF-8; edit_file only edits UTF-8 text"
        ));
    };
    let (new, how) = replace(old, &args.old_string, &args.new_string)
        .map_err(|why| format!("`{rel}` was not changed: {why}"))?;
    Ok((old.to_owned(), new, how))
}

/// What the `edit_file` call with `input` would make of the file `rel` now holding `bytes`
/// (`None`: no file): its old and new text; or why the call would be refused.
pub(crate) fn preview(
    rel: &str,
    bytes: Option<&[u8]>,
    input: &serde_json::Value,
) -> Result<(String, String), String> {
    let args: Args = parse_args(NAME, input.clone()).map_err(|out| out.text_content())?;
    check_args(&args)?;
    edited(rel, bytes, &args).map(|(old, new, _)| (old, new))
}

/// `text` with `old` replaced by `new`, and how it matched; or why nothing was replaced.
pub(crate) fn replace(text: &str, old: &str, new: &str) -> Result<(String, String), String> {
    let exact = occurrences(text, old);
    match exact.as_slice() {
        [at] => {
            let line = text[..*at].matches('\n').count() + 1;
            let mut out = String::with_capacity(text.len() + new.len());
            out.push_str(&text[..*at]);
            out.push_str(new);
            out.push_str(&text[at + old.len()..]);
            return Ok((out, format!("exact match at line {line}")));
        }
        [] => {}
        many => {
            return Err(format!(
                "old_string matches {} places (lines {}); include more surrounding lines so it \
                 matches exactly one",
                many.len(),
                line_list(many.iter().map(|at| text[..*at].matches('\n').count() + 1))
            ))
        }
    }
    fuzzy_replace(text, old, new)
}

/// Byte offsets of every occurrence of `needle`, overlapping ones included.
fn occurrences(haystack: &str, needle: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = haystack[from..].find(needle) {
        let at = from + i;
        found.push(at);
        // Step one character on, so overlapping occurrences are counted too.
        from = at + haystack[at..].chars().next().map_or(1, char::len_utf8);
    }
    found
}

/// The lines of `text` with blank lines at both ends dropped.
fn trimmed_block(text: &str) -> Vec<&str> {
    let lines = crate::util::split_lines(text);
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    match (first, last) {
        (Some(a), Some(b)) => lines[a..=b].to_vec(),
        _ => Vec::new(),
    }
}

fn fuzzy_replace(text: &str, old: &str, new: &str) -> Result<(String, String), String> {
    let wanted = trimmed_block(old);
    if wanted.is_empty() {
        return Err("old_string was not found, and it has only whitespace".to_string());
    }
    // Each line of the file: where it starts and where its text ends (before "\r\n" / "\n").
    let mut spans = Vec::new();
    let mut start = 0;
    for raw in text.split_inclusive('\n') {
        let body = raw.strip_suffix('\n').unwrap_or(raw);
        let body = body.strip_suffix('\r').unwrap_or(body);
        spans.push((start, start + body.len()));
        start += raw.len();
    }
    let line = |i: usize| &text[spans[i].0..spans[i].1];
    let k = wanted.len();
    let starts: Vec<usize> = (0..(spans.len() + 1).saturating_sub(k))
        .filter(|&i| (0..k).all(|j| line(i + j).trim() == wanted[j].trim()))
        .collect();
    let first = match starts.as_slice() {
        [first] => *first,
        [] => {
            return Err(
                "old_string was not found, not even when ignoring leading and trailing \
                 whitespace; read the file again and copy the text exactly"
                    .to_string(),
            )
        }
        many => {
            return Err(format!(
                "old_string was not found exactly, and ignoring whitespace it matches {} places \
                 (lines {}); include more surrounding lines so it matches exactly one",
                many.len(),
                line_list(many.iter().map(|i| i + 1))
            ))
        }
    };
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let file_indent = leading_ws(line(first));
    let old_indent = leading_ws(wanted[0]);
    let replacement: Vec<String> = trimmed_block(new)
        .into_iter()
        .map(|l| match l.strip_prefix(old_indent) {
            Some(rest) if !l.trim().is_empty() => format!("{file_indent}{rest}"),
            _ => l.to_string(),
        })
        .collect();
    let (from, to) = (spans[first].0, spans[first + k - 1].1);
    let mut out = String::with_capacity(text.len() + new.len());
    out.push_str(&text[..from]);
    out.push_str(&replacement.join(eol));
    if replacement.is_empty() {
        // Deleting the lines: take the line ending after them too, so no blank line is left.
        let after = &text[to..];
        out.push_str(after.strip_prefix(eol).unwrap_or(after));
    } else {
        out.push_str(&text[to..]);
    }
    let how = if k == 1 {
        format!("whitespace-insensitive match at line {}", first + 1)
    } else {
        format!(
            "whitespace-insensitive match at lines {}-{}",
            first + 1,
            first + k
        )
    };
    Ok((out, how))
}

fn leading_ws(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn line_list(lines: impl Iterator<Item = usize>) -> String {
    let all: Vec<String> = lines.map(|n| n.to_string()).collect();
    if all.len() > 10 {
        format!("{}, …", all[..10].join(", "))
    } else {
        all.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_occurrences_count() {
        assert_eq!(occurrences("aaa", "aa"), vec![0, 1]);
        assert_eq!(occurrences("é-é", "é"), vec![0, 3]);
        assert!(occurrences("abc", "x").is_empty());
    }

    #[test]
    fn exact_single_match_is_replaced_in_place() {
        let (out, how) = replace("one\ntwo\nthree\n", "two", "2").unwrap();
        assert_eq!(out, "one\n2\nthree\n");
        assert_eq!(how, "exact match at line 2");
    }

    #[test]
    fn ambiguous_exact_matches_are_refused_with_their_lines() {
        let err = replace("x = 1\ny = 2\nx = 1\n", "x = 1", "x = 3").unwrap_err();
        assert!(err.contains("matches 2 places (lines 1, 3)"), "{err}");
    }

    #[test]
    fn fallback_reindents_and_keeps_crlf() {
        let text = "fn main() {\r\n    let a = 1;\r\n    let b = 2;\r\n}\r\n";
        let (out, how) = replace(
            text,
            "let a = 1;\nlet b = 2;\n",
            "let a = 10;\n  let b = 20;",
        )
        .unwrap();
        assert_eq!(
            out,
            "fn main() {\r\n    let a = 10;\r\n      let b = 20;\r\n}\r\n"
        );
        assert_eq!(how, "whitespace-insensitive match at lines 2-3");
    }

    #[test]
    fn fallback_deletion_leaves_no_blank_line() {
        let (out, _) = replace("a\n  b\nc\n", "b  ", "").unwrap();
        assert_eq!(out, "a\nc\n");
    }
}
