//! GitHub-style tables (a header row, a delimiter row of `---` cells, body rows) laid out
//! in box-drawing lines that fit the terminal's width.
//!
//! A column's width depends on every row, so a table is held until it ends and then printed
//! whole: nothing printed is redrawn, and the table shows once its last row is known.
//! Promises: the delimiter row's `:` set each column's alignment; a row with fewer cells than
//! the header is padded, one with more is cut to it (as GFM does); cell text is inline
//! Markdown (header cells bold); when the natural widths do not fit, the widest columns
//! give way first (each keeps at least its share of the room) and their cells wrap at word
//! boundaries inside the column; every line is at most the width given unless there are so
//! many columns that even one column each does not fit.

use super::inline::{spans, wrap};
use super::style::{dim, visible_width, Span, Style};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Centre,
    Right,
}

/// The cells of a row: split at pipes not escaped by a backslash, outer pipes dropped,
/// each cell trimmed.
pub fn cells(line: &str) -> Vec<&str> {
    let line = line.trim();
    let line = line.strip_prefix('|').unwrap_or(line);
    let line = match line.strip_suffix('|') {
        Some(inner) if !inner.ends_with('\\') => inner,
        _ => line,
    };
    let mut out = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (at, ch) in line.char_indices() {
        match ch {
            '\\' => escaped = !escaped,
            '|' if !escaped => {
                out.push(line[start..at].trim());
                start = at + 1;
            }
            _ => escaped = false,
        }
    }
    out.push(line[start..].trim());
    out
}

/// The alignments a delimiter row (`| --- | :-: | --: |`) sets; `None` when `line` is not one.
pub fn delimiter(line: &str) -> Option<Vec<Align>> {
    if !line.contains('-') {
        return None;
    }
    cells(line)
        .into_iter()
        .map(|cell| {
            let left = cell.starts_with(':');
            let right = cell.ends_with(':') && cell.len() > 1;
            let dashes = cell.trim_matches(':');
            if dashes.is_empty() || !dashes.chars().all(|c| c == '-') {
                return None;
            }
            Some(match (left, right) {
                (true, true) => Align::Centre,
                (false, true) => Align::Right,
                _ => Align::Left,
            })
        })
        .collect()
}

/// A table being read: the alignments and the rows, the header first.
pub struct Table {
    aligns: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table of `header`'s cells, or `None` when the delimiter row's cells are not as many.
    pub fn start(header: &str, aligns: Vec<Align>) -> Option<Table> {
        let header = cells(header);
        (header.len() == aligns.len()).then(|| Table {
            rows: vec![header.into_iter().map(str::to_owned).collect()],
            aligns,
        })
    }

    pub fn row(&mut self, line: &str) {
        self.rows
            .push(cells(line).into_iter().map(str::to_owned).collect());
    }

    /// The table laid out in at most `width` columns.
    pub fn lines(&self, width: usize) -> Vec<String> {
        let n = self.aligns.len();
        let rows: Vec<Vec<Vec<Span>>> = (self.rows.iter().enumerate())
            .map(|(i, row)| {
                let base = if i == 0 { Style::bold() } else { Style::PLAIN };
                (0..n)
                    .map(|c| spans(row.get(c).map_or("", String::as_str), base))
                    .collect()
            })
            .collect();
        let mut natural = vec![0usize; n];
        for row in &rows {
            for (c, cell) in row.iter().enumerate() {
                natural[c] = natural[c].max(cell.iter().map(Span::width).sum());
            }
        }
        let widths = fit(&natural, width.saturating_sub(3 * n + 1));
        let rule = |left: &str, mid: &str, right: &str| {
            let bars: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
            dim(&format!("{left}{}{right}", bars.join(mid)))
        };
        let mut out = vec![rule("┌", "┬", "┐")];
        for (i, row) in rows.iter().enumerate() {
            let cells: Vec<Vec<String>> = (row.iter().zip(&widths))
                .map(|(cell, w)| wrap(cell, *w, "", "", 0))
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(1);
            for k in 0..height {
                let mut line = dim("│");
                for (c, cell) in cells.iter().enumerate() {
                    let text = cell.get(k).map_or("", String::as_str);
                    line.push(' ');
                    line.push_str(&pad(text, widths[c], self.aligns[c]));
                    line.push(' ');
                    line.push_str(&dim("│"));
                }
                out.push(line);
            }
            if i == 0 {
                out.push(rule("├", "┼", "┤"));
            }
        }
        out.push(rule("└", "┴", "┘"));
        out
    }
}

/// Column widths within `room`: the natural ones when they fit, else each column gets at
/// most an even share of what the narrower ones left (and at least one column).
fn fit(natural: &[usize], room: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= room {
        return natural.iter().map(|w| (*w).max(1)).collect();
    }
    let mut order: Vec<usize> = (0..natural.len()).collect();
    order.sort_by_key(|c| natural[*c]);
    let mut widths = vec![1; natural.len()];
    let mut left = room;
    for (done, c) in order.iter().enumerate() {
        let share = left / (natural.len() - done);
        widths[*c] = natural[*c].min(share).max(1);
        left = left.saturating_sub(widths[*c]);
    }
    widths
}

/// `text` (styled, `visible_width` columns) padded to `width` as `align` says.
fn pad(text: &str, width: usize, align: Align) -> String {
    let room = width.saturating_sub(visible_width(text));
    let (before, after) = match align {
        Align::Left => (0, room),
        Align::Right => (room, 0),
        Align::Centre => (room / 2, room - room / 2),
    };
    format!("{}{text}{}", " ".repeat(before), " ".repeat(after))
}

#[cfg(test)]
mod tests {
    use unicode_width::UnicodeWidthStr as _;

    use super::super::style::strip as visible;
    use super::*;

    #[test]
    fn rows_split_into_cells_and_delimiters_set_alignment() {
        assert_eq!(cells("| a | b\\|c |"), vec!["a", "b\\|c"]);
        assert_eq!(cells("a|b"), vec!["a", "b"]);
        use Align::*;
        let cases = [
            ("|---|:-:|--:|", Some(vec![Left, Centre, Right])),
            ("--- | :---", Some(vec![Left, Left])),
            ("| a | b |", None),
            ("| -x- |", None),
            ("plain text", None),
        ];
        for (line, expected) in cases {
            assert_eq!(delimiter(line), expected, "{line}");
        }
    }

    #[test]
    fn a_table_is_boxed_aligned_and_fits_its_width() {
        let mut table =
            Table::start("| Name | Qty |", vec![Align::Left, Align::Right]).expect("two cells");
        table.row("| apple | 3 |");
        table.row("| **kiwi** | 12 |");
        let expected = [
            "┌───────┬─────┐",
            "│ Name  │ Qty │",
            "├───────┼─────┤",
            "│ apple │   3 │",
            "│ kiwi  │  12 │",
            "└───────┴─────┘",
        ];
        let lines: Vec<String> = table.lines(80).iter().map(|l| visible(l)).collect();
        assert_eq!(lines, expected);
        assert!(table.lines(80)[4].contains("\x1b[1mkiwi"), "bold cell");

        let mut wide = Table::start("a | b", vec![Align::Left, Align::Left]).expect("cells");
        wide.row("short | one two three four five six seven eight nine ten");
        for line in wide.lines(30) {
            let shown = visible(&line);
            assert!(shown.width() <= 30, "{shown:?}");
        }
        let text: String = (wide.lines(30).iter().map(|l| visible(l))).collect();
        assert!(text.contains("short") && text.contains("ten"), "{text}");
    }

    #[test]
    fn a_header_and_delimiter_of_different_counts_is_no_table() {
        assert!(Table::start("| a | b |", vec![Align::Left]).is_none());
    }
}
