//! Fenced code highlighted by language: syntect, with two-face's syntaxes (bat's set) and
//! syntect's bundled theme.
//!
//! Promises: the syntaxes and the theme are loaded once, on the first code block a process
//! shows (an answer without code never pays for them); a block is highlighted line by line
//! as its lines arrive, the parser's state carried from one line to the next; a language
//! syntect does not know (or none) is shown in the theme's plain-text colour; a line the
//! highlighter fails on is shown as it came. Colours are 24-bit where the terminal says it
//! has them ([`Depth::TrueColour`]), else the nearest of the 256-colour palette.

use std::sync::OnceLock;

use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

use super::style::{Colour, Line, Style};

/// The theme used: readable on the dark backgrounds most terminals have.
const THEME: &str = "base16-ocean.dark";

/// The colours a terminal shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    TrueColour,
    Palette256,
}

fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(two_face::syntax::extra_newlines)
}

fn theme() -> &'static Theme {
    static THEME_USED: OnceLock<Theme> = OnceLock::new();
    THEME_USED.get_or_init(|| {
        let mut themes = ThemeSet::load_defaults().themes;
        themes.remove(THEME).unwrap_or_default()
    })
}

/// One code block being shown.
pub struct Code {
    lines: HighlightLines<'static>,
    depth: Depth,
}

impl Code {
    /// A block whose fence's info string is `info` (its first word names the language:
    /// `rust`, `py`, `c++`, ...).
    pub fn new(info: &str, depth: Depth) -> Code {
        let syntaxes = syntaxes();
        let language = info
            .split(|c: char| c.is_whitespace() || c == ',' || c == '{' || c == '}')
            .find(|word| !word.is_empty())
            .unwrap_or("");
        let syntax = (!language.is_empty())
            .then(|| syntaxes.find_syntax_by_token(language))
            .flatten()
            .unwrap_or_else(|| syntaxes.find_syntax_plain_text());
        Code {
            lines: HighlightLines::new(syntax, theme()),
            depth,
        }
    }

    /// `line` (without its newline) highlighted.
    pub fn line(&mut self, line: &str) -> String {
        let with_newline = format!("{line}\n");
        let Ok(ranges) = self.lines.highlight_line(&with_newline, syntaxes()) else {
            return line.to_owned();
        };
        let mut out = Line::default();
        for (style, text) in ranges {
            let text = text.strip_suffix('\n').unwrap_or(text);
            let colour = style.foreground;
            let fg = match self.depth {
                Depth::TrueColour => Colour::Rgb(colour.r, colour.g, colour.b),
                Depth::Palette256 => Colour::Palette(ansi_colours::ansi256_from_rgb((
                    colour.r, colour.g, colour.b,
                ))),
            };
            let shown = Style {
                fg,
                bold: style.font_style.contains(FontStyle::BOLD),
                italic: style.font_style.contains(FontStyle::ITALIC),
                ..Style::PLAIN
            };
            out.push(text, shown);
        }
        out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::super::style::strip as visible;
    use super::*;

    #[test]
    fn code_keeps_its_text_and_is_coloured_by_language() {
        // (info string, line, depth, a colour escape the line must carry)
        let cases = [
            ("rust", "fn main() {}", Depth::Palette256, "\x1b[38;5;"),
            ("rust,ignore", "let x = 1;", Depth::TrueColour, "\x1b[38;2;"),
            ("py", "def f(): pass", Depth::Palette256, "\x1b[38;5;"),
            ("toml", "[body]", Depth::Palette256, "\x1b[38;5;"),
            (
                "no-such-language",
                "anything at all",
                Depth::Palette256,
                "\x1b[38;5;",
            ),
            ("", "    indented stays", Depth::TrueColour, "\x1b[38;2;"),
        ];
        for (info, line, depth, colour) in cases {
            let shown = Code::new(info, depth).line(line);
            assert_eq!(visible(&shown), line, "{info}: {shown:?}");
            assert!(shown.contains(colour), "{info}: {shown:?}");
            assert!(shown.ends_with("\x1b[0m"), "{info}: {shown:?}");
        }
    }

    /// A language that is known colours a line in more than one colour (plain text is one).
    #[test]
    fn known_languages_colour_their_parts_differently() {
        let cases = [
            ("rust", "fn main"),
            ("toml", "key = \"value\""),
            ("ts", "const x: number = 1;"),
            ("no-such-language", "fn main"),
        ];
        for (info, line) in cases {
            let shown = Code::new(info, Depth::TrueColour).line(line);
            let mut colours: Vec<&str> = (shown.split("\x1b[").skip(1))
                .filter_map(|escape| escape.split_once('m').map(|(sgr, _)| sgr))
                .filter(|sgr| *sgr != "0")
                .collect();
            colours.sort_unstable();
            colours.dedup();
            let known = info != "no-such-language";
            assert_eq!(colours.len() >= 2, known, "{info}: {shown:?}");
        }
    }
}
