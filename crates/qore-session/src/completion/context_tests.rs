use std::path::Path;

use super::{
    language_of, refactor_prompt, CompletionContext, Cursor, OpenFile, Range, RefactorPrompt,
    Window,
};

fn at(line: u32, character: u32) -> Cursor {
    Cursor { line, character }
}

const WIDE: Window = Window {
    lines_before: 50,
    lines_after: 30,
};

/// Rule: `character` counts UTF-16 units; a position past its line, past the document or
/// inside a surrogate pair is clamped.
#[test]
fn cursor_offsets() {
    let cases: &[(&str, &str, Cursor, usize)] = &[
        ("ascii middle", "hello\nworld", at(1, 2), 8),
        ("start of document", "hello", at(0, 0), 0),
        ("end of line", "hello\nworld", at(0, 5), 5),
        ("past end of line", "hello\nworld", at(0, 99), 5),
        (
            "past end of CRLF line stops before \\r",
            "ab\r\ncd",
            at(0, 9),
            2,
        ),
        ("past last line", "hello\nworld", at(7, 0), 11),
        ("é is one unit, two bytes", "éa", at(0, 1), 2),
        ("中 is one unit, three bytes", "中x", at(0, 1), 3),
        ("😀 is two units, four bytes", "😀x", at(0, 2), 4),
        ("inside 😀 clamps to its start", "a😀x", at(0, 2), 1),
        ("after 😀 and 中", "😀中b", at(0, 3), 7),
        ("empty document", "", at(3, 4), 0),
        ("line after a final newline", "a\n", at(1, 0), 2),
    ];
    for (name, text, cursor, want) in cases {
        assert_eq!(cursor.offset_in(text), *want, "{name}");
    }
}

struct Case {
    name: &'static str,
    text: &'static str,
    cursor: Cursor,
    window: Window,
    prefix: &'static str,
    suffix: &'static str,
    line_before: &'static str,
    line_after: &'static str,
}

/// Rule: prefix = window lines before + the line left of the cursor; suffix = the rest of
/// the line, its line end and the window lines after; line ends kept as they are.
#[test]
fn context_from_document_and_cursor() {
    let cut = Window {
        lines_before: 1,
        lines_after: 1,
    };
    let cases = [
        Case {
            name: "ascii",
            text: "fn main() {\n    let x = 1;\n}\n",
            cursor: at(1, 7),
            window: WIDE,
            prefix: "fn main() {\n    let",
            suffix: " x = 1;\n}\n",
            line_before: "    let",
            line_after: " x = 1;",
        },
        Case {
            name: "window cuts both sides",
            text: "a\nb\nc\nd\ne\n",
            cursor: at(2, 1),
            window: cut,
            prefix: "b\nc",
            suffix: "\nd\n",
            line_before: "c",
            line_after: "",
        },
        Case {
            name: "zero window: the cursor's line only",
            text: "a\nbc\nd",
            cursor: at(1, 1),
            window: Window {
                lines_before: 0,
                lines_after: 0,
            },
            prefix: "b",
            suffix: "c\n",
            line_before: "b",
            line_after: "c",
        },
        Case {
            name: "CRLF keeps its line ends",
            text: "a\r\nbc\r\nd\r\n",
            cursor: at(1, 1),
            window: WIDE,
            prefix: "a\r\nb",
            suffix: "c\r\nd\r\n",
            line_before: "b",
            line_after: "c",
        },
        Case {
            name: "multi-byte: é and 中 before, 😀 after",
            text: "é中😀z\n",
            cursor: at(0, 2),
            window: WIDE,
            prefix: "é中",
            suffix: "😀z\n",
            line_before: "é中",
            line_after: "😀z",
        },
        Case {
            name: "after 😀 (two units)",
            text: "😀z",
            cursor: at(0, 2),
            window: WIDE,
            prefix: "😀",
            suffix: "z",
            line_before: "😀",
            line_after: "z",
        },
        Case {
            name: "empty document",
            text: "",
            cursor: at(0, 0),
            window: WIDE,
            prefix: "",
            suffix: "",
            line_before: "",
            line_after: "",
        },
        Case {
            name: "cursor at start",
            text: "ab\ncd",
            cursor: at(0, 0),
            window: WIDE,
            prefix: "",
            suffix: "ab\ncd",
            line_before: "",
            line_after: "ab",
        },
        Case {
            name: "cursor at end",
            text: "ab\ncd",
            cursor: at(1, 2),
            window: WIDE,
            prefix: "ab\ncd",
            suffix: "",
            line_before: "cd",
            line_after: "",
        },
        Case {
            name: "cursor past end of line",
            text: "ab\r\ncd",
            cursor: at(0, 40),
            window: WIDE,
            prefix: "ab",
            suffix: "\r\ncd",
            line_before: "ab",
            line_after: "",
        },
        Case {
            name: "cursor past end of document",
            text: "ab\ncd\n",
            cursor: at(9, 9),
            window: cut,
            prefix: "cd\n",
            suffix: "",
            line_before: "",
            line_after: "",
        },
    ];
    for case in cases {
        let got = CompletionContext::new(case.text, case.cursor, &case.window);
        let want = CompletionContext {
            prefix: case.prefix.into(),
            suffix: case.suffix.into(),
            line_before: case.line_before.into(),
            line_after: case.line_after.into(),
        };
        assert_eq!(got, want, "{}", case.name);
        assert_eq!(got.fim_parts(), (case.prefix, case.suffix), "{}", case.name);
    }
}

#[test]
fn window_default_is_fifty_before_thirty_after() {
    assert_eq!(Window::default(), WIDE);
}

/// A chat-prompt case: name, language, with the open files, parts the prompt has (in this
/// order), parts it lacks.
type PromptCase = (
    &'static str,
    Option<&'static str>,
    bool,
    &'static [&'static str],
    &'static [&'static str],
);

/// Rule: the chat prompt carries language (when known), path, the answer-only instruction,
/// the open files (when given, in order, before the code) and the code with `<cursor>`
/// between prefix and suffix.
#[test]
fn chat_prompt_parts() {
    let ctx = CompletionContext::new("let a = 1;\nlet b", at(1, 5), &WIDE);
    let files = [
        OpenFile {
            path: "src/lib.rs".into(),
            text: "pub fn one() -> i32 { 1 }\n".into(),
        },
        OpenFile {
            path: "notes.md".into(),
            text: "no final newline".into(),
        },
    ];
    let cases: &[PromptCase] = &[
        (
            "known language",
            Some("Rust"),
            false,
            &[
                "Language: Rust\n",
                "File: src/main.rs\n",
                "inserted code only",
                "<code_context>\nlet a = 1;\nlet b<cursor>\n</code_context>",
            ],
            &["Other open files", "<file"],
        ),
        (
            "unknown language",
            None,
            false,
            &["File: src/main.rs\n", "<cursor>"],
            &["Language:"],
        ),
        (
            "open files come before the code, each closed on its own line",
            Some("Rust"),
            true,
            &[
                "inserted code only",
                "Other open files, for context:\n\n",
                "<file path=\"src/lib.rs\">\npub fn one() -> i32 { 1 }\n</file>\n\n",
                "<file path=\"notes.md\">\nno final newline\n</file>\n\n",
                "<code_context>\n",
            ],
            &[],
        ),
    ];
    for (name, language, with_files, has, lacks) in cases {
        let extra: &[OpenFile] = if *with_files { &files } else { &[] };
        let prompt = ctx.chat_prompt(Path::new("src/main.rs"), *language, extra);
        let mut from = 0;
        for part in *has {
            let found = prompt[from..].find(part);
            assert!(
                found.is_some(),
                "{name}: {part:?} missing (in order) in {prompt}"
            );
            from += found.unwrap_or(0) + part.len();
        }
        for part in *lacks {
            assert!(
                !prompt.contains(part),
                "{name}: {part:?} present in {prompt}"
            );
        }
    }
}

/// Rule: the extension, in any case, names the language; missing or unknown → None.
#[test]
fn language_from_extension() {
    let cases: &[(&str, Option<&str>)] = &[
        ("src/lib.rs", Some("Rust")),
        ("a/b.PY", Some("Python")),
        ("x.tsx", Some("TypeScript")),
        ("x.hpp", Some("C++")),
        ("x.h", Some("C")),
        ("x.yml", Some("YAML")),
        ("Makefile", None),
        ("x.unknown", None),
        ("", None),
        (".rs", None),
    ];
    for (path, want) in cases {
        assert_eq!(language_of(Path::new(path)), *want, "{path}");
    }
}

fn range(a: (u32, u32), b: (u32, u32)) -> Range {
    Range {
        start: at(a.0, a.1),
        end: at(b.0, b.1),
    }
}

/// Rule: markers around the selection (UTF-16 range, clamped, backwards read forwards);
/// the indentation of the selection's first line returned and said in words.
#[test]
fn refactor_prompt_marks_selection() {
    let cases: &[(&str, &str, Range, &str, &str, &str)] = &[
        (
            "spaces",
            "fn f() {\n    let x = 1;\n}\n",
            range((1, 4), (1, 14)),
            "    ",
            "its first line has 4 spaces",
            "fn f() {\n    <selection_start>let x = 1;<selection_end>\n}\n",
        ),
        (
            "one tab, backwards range",
            "a\n\tb😀c\n",
            range((1, 4), (1, 1)),
            "\t",
            "its first line has 1 tab",
            "a\n\t<selection_start>b😀<selection_end>c\n",
        ),
        (
            "mixed indentation",
            "\t\t  x\n",
            range((0, 0), (0, 5)),
            "\t\t  ",
            "2 tabs and 2 spaces",
            "<selection_start>\t\t  x<selection_end>\n",
        ),
        (
            "no indentation, range past the end",
            "x = 1",
            range((0, 0), (5, 0)),
            "",
            "its first line has no indentation",
            "<selection_start>x = 1<selection_end>",
        ),
    ];
    for (name, text, selection, indent, says, marked) in cases {
        let RefactorPrompt {
            message,
            indent: got,
        } = refactor_prompt(text, *selection, "Make it better");
        assert_eq!(got, *indent, "{name}");
        for part in [*says, *marked, "Make it better", "No Markdown code fences"] {
            assert!(
                message.contains(part),
                "{name}: {part:?} missing in {message}"
            );
        }
    }
}

#[test]
fn refactor_prompt_window_cuts_far_lines() {
    let text: String = (0..100).map(|n| format!("line{n}\n")).collect();
    let message = refactor_prompt(&text, range((60, 0), (60, 6)), "x").message;
    let cases = [
        ("line9\n", false),
        ("line10\n", true),
        ("line90\n", true),
        ("line91\n", false),
    ];
    for (line, want) in cases {
        assert_eq!(message.contains(&format!("\n{line}")), want, "{line:?}");
    }
}

#[test]
fn the_replaced_range_covers_what_the_completion_overwrites() {
    let on = |line: u32, a: u32, b: u32| Range {
        start: Cursor { line, character: a },
        end: Cursor { line, character: b },
    };
    let cases = [
        ("nothing replaced", "x = \n", 4, 0, on(0, 4, 4)),
        ("a closer replaced", "f(a)\n", 3, 1, on(0, 3, 4)),
        ("UTF-16 units left and right", "😀(é)\n", 3, 2, on(0, 3, 5)),
        ("more than the line holds", "f(a)\n", 3, 9, on(0, 3, 4)),
    ];
    for (name, text, character, replace, expected) in cases {
        let cursor = Cursor { line: 0, character };
        let ctx = CompletionContext::new(text, cursor, &Window::default());
        assert_eq!(ctx.replaced(0, replace), expected, "{name}");
    }
}

#[test]
fn a_cursor_is_clamped_into_the_text() {
    let cases = [
        ("inside", "ab\ncd\n", at(1, 1), at(1, 1)),
        ("past the line's end", "ab\ncd\n", at(0, 9), at(0, 2)),
        ("past the last line", "ab\ncd", at(7, 3), at(1, 2)),
        ("past a final line end", "ab\n", at(5, 0), at(1, 0)),
        ("inside a surrogate pair", "😀x", at(0, 1), at(0, 0)),
        ("empty text", "", at(3, 3), at(0, 0)),
    ];
    for (name, text, cursor, expected) in cases {
        assert_eq!(cursor.clamped_in(text), expected, "{name}");
    }
}
