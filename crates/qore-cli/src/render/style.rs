//! Styled text for the terminal: a [`Style`] (bold, italic, underline, strike, dim and a
//! foreground colour) and [`Span`]s of text in one style, written out as SGR escapes.
//!
//! Promises: [`Line::finish`] writes a line's spans so that every styled stretch opens
//! with its own complete SGR sequence and the line ends with all attributes reset, so no
//! style leaks into the next line, a prefix, or whatever the terminal prints after it; an
//! unstyled stretch is written with no escape at all.

use std::fmt::Write as _;

use unicode_width::UnicodeWidthStr as _;

/// A foreground colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Colour {
    #[default]
    Default,
    /// One of the 16 basic colours (0-7; the terminal's palette decides the shade).
    Basic(u8),
    /// The xterm 256-colour palette.
    Palette(u8),
    /// 24-bit.
    Rgb(u8, u8, u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Style {
    pub bold: bool,
    pub italic: bool,
    pub underline: bool,
    pub strike: bool,
    pub dim: bool,
    pub fg: Colour,
}

impl Style {
    pub const PLAIN: Style = Style {
        bold: false,
        italic: false,
        underline: false,
        strike: false,
        dim: false,
        fg: Colour::Default,
    };

    pub fn bold() -> Style {
        Style {
            bold: true,
            ..Style::PLAIN
        }
    }

    pub fn dim() -> Style {
        Style {
            dim: true,
            ..Style::PLAIN
        }
    }

    /// `self` with every attribute `over` sets added (its colour wins when it has one).
    pub fn and(self, over: Style) -> Style {
        Style {
            bold: self.bold || over.bold,
            italic: self.italic || over.italic,
            underline: self.underline || over.underline,
            strike: self.strike || over.strike,
            dim: self.dim || over.dim,
            fg: match over.fg {
                Colour::Default => self.fg,
                colour => colour,
            },
        }
    }

    /// The SGR parameters that set this style from a reset state (empty when plain).
    fn parameters(self) -> String {
        let mut codes: Vec<String> = Vec::new();
        for (on, code) in [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.strike, "9"),
        ] {
            if on {
                codes.push(code.to_owned());
            }
        }
        match self.fg {
            Colour::Default => {}
            Colour::Basic(n) => codes.push(format!("{}", 30 + u32::from(n & 7))),
            Colour::Palette(n) => codes.push(format!("38;5;{n}")),
            Colour::Rgb(r, g, b) => codes.push(format!("38;2;{r};{g};{b}")),
        }
        codes.join(";")
    }
}

/// Text in one style.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub text: String,
    pub style: Style,
}

impl Span {
    pub fn new(text: impl Into<String>, style: Style) -> Span {
        Span {
            text: text.into(),
            style,
        }
    }

    /// Columns the text takes on the terminal.
    pub fn width(&self) -> usize {
        self.text.width()
    }
}

/// One output line being assembled from spans.
#[derive(Default)]
pub struct Line {
    text: String,
    current: Style,
    width: usize,
}

impl Line {
    pub fn push(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        if style != self.current {
            if self.current != Style::PLAIN {
                self.text.push_str("\x1b[0m");
            }
            if style != Style::PLAIN {
                let _ = write!(self.text, "\x1b[{}m", style.parameters());
            }
            self.current = style;
        }
        self.text.push_str(text);
        self.width += text.width();
    }

    /// Columns taken so far.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The line with its styles reset at the end (no newline).
    pub fn finish(mut self) -> String {
        if self.current != Style::PLAIN {
            self.text.push_str("\x1b[0m");
        }
        self.text
    }
}

/// `text` in `style`, every style reset after it (plain text when the style is plain).
pub fn paint(text: &str, style: Style) -> String {
    let mut line = Line::default();
    line.push(text, style);
    line.finish()
}

/// `text` dimmed (SGR 2), every style reset after it.
pub fn dim(text: &str) -> String {
    paint(text, Style::dim())
}

/// `text` without its escape sequences (CSI, e.g. SGR, and OSC).
pub fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(ch) = chars.next() {
        if ch != '\x1b' {
            out.push(ch);
            continue;
        }
        match chars.next() {
            // CSI: parameters, then one final byte in @..~.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: up to BEL or ESC \.
            Some(']') => {
                for c in chars.by_ref() {
                    if c == '\x07' || c == '\\' {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Columns `text` takes on the terminal, its escapes not counted.
pub fn visible_width(text: &str) -> usize {
    strip(text).width()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `spans` written on one line.
    fn line_of(spans: &[Span]) -> String {
        let mut line = Line::default();
        for span in spans {
            line.push(&span.text, span.style);
        }
        line.finish()
    }

    #[test]
    fn lines_open_each_style_and_reset_at_the_end() {
        let italic = Style {
            italic: true,
            ..Style::PLAIN
        };
        let cases: [(&[Span], &str); 4] = [
            (&[Span::new("plain", Style::PLAIN)], "plain"),
            (
                &[
                    Span::new("a ", Style::PLAIN),
                    Span::new("b", Style::bold()),
                    Span::new(" c", Style::PLAIN),
                ],
                "a \x1b[1mb\x1b[0m c",
            ),
            (
                &[
                    Span::new("x", Style::bold()),
                    Span::new("y", Style::bold().and(italic)),
                ],
                "\x1b[1mx\x1b[0m\x1b[1;3my\x1b[0m",
            ),
            (
                &[Span::new(
                    "z",
                    Style {
                        fg: Colour::Palette(110),
                        ..Style::dim()
                    },
                )],
                "\x1b[2;38;5;110mz\x1b[0m",
            ),
        ];
        for (spans, expected) in cases {
            assert_eq!(line_of(spans), expected, "{spans:?}");
        }
    }
}
