//! The renderer as a whole: Markdown in, terminal lines out (expected lines written by hand).

use unicode_width::UnicodeWidthStr as _;

use super::style::strip;
use super::*;

fn render(markdown: &str, width: usize) -> String {
    let mut renderer = Renderer::new(width, Depth::Palette256);
    let mut out = renderer.push(markdown);
    out += &renderer.finish();
    out
}

/// Each case: Markdown, then the lines a person reads (escapes taken out).
#[test]
fn markdown_shows_without_its_markers() {
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("# Title\n", vec!["Title"]),
        ("### Third ###\n", vec!["Third"]),
        ("Some **bold** and *it*.\n", vec!["Some bold and it."]),
        ("- one\n- two\n", vec!["• one", "• two"]),
        ("- a\n  - b\n    - c\n", vec!["• a", "  ◦ b", "    ▪ c"]),
        ("1. first\n2. second\n", vec!["1. first", "2. second"]),
        ("> quoted\n>> deeper\n", vec!["│ quoted", "│ │ deeper"]),
        ("---\n", vec!["──────────────────────────────"]),
        (
            "See [the docs](https://docs.example).\n",
            vec!["See the docs", "(https://docs.example)."],
        ),
        (
            "```rust\nfn main() {}\n```\nafter\n",
            vec!["fn main() {}", "after"],
        ),
        ("~~~\n  kept  indent\n~~~\n", vec!["  kept  indent"]),
        ("- list\n  ```sh\n  ls -l\n  ```\n", vec!["• list", "ls -l"]),
        (
            "| a | b |\n|---|--:|\n| x | 10 |\n\nend\n",
            vec![
                "┌───┬────┐",
                "│ a │  b │",
                "├───┼────┤",
                "│ x │ 10 │",
                "└───┴────┘",
                "",
                "end",
            ],
        ),
        ("a | b\nnot a table\n", vec!["a | b", "not a table"]),
        ("no newline at the end", vec!["no newline at the end"]),
        ("line\r\n", vec!["line"]),
    ];
    for (markdown, expected) in cases {
        let shown = strip(&render(markdown, 30));
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines, expected, "{markdown:?}");
    }
}

/// Each case: Markdown, then the exact bytes of one rendered line.
#[test]
fn styles_are_the_ones_chosen() {
    let cases = [
        ("# Title\n", "\x1b[1;4;35mTitle\x1b[0m"),
        ("## Sub\n", "\x1b[1;35mSub\x1b[0m"),
        ("a **b**\n", "a \x1b[1mb\x1b[0m"),
        ("`code`\n", "\x1b[36mcode\x1b[0m"),
        ("~~gone~~\n", "\x1b[9mgone\x1b[0m"),
        ("> q\n", "\x1b[2m│\x1b[0m q"),
    ];
    for (markdown, expected) in cases {
        let shown = render(markdown, 80);
        assert_eq!(shown.lines().next(), Some(expected), "{markdown:?}");
    }
}

#[test]
fn code_is_coloured_and_an_unfinished_block_still_is() {
    for markdown in ["```rust\nlet x = 1;\n```\n", "```rust\nlet x = 1;"] {
        let shown = render(markdown, 80);
        assert_eq!(strip(&shown), "let x = 1;\n", "{markdown:?}");
        assert!(shown.contains("\x1b[38;5;"), "{shown:?}");
    }
    let plain = render("let x = 1;\n", 80);
    assert!(!plain.contains("\x1b["), "{plain:?}");
}

#[test]
fn a_line_is_printed_once_its_newline_comes_and_a_table_once_it_ends() {
    let mut renderer = Renderer::new(80, Depth::Palette256);
    assert_eq!(renderer.push("# Hea"), "");
    assert_eq!(strip(&renderer.push("ding\nnext")), "Heading\n");
    assert_eq!(strip(&renderer.push(" line\n| h |\n")), "next line\n");
    assert_eq!(renderer.push("|---|\n| c |\n"), "");
    let table = strip(&renderer.push("\n"));
    assert_eq!(table, "┌───┐\n│ h │\n├───┤\n│ c │\n└───┘\n\n");
    assert_eq!(renderer.finish(), "");
}

#[test]
fn pieces_of_any_size_render_as_the_whole_does() {
    let markdown = "# Head\n\nText with **bold** and `code`, a [link](https://l.example).\n\n\
                    - item one\n  - nested é\n\n| k | v |\n|---|---|\n| ü | 2 |\n\n\
                    ```python\ndef f():\n    return 1\n```\n> quote\n\nend";
    let whole = render(markdown, 40);
    for size in 1..=7 {
        let mut renderer = Renderer::new(40, Depth::Palette256);
        let mut out = String::new();
        let chars: Vec<char> = markdown.chars().collect();
        for piece in chars.chunks(size) {
            out += &renderer.push(&piece.iter().collect::<String>());
        }
        out += &renderer.finish();
        assert_eq!(out, whole, "pieces of {size}");
    }
}

#[test]
fn prose_wraps_within_the_width_and_code_does_not() {
    let words = "The quick brown fox jumps over the lazy dog again and again. ".repeat(5);
    let long_code = format!("let s = \"{}\";", "x".repeat(60));
    let markdown = format!("{words}\n- {words}\n> {words}\n```rust\n{long_code}\n```\n");
    let shown = strip(&render(&markdown, 40));
    let mut lines = shown.lines();
    for line in lines.by_ref().take_while(|line| !line.starts_with("let s")) {
        assert!(line.width() <= 40, "{line:?}");
    }
    assert!(shown.contains(&long_code), "{shown}");
    let item_lines: Vec<&str> = shown.lines().skip_while(|l| !l.starts_with('•')).collect();
    assert!(
        item_lines[1].starts_with("  ") && !item_lines[1].starts_with("   "),
        "{item_lines:?}"
    );
}
