//! What a completion or refactor request carries, from a document and an LSP position.
//!
//! Promises:
//! - [`Cursor`] is an LSP position: `line` counts lines from 0 and `character` counts UTF-16
//!   code units (the LSP default encoding). [`Cursor::offset_in`] turns it into a byte
//!   offset of the document. Lines end at `\n`; a `\r` before it belongs to the line end, so a
//!   CRLF document is handled like an LF one. A position past the end of its line is clamped
//!   to the line's end, one past the last line to the document's end, and one inside a
//!   surrogate pair (the middle of 😀) to the start of that character: never a panic.
//! - [`CompletionContext::new`]: the prefix (up to [`Window::lines_before`] whole lines before
//!   the cursor's line, plus that line left of the cursor) and the suffix (the rest of the
//!   line, its line end, and up to [`Window::lines_after`] whole lines after it). Both are
//!   slices of the document, so its line ends (CRLF included) are kept as they are.
//! - [`CompletionContext::fim_parts`] for a FIM agent, [`CompletionContext::chat_prompt`] for a
//!   chat agent: the code with a `<cursor>` marker, the path, the language, the
//!   instruction to answer with the inserted code only, and the other open documents
//!   ([`OpenFile`], as the caller budgeted them) before the code.
//! - [`language_of`]: a language name from a path's extension (a table of common ones).
//! - [`refactor_prompt`]: the selection between `<selection_start>` and `<selection_end>`
//!   (with the default window of lines around it), the instruction, the rules, and the
//!   indentation of the selection's first line for the cleaner.

use std::path::Path;

/// An LSP position: `line` from 0, `character` in UTF-16 code units from the line's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cursor {
    /// The 0-based line.
    pub line: u32,
    /// The 0-based character in the line (UTF-16 code units, as LSP counts).
    pub character: u32,
}

/// An LSP range: from `start` to `end`, both [`Cursor`]s. A range given backwards is read
/// from its earlier end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Range {
    /// Where the range starts.
    pub start: Cursor,
    /// Where the range ends (exclusive).
    pub end: Cursor,
}

/// How many whole lines around the cursor's line a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Lines of context kept before the cursor.
    pub lines_before: usize,
    /// Lines of context kept after the cursor.
    pub lines_after: usize,
}

impl Default for Window {
    /// QodeAssist's defaults: 50 lines before, 30 after.
    fn default() -> Self {
        Window {
            lines_before: 50,
            lines_after: 30,
        }
    }
}

/// Another open document given to a completion as context (llama.cpp's `input_extra`, or
/// the files before the code in a chat prompt). The caller decides which and how much.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpenFile {
    /// The document's path as the editor names it.
    pub path: String,
    /// The document's text (or the part of it the caller's budget allows).
    pub text: String,
}

/// The document around a cursor, as a completion request carries it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompletionContext {
    /// The window's lines before the cursor's line and that line left of the cursor.
    pub prefix: String,
    /// The cursor's line right of the cursor, its line end, and the window's lines after.
    pub suffix: String,
    /// The cursor's line left of the cursor.
    pub line_before: String,
    /// The cursor's line right of the cursor, without its line end.
    pub line_after: String,
}

/// The user message of a quick refactor and what its cleaner needs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RefactorPrompt {
    /// The user message sent: the instruction, the selection and its surroundings.
    pub message: String,
    /// The leading spaces and tabs of the selection's first line.
    pub indent: String,
}

/// Where each line of a document starts and where its text ends (before `\r\n` or `\n`).
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(at, _)| at + 1));
        Lines { text, starts }
    }

    fn last(&self) -> usize {
        self.starts.len() - 1
    }

    /// The byte offset where line `line` starts; past the last line, the document's end.
    fn start(&self, line: usize) -> usize {
        self.starts.get(line).copied().unwrap_or(self.text.len())
    }

    /// The byte offset after line `line` and its line end.
    fn end_with_break(&self, line: usize) -> usize {
        self.start(line + 1)
    }

    /// The byte offset where line `line`'s text ends, before its line end.
    fn end(&self, line: usize) -> usize {
        let start = self.start(line);
        let mut end = self.end_with_break(line);
        let bytes = self.text.as_bytes();
        if end > start && bytes[end - 1] == b'\n' {
            end -= 1;
            if end > start && bytes[end - 1] == b'\r' {
                end -= 1;
            }
        }
        end
    }

    /// The byte offset of `cursor`, clamped as the module doc says; and its (clamped) line.
    fn offset(&self, cursor: Cursor) -> (usize, usize) {
        let line = cursor.line as usize;
        if line > self.last() {
            return (self.text.len(), self.last());
        }
        let (start, end) = (self.start(line), self.end(line));
        let mut units = 0usize;
        let wanted = cursor.character as usize;
        for (at, ch) in self.text[start..end].char_indices() {
            units += ch.len_utf16();
            if units > wanted {
                return (start + at, line);
            }
        }
        (end, line)
    }
}

impl Cursor {
    /// The byte offset of this position in `text`, clamped (see the module doc).
    pub fn offset_in(self, text: &str) -> usize {
        Lines::new(text).offset(self).0
    }

    /// This position moved into `text` as [`Cursor::offset_in`] clamps it.
    pub fn clamped_in(self, text: &str) -> Cursor {
        let lines = Lines::new(text);
        let (at, line) = lines.offset(self);
        Cursor {
            line: line as u32,
            character: utf16_len(&text[lines.start(line)..at]),
        }
    }
}

/// `text`'s length in UTF-16 code units, as LSP positions count.
fn utf16_len(text: &str) -> u32 {
    text.chars().map(|c| c.len_utf16() as u32).sum()
}

impl CompletionContext {
    /// The context of `cursor` in `text` with `window` lines around the cursor's line.
    pub fn new(text: &str, cursor: Cursor, window: &Window) -> Self {
        let lines = Lines::new(text);
        let (at, line) = lines.offset(cursor);
        let first = line.saturating_sub(window.lines_before);
        let last = line.saturating_add(window.lines_after).min(lines.last());
        CompletionContext {
            prefix: text[lines.start(first)..at].to_string(),
            suffix: text[at..lines.end_with_break(last)].to_string(),
            line_before: text[lines.start(line)..at].to_string(),
            line_after: text[at..lines.end(line)].to_string(),
        }
    }

    /// The range a completion overwriting `replace` chars right of the cursor covers, on the
    /// cursor's `line` (UTF-16 columns, as the editor counts them).
    pub fn replaced(&self, line: u32, replace: usize) -> Range {
        let start = utf16_len(&self.line_before);
        let end = self
            .line_after
            .chars()
            .take(replace)
            .map(|c| c.len_utf16() as u32);
        Range {
            start: Cursor {
                line,
                character: start,
            },
            end: Cursor {
                line,
                character: start + end.sum::<u32>(),
            },
        }
    }

    /// The prefix and suffix, as a FIM agent takes them.
    pub fn fim_parts(&self) -> (&str, &str) {
        (&self.prefix, &self.suffix)
    }

    /// The user message for a chat agent: language and path, the instruction, the other
    /// open documents (`extra`, each in a `<file path="…">` block, in the given order) and
    /// the code with a `<cursor>` marker. `language` of `None` leaves the language line out.
    pub fn chat_prompt(&self, path: &Path, language: Option<&str>, extra: &[OpenFile]) -> String {
        let mut out = String::new();
        if let Some(language) = language {
            out.push_str(&format!("Language: {language}\n"));
        }
        out.push_str(&format!("File: {}\n\n", path.display()));
        out.push_str(
            "Complete the code at the <cursor> marker. Answer with the inserted code only: \
             no explanation, no Markdown code fences, and none of the code before or after \
             the cursor repeated.\n\n",
        );
        if !extra.is_empty() {
            out.push_str("Other open files, for context:\n\n");
            for file in extra {
                out.push_str(&format!("<file path=\"{}\">\n{}", file.path, file.text));
                if !file.text.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str("</file>\n\n");
            }
        }
        out.push_str(&format!(
            "<code_context>\n{}<cursor>{}\n</code_context>",
            self.prefix, self.suffix
        ));
        out
    }
}

/// Extensions (lowercase) and the language each names.
const LANGUAGES: &[(&[&str], &str)] = &[
    (&["rs"], "Rust"),
    (&["py", "pyi"], "Python"),
    (&["js", "mjs", "cjs", "jsx"], "JavaScript"),
    (&["ts", "mts", "cts", "tsx"], "TypeScript"),
    (&["go"], "Go"),
    (&["c", "h"], "C"),
    (&["cpp", "cc", "cxx", "hpp", "hh", "hxx"], "C++"),
    (&["cs"], "C#"),
    (&["java"], "Java"),
    (&["kt", "kts"], "Kotlin"),
    (&["swift"], "Swift"),
    (&["rb"], "Ruby"),
    (&["php"], "PHP"),
    (&["lua"], "Lua"),
    (&["sh", "bash", "zsh"], "Shell"),
    (&["zig"], "Zig"),
    (&["hs"], "Haskell"),
    (&["scala"], "Scala"),
    (&["ex", "exs"], "Elixir"),
    (&["sql"], "SQL"),
    (&["qml"], "QML"),
    (&["html", "htm"], "HTML"),
    (&["css", "scss"], "CSS"),
    (&["json"], "JSON"),
    (&["toml"], "TOML"),
    (&["yaml", "yml"], "YAML"),
    (&["md", "markdown"], "Markdown"),
];

/// The language of `path` from its extension (any case); `None` when the extension is
/// missing or not in the table.
pub fn language_of(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    LANGUAGES
        .iter()
        .find(|(exts, _)| exts.contains(&ext.as_str()))
        .map(|(_, name)| *name)
}

/// Indentation in words: "4 spaces", "1 tab", "2 tabs and 4 spaces", "no indentation".
fn describe_indent(indent: &str) -> String {
    let count = |c: char| indent.chars().filter(|&x| x == c).count();
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    match (count('\t'), count(' ')) {
        (0, 0) => "no indentation".to_string(),
        (0, s) => plural(s, "space"),
        (t, 0) => plural(t, "tab"),
        (t, s) => format!("{} and {}", plural(t, "tab"), plural(s, "space")),
    }
}

/// The user message asking to rewrite `selection` of `text` by `instruction`, with the
/// default [`Window`] of lines around the selection, and the selection's indentation.
pub fn refactor_prompt(text: &str, selection: Range, instruction: &str) -> RefactorPrompt {
    let lines = Lines::new(text);
    let (a, b) = (lines.offset(selection.start), lines.offset(selection.end));
    let ((from, from_line), (to, to_line)) = if a.0 <= b.0 { (a, b) } else { (b, a) };
    let window = Window::default();
    let first = from_line.saturating_sub(window.lines_before);
    let last = to_line.saturating_add(window.lines_after).min(lines.last());
    let line_start = lines.start(from_line);
    let indent: String = text[line_start..lines.end(from_line)]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let message = format!(
        "Rewrite the selected code: {instruction}\n\n\
         Rules:\n\
         - Answer with the code that replaces the text between <selection_start> and \
         <selection_end> only.\n\
         - No Markdown code fences, no explanation, no tags or markers.\n\
         - Keep the selection's indentation: its first line has {}; indent your code the same \
         way.\n\n\
         <code_context>\n{}<selection_start>{}<selection_end>{}\n</code_context>",
        describe_indent(&indent),
        &text[lines.start(first)..from],
        &text[from..to],
        &text[to..lines.end_with_break(last)],
    );
    RefactorPrompt { message, indent }
}

#[cfg(test)]
#[path = "context_tests.rs"]
mod tests;
