//! `read_file`: a text file of the project, whole or a range of lines, with line numbers.
//!
//! Promises: lines are numbered from 1 and ranges are inclusive; each shown line is
//! `<number>\t<text>`; at most `read_max_lines` lines and `read_max_bytes` bytes of text are
//! shown per call, and a line longer than `max_line_chars` is cut, each time with a note
//! that says how to read on; the file is streamed, so its size does not matter; binary files
//! (a NUL in the first 8 KiB) are refused; invalid UTF-8 is shown with replacement
//! characters. Read-only and parallel-safe; stops when cancelled.

use std::io::{BufRead, BufReader};
use std::sync::Arc;

use qore_core::{CancellationToken, ToolOutput, ToolSpec};
use serde::Deserialize;
use serde_json::json;

use crate::rooted::file_looks_binary;
use crate::util::{cancelled, human_bytes, plural};
use crate::{spec, Sandbox, ToolOptions};

const NAME: &str = "read_file";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    #[serde(default)]
    start_line: Option<usize>,
    #[serde(default)]
    end_line: Option<usize>,
}

/// Reads a text file.
pub struct ReadFile {
    spec: ToolSpec,
    sandbox: Arc<Sandbox>,
    options: Arc<ToolOptions>,
}

impl ReadFile {
    pub fn new(sandbox: Arc<Sandbox>, options: Arc<ToolOptions>) -> Self {
        let spec = spec(
            NAME,
            &format!(
                "Read a text file of the project. Each line is shown as '<line number>\\t<text>' \
                 (numbers start at 1). Give start_line/end_line (inclusive) to read part of a \
                 large file. At most {} lines / {} per call; the result says how to read on \
                 when it is cut. Binary and ignored files cannot be read.",
                options.read_max_lines,
                human_bytes(options.read_max_bytes as u64)
            ),
            json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File path relative to the project root."
                    },
                    "start_line": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "First line to show (1-based). Default: 1."
                    },
                    "end_line": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Last line to show (inclusive). Default: as many as the caps allow."
                    }
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        );
        ReadFile {
            spec,
            sandbox,
            options,
        }
    }
}

crate::util::read_only_tool!(ReadFile, Args, read);

fn read(
    sandbox: &Sandbox,
    options: &ToolOptions,
    args: Args,
    cancel: &CancellationToken,
) -> ToolOutput {
    let start = args.start_line.unwrap_or(1);
    if start == 0 || args.end_line == Some(0) {
        return ToolOutput::error("line numbers start at 1");
    }
    if let Some(end) = args.end_line {
        if end < start {
            return ToolOutput::error(format!(
                "end_line ({end}) is before start_line ({start}); the range is inclusive"
            ));
        }
    }
    let path = match sandbox.resolve(&args.path) {
        Ok(p) => p,
        Err(e) => return ToolOutput::error(e.to_string()),
    };
    let rel = sandbox.relative(&path);
    let mut file = match sandbox.open_file(&path) {
        Ok(f) => f,
        Err(e) => return ToolOutput::error(not_opened(&rel, &e)),
    };
    match file_looks_binary(&mut file) {
        Ok(true) => {
            return ToolOutput::error(format!(
                "`{rel}` looks like a binary file (it has a NUL byte in its first 8 KiB); \
                 read_file shows text files only"
            ))
        }
        Ok(false) => {}
        Err(e) => return ToolOutput::error(format!("cannot read `{rel}`: {e}")),
    }

    // The last line the line cap allows; the byte cap may stop earlier.
    let line_cap_end = start.saturating_add(options.read_max_lines.max(1) - 1);
    let window_end = args.end_line.map_or(line_cap_end, |e| e.min(line_cap_end));
    let keep_bytes = options.max_line_chars.saturating_mul(4).max(4);

    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut shown: Vec<(usize, String)> = Vec::new();
    let mut shown_bytes = 0usize;
    let mut byte_capped = false;
    let mut line_no = 1usize; // the line being read
    let mut current: Vec<u8> = Vec::new();
    let mut current_len = 0usize;
    let mut finish =
        |line_no: usize, current: &[u8], len: usize, shown: &mut Vec<(usize, String)>| {
            if line_no < start || line_no > window_end || byte_capped {
                return;
            }
            let complete = current.len() == len;
            let mut text = String::from_utf8_lossy(current).into_owned();
            if complete && text.ends_with('\r') {
                text.pop();
            }
            let text = cap_read_line(&text, complete, len, options.max_line_chars);
            if !shown.is_empty() && shown_bytes + text.len() > options.read_max_bytes {
                byte_capped = true;
                return;
            }
            shown_bytes += text.len();
            shown.push((line_no, text));
        };
    loop {
        if cancel.is_cancelled() {
            return cancelled();
        }
        let chunk = match reader.fill_buf() {
            Ok([]) => break,
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return ToolOutput::error(format!("cannot read `{rel}`: {e}")),
        };
        let consumed = chunk.len();
        let mut rest = chunk;
        loop {
            let (piece, ended) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            if line_no >= start && line_no <= window_end && current.len() < keep_bytes {
                let room = keep_bytes - current.len();
                current.extend_from_slice(&piece[..piece.len().min(room)]);
            }
            current_len += piece.len();
            if !ended {
                break;
            }
            finish(line_no, &current, current_len, &mut shown);
            line_no += 1;
            current.clear();
            current_len = 0;
            rest = &rest[piece.len() + 1..];
        }
        reader.consume(consumed);
    }
    let total = if current_len > 0 {
        finish(line_no, &current, current_len, &mut shown);
        line_no
    } else {
        line_no - 1
    };

    if total == 0 {
        return ToolOutput::text(format!("`{rel}` is empty."));
    }
    if start > total {
        return ToolOutput::error(format!(
            "start_line {start} is past the end of `{rel}`, which has {}",
            plural(total, "line")
        ));
    }
    let last_shown = shown.last().map_or(start, |(n, _)| *n);
    let width = last_shown.to_string().len();
    let mut text = String::with_capacity(shown_bytes + shown.len() * (width + 2));
    for (n, line) in &shown {
        text.push_str(&format!("{n:>width$}\t{line}\n"));
    }
    let wanted_end = args.end_line.unwrap_or(total).min(total);
    if last_shown < wanted_end {
        let why = if byte_capped {
            format!("the {} cap", human_bytes(options.read_max_bytes as u64))
        } else {
            format!("the {}-line cap", options.read_max_lines)
        };
        text.push_str(&format!(
            "[showing lines {start}-{last_shown} of {total} ({why}); call read_file with \
             start_line={} to read on]\n",
            last_shown + 1
        ));
    }
    ToolOutput::text(text)
}

/// Why `rel` could not be opened for reading, with what to do instead.
fn not_opened(rel: &str, err: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match err.kind() {
        ErrorKind::IsADirectory => format!("`{rel}` is a directory; use list_files to see it"),
        ErrorKind::InvalidInput => {
            format!("`{rel}` is not a regular file (a pipe, socket or device); it cannot be read")
        }
        ErrorKind::NotFound => {
            format!("`{rel}` does not exist; use find_file or list_files to find the right path")
        }
        _ => format!("cannot read `{rel}`: {err}"),
    }
}

/// `text` (the start of a line of `len` bytes, `complete` when it is all of it) cut to
/// `max_chars` characters, with a note when anything is left out.
fn cap_read_line(text: &str, complete: bool, len: usize, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None if complete => text.to_string(),
        cut => {
            let cut = cut.map_or(text.len(), |(i, _)| i);
            format!("{}… [line cut: {len} bytes long]", &text[..cut])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cap_read_line;

    #[test]
    fn long_lines_are_cut_with_a_note() {
        assert_eq!(cap_read_line("abc", true, 3, 5), "abc");
        assert_eq!(
            cap_read_line("abcdef", true, 6, 3),
            "abc… [line cut: 6 bytes long]"
        );
        // Only part of the line was kept: it is cut even if the kept part is short.
        assert_eq!(
            cap_read_line("ab", false, 10, 5),
            "ab… [line cut: 10 bytes long]"
        );
    }
}
