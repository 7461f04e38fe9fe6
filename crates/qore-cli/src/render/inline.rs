//! Inline Markdown of one line (emphasis, strong, strikethrough, code spans, links,
//! autolinks) turned into styled [`Span`]s, and spans wrapped to a width at word boundaries.
//!
//! pulldown-cmark parses the inline text (CommonMark's emphasis rules are subtle; a crate
//! that passes the spec gets them right); the block structure around it is already taken
//! off by `blocks`, and the container events pulldown-cmark may still report for an odd
//! line are ignored, only the text inside them kept. Promises: the markers (`**`, `_`,
//! `` ` ``, `[](…)`) are never shown; a link shows its text, then its address (dimmed) when
//! that differs from the text; text pulldown-cmark gives nothing for (a lone link
//! reference definition) is shown as it came; wrapping never splits a word that fits on a
//! line and splits one that does not by columns, never inside a character.

use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd};
use unicode_width::UnicodeWidthChar as _;

use super::style::{Colour, Line, Span, Style};

/// The style of a code span.
pub const CODE: Style = Style {
    fg: Colour::Basic(6),
    ..Style::PLAIN
};

/// The style of a link's text.
const LINK: Style = Style {
    underline: true,
    fg: Colour::Basic(4),
    ..Style::PLAIN
};

/// The styled spans of `text`, every one in `base` plus its own style.
pub fn spans(text: &str, base: Style) -> Vec<Span> {
    let options = Options::ENABLE_STRIKETHROUGH;
    let mut out: Vec<Span> = Vec::new();
    let (mut bold, mut italic, mut strike) = (0u32, 0u32, 0u32);
    // Addresses of the links we are inside (their text is styled as a link).
    let mut links: Vec<(String, usize)> = Vec::new();
    let style = |bold: u32, italic: u32, strike: u32, link: bool| {
        let mut style = base;
        style.bold |= bold > 0;
        style.italic |= italic > 0;
        style.strike |= strike > 0;
        if link {
            style = style.and(LINK);
        }
        style
    };
    for event in Parser::new_ext(text, options) {
        let now = style(bold, italic, strike, !links.is_empty());
        match event {
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                out.push(Span::new(text.as_ref(), now));
            }
            Event::Code(code) => out.push(Span::new(code.as_ref(), now.and(CODE))),
            Event::SoftBreak | Event::HardBreak => out.push(Span::new(" ", now)),
            Event::Start(Tag::Strong) => bold += 1,
            Event::End(TagEnd::Strong) => bold = bold.saturating_sub(1),
            Event::Start(Tag::Emphasis) => italic += 1,
            Event::End(TagEnd::Emphasis) => italic = italic.saturating_sub(1),
            Event::Start(Tag::Strikethrough) => strike += 1,
            Event::End(TagEnd::Strikethrough) => strike = strike.saturating_sub(1),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            })
            | Event::Start(Tag::Image {
                link_type,
                dest_url,
                ..
            }) => {
                let shown = match link_type {
                    LinkType::Autolink | LinkType::Email => String::new(),
                    _ => dest_url.to_string(),
                };
                links.push((shown, out.len()));
            }
            Event::End(TagEnd::Link) | Event::End(TagEnd::Image) => {
                if let Some((url, first)) = links.pop() {
                    let text: String = out[first..].iter().map(|s| s.text.as_str()).collect();
                    if !url.is_empty() && text != url {
                        let after = style(bold, italic, strike, false);
                        out.push(Span::new(" (", after));
                        out.push(Span::new(url, after.and(Style::dim())));
                        out.push(Span::new(")", after));
                    }
                }
            }
            Event::TaskListMarker(done) => {
                out.push(Span::new(if done { "[x] " } else { "[ ] " }, now));
            }
            _ => {}
        }
    }
    if out.iter().all(|span| span.text.is_empty()) && !text.trim().is_empty() {
        return vec![Span::new(text.trim(), base)];
    }
    out
}

/// One unbreakable word: pieces in their styles, and its width in columns.
struct Word {
    pieces: Vec<Span>,
    width: usize,
    /// The style of the whitespace before it (none for the first word).
    space: Option<Style>,
}

/// Split `spans` into words at whitespace; a word may cross spans (`**bold**,`).
fn words(spans: &[Span]) -> Vec<Word> {
    let mut words: Vec<Word> = Vec::new();
    let mut current: Option<Word> = None;
    let mut space: Option<Style> = None;
    for span in spans {
        for (i, piece) in span.text.split(char::is_whitespace).enumerate() {
            if i > 0 {
                if let Some(word) = current.take() {
                    words.push(word);
                }
                space = Some(span.style);
            }
            if piece.is_empty() {
                continue;
            }
            let word = current.get_or_insert_with(|| Word {
                pieces: Vec::new(),
                width: 0,
                space: if words.is_empty() { None } else { space },
            });
            let piece = Span::new(piece, span.style);
            word.width += piece.width();
            word.pieces.push(piece);
        }
    }
    words.extend(current);
    words
}

/// `spans` wrapped to `width` columns: the first line starts with `first` and the others
/// with `rest` (already styled, both `indent` columns wide). Never empty.
pub fn wrap(spans: &[Span], width: usize, first: &str, rest: &str, indent: usize) -> Vec<String> {
    let room = width.saturating_sub(indent).max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut line = Line::default();
    let start = |lines: &Vec<String>| match lines.is_empty() {
        true => first.to_owned(),
        false => rest.to_owned(),
    };
    let mut prefix = start(&lines);
    for word in words(spans) {
        let gap = usize::from(line.width() > 0);
        if line.width() > 0 && line.width() + gap + word.width > room {
            lines.push(prefix + &std::mem::take(&mut line).finish());
            prefix = start(&lines);
        } else if line.width() > 0 {
            line.push(" ", word.space.unwrap_or(Style::PLAIN));
        }
        for piece in &word.pieces {
            // A word wider than the room is cut by columns.
            let (mut cut, mut cut_width) = (String::new(), 0);
            for ch in piece.text.chars() {
                let w = ch.width().unwrap_or(0);
                let used = line.width() + cut_width;
                if used + w > room && used > 0 {
                    line.push(&cut, piece.style);
                    (cut, cut_width) = (String::new(), 0);
                    lines.push(prefix + &std::mem::take(&mut line).finish());
                    prefix = start(&lines);
                }
                cut.push(ch);
                cut_width += w;
            }
            line.push(&cut, piece.style);
        }
    }
    lines.push(prefix + &line.finish());
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case: Markdown, then the spans as (text, bold, italic, code) by hand.
    #[test]
    fn inline_markdown_becomes_styled_spans() {
        let b = Style::bold();
        let i = Style {
            italic: true,
            ..Style::PLAIN
        };
        let p = Style::PLAIN;
        let cases: Vec<(&str, Vec<Span>)> = vec![
            ("plain words", vec![Span::new("plain words", p)]),
            (
                "a **bold** b",
                vec![Span::new("a ", p), Span::new("bold", b), Span::new(" b", p)],
            ),
            ("_it_", vec![Span::new("it", i)]),
            ("`x*y`", vec![Span::new("x*y", CODE)]),
            (
                "see [docs](https://d.example)",
                vec![
                    Span::new("see ", p),
                    Span::new("docs", LINK),
                    Span::new(" (", p),
                    Span::new("https://d.example", Style::dim()),
                    Span::new(")", p),
                ],
            ),
            (
                "<https://a.example>",
                vec![Span::new("https://a.example", LINK)],
            ),
            (
                "[r]: https://x.example",
                vec![Span::new("[r]: https://x.example", p)],
            ),
        ];
        for (markdown, expected) in cases {
            assert_eq!(spans(markdown, p), expected, "{markdown}");
        }
    }

    #[test]
    fn wrapping_keeps_words_whole_and_cuts_only_what_cannot_fit() {
        let plain = |text: &str| vec![Span::new(text, Style::PLAIN)];
        /// Spans, width, first prefix, other prefix, prefix width, lines expected.
        type Case<'a> = (Vec<Span>, usize, &'a str, &'a str, usize, Vec<&'a str>);
        let cases: Vec<Case> = vec![
            (
                plain("one two three"),
                7,
                "",
                "",
                0,
                vec!["one two", "three"],
            ),
            (plain("one two three"), 20, "", "", 0, vec!["one two three"]),
            (
                plain("abcdefghij"),
                4,
                "",
                "",
                0,
                vec!["abcd", "efgh", "ij"],
            ),
            (plain("aa bb cc"), 7, "• ", "  ", 2, vec!["• aa bb", "  cc"]),
            (plain("日本語 の"), 6, "", "", 0, vec!["日本語", "の"]),
            (plain(""), 10, "> ", "> ", 2, vec!["> "]),
            (
                vec![
                    Span::new("x ", Style::PLAIN),
                    Span::new("bold", Style::bold()),
                    Span::new(", y", Style::PLAIN),
                ],
                6,
                "",
                "",
                0,
                vec!["x", "\x1b[1mbold\x1b[0m,", "y"],
            ),
        ];
        for (spans, width, first, rest, indent, expected) in cases {
            assert_eq!(
                wrap(&spans, width, first, rest, indent),
                expected,
                "{spans:?}"
            );
        }
    }
}
