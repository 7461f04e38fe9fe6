//! Markdown answers rendered for a terminal while they stream: headings, emphasis, lists,
//! block quotes, tables, links and fenced code highlighted by language, the markers
//! themselves not shown.
//!
//! How: a small line-based block recognizer ([`blocks`]) with pulldown-cmark for the
//! inline spans of each line ([`inline`]). A streaming terminal prints each line once it is
//! complete and never redraws, so the unit of work has to be the line: pulldown-cmark run on
//! whole blocks would hold every paragraph until its blank line. What a line opens can be
//! told from the line and the block it is in (a fence, a table), and inline Markdown is
//! what a spec-passing parser is good at. The cost: the model's line breaks are kept (each
//! source line is wrapped to the width on its own, as models write a paragraph on one line),
//! and emphasis spanning two source lines shows its markers.
//!
//! Promises ([`Renderer`]):
//! - text is printed a line at a time, when its newline arrives; the unfinished last line is
//!   held and printed by [`Renderer::finish`], so nothing already printed is redrawn;
//! - a table is held from its header line until the line after its last row, then printed
//!   whole ([`table`]): its columns depend on all its rows; a line that may be a table's
//!   header is held until the next line says whether it is;
//! - fenced code is highlighted line by line ([`code`]) and never wrapped; its fences are
//!   not shown; a stream that ends inside a block has shown that block as code;
//! - prose is wrapped at word boundaries to the width given, list items and quotes with
//!   their indentation carried onto the wrapped lines;
//! - every printed line ends with its styles reset.

mod blocks;
mod code;
mod inline;
pub mod style;
mod table;

use blocks::{classify, closes, indentation, Block};
use code::Code;
pub use code::Depth;
use inline::{spans, wrap};
use style::{dim, Colour, Style};
use table::{delimiter, Table};
use unicode_width::UnicodeWidthStr as _;

/// The fenced code block being shown.
struct Fence {
    marker: char,
    len: usize,
    indent: usize,
    code: Code,
}

/// Turns streamed Markdown into terminal lines.
pub struct Renderer {
    width: usize,
    depth: Depth,
    /// The unfinished last line.
    partial: String,
    fence: Option<Fence>,
    /// A line that may be a table's header, held until the next line says.
    header: Option<String>,
    table: Option<Table>,
}

/// Bullets of unordered list items, by nesting level.
const BULLETS: [&str; 3] = ["•", "◦", "▪"];

impl Renderer {
    /// A renderer for a terminal `width` columns wide showing colours of `depth`.
    pub fn new(width: usize, depth: Depth) -> Renderer {
        Renderer {
            width: width.max(10),
            depth,
            partial: String::new(),
            fence: None,
            header: None,
            table: None,
        }
    }

    /// Take `text` (any piece of the answer); return what can be printed now: the lines it
    /// completed, rendered, each ending in a newline.
    pub fn push(&mut self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(newline) = rest.find('\n') {
            let (piece, after) = (&rest[..newline], &rest[newline + 1..]);
            rest = after;
            if self.partial.is_empty() {
                self.line(piece, &mut out);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.push_str(piece);
                self.line(&line, &mut out);
            }
        }
        self.partial.push_str(rest);
        out
    }

    /// The answer ended (or stopped for a tool call): print what is held (the unfinished
    /// line, a table, a possible header) and start afresh.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, &mut out);
        }
        self.end_table(&mut out);
        self.fence = None;
        out
    }

    /// One complete line of the source.
    fn line(&mut self, line: &str, out: &mut String) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(fence) = &mut self.fence {
            if closes(line, fence.marker, fence.len) {
                self.fence = None;
            } else {
                let (indent, _) = indentation(line);
                let cut = byte_of_column(line, indent.min(fence.indent));
                emit(out, &fence.code.line(&line[cut..]));
            }
            return;
        }
        if let Some(table) = &mut self.table {
            if line.contains('|') && !line.trim().is_empty() {
                table.row(line);
                return;
            }
            self.end_table(out);
        }
        if let Some(header) = self.header.take() {
            let started = delimiter(line).and_then(|aligns| Table::start(&header, aligns));
            if let Some(table) = started {
                self.table = Some(table);
                return;
            }
            self.block(&header, out);
        }
        match classify(line) {
            Block::Fence {
                indent,
                marker,
                len,
                info,
            } => {
                let code = Code::new(info, self.depth);
                self.fence = Some(Fence {
                    marker,
                    len,
                    indent,
                    code,
                });
            }
            Block::Text { .. } if line.contains('|') => self.header = Some(line.to_owned()),
            _ => self.block(line, out),
        }
    }

    /// Print the table being read (or the line held as a possible header).
    fn end_table(&mut self, out: &mut String) {
        if let Some(table) = self.table.take() {
            for line in table.lines(self.width) {
                emit(out, &line);
            }
        }
        if let Some(header) = self.header.take() {
            self.block(&header, out);
        }
    }

    fn block(&self, line: &str, out: &mut String) {
        for shown in lines_of(line, self.width) {
            emit(out, &shown);
        }
    }
}

/// The terminal lines of one source line that is neither code nor a table.
fn lines_of(line: &str, width: usize) -> Vec<String> {
    match classify(line) {
        Block::Blank => vec![String::new()],
        Block::Heading { level, text } => {
            let style = match level {
                1 => Style {
                    underline: true,
                    fg: Colour::Basic(5),
                    ..Style::bold()
                },
                2 => Style {
                    fg: Colour::Basic(5),
                    ..Style::bold()
                },
                _ => Style::bold(),
            };
            wrap(&spans(text, style), width, "", "", 0)
        }
        Block::Rule => vec![dim(&"─".repeat(width))],
        Block::Quote { rest } => {
            let bar = dim("│");
            (lines_of(rest, width.saturating_sub(2)).into_iter())
                .map(|inner| match inner.is_empty() {
                    true => bar.clone(),
                    false => format!("{bar} {inner}"),
                })
                .collect()
        }
        Block::Item {
            indent,
            marker,
            ordered,
            text,
        } => {
            let bullet = match ordered {
                true => marker,
                false => BULLETS[(indent / 2) % BULLETS.len()],
            };
            let lead = " ".repeat(indent);
            let first = format!("{lead}{bullet} ");
            let hang = indent + bullet.width() + 1;
            wrap(
                &spans(text, Style::PLAIN),
                width,
                &first,
                &" ".repeat(hang),
                hang,
            )
        }
        Block::Text { indent, text } => {
            let lead = " ".repeat(indent);
            wrap(&spans(text, Style::PLAIN), width, &lead, &lead, indent)
        }
        // A fence inside a quote: shown as text.
        Block::Fence { .. } => wrap(&spans(line.trim(), Style::PLAIN), width, "", "", 0),
    }
}

/// The byte offset in `line` after `columns` columns of its leading whitespace.
fn byte_of_column(line: &str, columns: usize) -> usize {
    let mut seen = 0;
    for (at, ch) in line.char_indices() {
        if seen >= columns || !matches!(ch, ' ' | '\t') {
            return at;
        }
        seen += if ch == '\t' { 4 - seen % 4 } else { 1 };
    }
    line.len()
}

fn emit(out: &mut String, line: &str) {
    out.push_str(line);
    out.push('\n');
}

#[cfg(test)]
mod tests;
