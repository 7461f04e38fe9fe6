//! One table per rule of [`super`]: real-looking replies from FIM and chat models.

use super::{
    clean_completion, clean_refactor, drop_prose, drop_restated_after, drop_restated_before,
    fenced_body, replace_length, Completion, CursorText, Mode,
};

const NO_CURSOR: CursorText<'static> = CursorText {
    before: "",
    after: "",
};

fn complete(reply: &str, before: &str, after: &str, mode: Mode) -> Option<String> {
    clean_completion(reply, &CursorText { before, after }, mode).map(|c| c.text)
}

#[test]
fn a_fenced_body_is_taken_else_the_reply() {
    let cases: &[(&str, &str, Option<&str>)] = &[
        (
            "python tag",
            "```python\ndef add(a, b):\n    return a + b\n```",
            Some("def add(a, b):\n    return a + b"),
        ),
        ("no tag", "```\nlet x = 1;\n```\n", Some("let x = 1;")),
        (
            "prose around",
            "Sure! Here it is:\n```js\nconst x = 1;\n```\nThis declares x.",
            Some("const x = 1;"),
        ),
        (
            "first of two blocks",
            "```rust\nfn a() {}\n```\nor\n```rust\nfn b() {}\n```",
            Some("fn a() {}"),
        ),
        (
            "not closed (cut short)",
            "```py\nreturn x",
            Some("return x"),
        ),
        (
            "closing fence indented",
            "```\n  x += 1\n  ```",
            Some("  x += 1"),
        ),
        ("one line", "```x = 1```", Some("x = 1")),
        ("empty block", "```python\n```", Some("")),
        ("no fence", "return a + b", None),
        ("a lone fence on one line", "use ```", None),
    ];
    for (name, reply, want) in cases {
        assert_eq!(fenced_body(reply), *want, "{name}");
    }
}

#[test]
fn leading_prose_lines_are_dropped_at_most_three() {
    let cases: &[(&str, &str, &str)] = &[
        ("here is", "Here is the completion:\nx = 1", "x = 1"),
        ("here's, then a blank", "Here's the code\n\nfoo()", "foo()"),
        (
            "the completed",
            "The completed function:\nreturn 1",
            "return 1",
        ),
        (
            "the refactored",
            "The refactored code is below.\nb()",
            "b()",
        ),
        (
            "i've changed",
            "I've changed the loop:\nfor x in y:",
            "for x in y:",
        ),
        ("short, colon", "Completion:\n    pass", "    pass"),
        (
            "unicode prose",
            "Voilà la suite :\nprint(\"é\")",
            "print(\"é\")",
        ),
        ("three dropped", "Sure:\nOK:\nCode:\nx", "x"),
        ("a fourth stays", "A:\nB:\nC:\nD:\nx", "D:\nx"),
        (
            "python else is code",
            "else:\n    y = 2",
            "else:\n    y = 2",
        ),
        ("def is code", "def f():\n    pass", "def f():\n    pass"),
        ("a call is code", "Foo(x):", "Foo(x):"),
        ("a long line with a colon is code", &LONG_COLON, &LONG_COLON),
        ("no prose", "  return a + b", "  return a + b"),
        ("blank first line stays", "\n    return 1", "\n    return 1"),
    ];
    for (name, text, want) in cases {
        assert_eq!(drop_prose(text), *want, "{name}");
    }
}

static LONG_COLON: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("Result{}:", "x".repeat(60)));

#[test]
fn what_restates_the_text_before_the_cursor_is_removed() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "python line restated",
            "def add(a, b):\n    return a",
            "    return a + b",
            " + b",
        ),
        (
            "restated without its indentation",
            "def add(a, b):\n    return a",
            "return a + b",
            " + b",
        ),
        (
            "several lines restated (chat model)",
            "fn main() {\n    let x = ",
            "fn main() {\n    let x = 42;\n}",
            "42;\n}",
        ),
        (
            "the longest tail wins",
            "a = 1\na = 1\na = ",
            "a = 1\na = 2",
            "2",
        ),
        ("unicode", "naïve = \"é", "naïve = \"été\"", "té\""),
        (
            "a one-char overlap mid-line stays",
            "x = a",
            "a + 1",
            "a + 1",
        ),
        (
            "blank indentation stays",
            "if x:\n    ",
            "    y()",
            "    y()",
        ),
        ("nothing restated", "const s = ", "'hi';", "'hi';"),
        ("only the prefix", "let x = 1;", "let x = 1;", ""),
    ];
    for (name, before, text, want) in cases {
        assert_eq!(drop_restated_before(text, before), *want, "{name}");
    }
}

#[test]
fn trailing_lines_that_restate_the_text_after_the_cursor_are_removed() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "js closing brace",
            "\n}\n\nmodule.exports = f;",
            "  return 1;\n}",
            "  return 1;",
        ),
        (
            "rust lines after",
            ")\n    Ok(())\n}\n",
            "x)?;\n    Ok(())\n}\n",
            "x)?;",
        ),
        (
            "trailing spaces do not matter",
            "\n    print(x)  \n",
            "x = 1\n    print(x)",
            "x = 1",
        ),
        (
            "nothing restated",
            "\n}",
            "  a();\n  b();\n",
            "  a();\n  b();\n",
        ),
        (
            "blank lines are not a restatement",
            "\n  \nx",
            "a()\n  ",
            "a()\n  ",
        ),
        (
            "the first line is never removed",
            "\nfoo()",
            "foo()",
            "foo()",
        ),
    ];
    for (name, after, text, want) in cases {
        assert_eq!(drop_restated_after(text, after), *want, "{name}");
    }
}

#[test]
fn single_line_mode_stops_at_the_line_end_and_blank_is_none() {
    let cases: &[(&str, &str, Mode, Option<&str>)] = &[
        (
            "single keeps line one",
            "a + b\nprint(1)",
            Mode::Single,
            Some("a + b"),
        ),
        (
            "multi keeps all",
            "a + b\nprint(1)",
            Mode::Multi,
            Some("a + b\nprint(1)"),
        ),
        (
            "one line loses its newline",
            "a + b\n",
            Mode::Multi,
            Some("a + b"),
        ),
        ("single, crlf", "a + b\r\nc", Mode::Single, Some("a + b")),
        ("multi, crlf", "a\r\nb\r\n", Mode::Multi, Some("a\nb\n")),
        ("empty reply", "", Mode::Multi, None),
        ("blank reply", "  \n\n", Mode::Multi, None),
        ("only prose", "Here is the code:", Mode::Multi, None),
        ("empty fence", "```python\n```", Mode::Multi, None),
        (
            "single, starts with a newline",
            "\n    x",
            Mode::Single,
            None,
        ),
    ];
    for (name, reply, mode, want) in cases {
        let got = complete(reply, "", "", *mode);
        assert_eq!(got.as_deref(), *want, "{name}");
    }
}

#[test]
fn a_whole_chat_reply_is_cleaned() {
    let before = "def area(r):\n    return ";
    let after = "\n\nprint(area(2))\n";
    let cases: &[(&str, &str, Mode, Option<&str>)] = &[
        (
            "fence, prose, prefix restated",
            "Here's the completion:\n```python\ndef area(r):\n    return 3.14159 * r ** 2\n```",
            Mode::Multi,
            Some("3.14159 * r ** 2"),
        ),
        (
            "suffix restated",
            "3.14 * r * r\n\nprint(area(2))\n",
            Mode::Multi,
            Some("3.14 * r * r"),
        ),
        (
            "the reply is the code already there",
            "```\ndef area(r):\n    return \n```",
            Mode::Single,
            None,
        ),
    ];
    for (name, reply, mode, want) in cases {
        let got = complete(reply, before, after, *mode);
        assert_eq!(got.as_deref(), *want, "{name}");
    }
}

#[test]
fn what_is_overwritten_right_of_the_cursor() {
    let cases: &[(&str, &str, &str, usize)] = &[
        ("nothing right", "a + b", "", 0),
        ("common prefix", "name)", "nam", 3),
        ("the text repeats the closer", "a, b)", ")", 1),
        ("closer and semicolon", "x, y);", ");", 2),
        ("ends with a closer found right", "items[0])", ") + 1", 5),
        ("brings no closer: keeps it", "a, b", ")", 0),
        ("code right stays", "foo", " bar", 0),
        ("an opener right stays", "bar", "()", 0),
        ("an opener right, the text closes it", "bar()", "()", 2),
        ("the first line's prefix only", "ab\nc", "abc", 2),
        ("a later line closes what is right", "a\nb)", ")", 1),
        ("unicode chars, not bytes", "é)", "é)", 2),
        ("closers with whitespace", "f(x) ", ") ;", 3),
    ];
    for (name, text, right, want) in cases {
        assert_eq!(replace_length(text, right), *want, "{name}");
    }
}

#[test]
fn a_completion_carries_its_replace_length() {
    let cursor = CursorText {
        before: "console.log(",
        after: ");\nfoo();",
    };
    let got = clean_completion("```js\nconsole.log(\"hi\");\n```", &cursor, Mode::Single);
    let want = Completion {
        text: "\"hi\");".into(),
        replace: 2,
    };
    assert_eq!(got, Some(want));
    assert_eq!(clean_completion("", &NO_CURSOR, Mode::Multi), None);
}

#[test]
fn a_refactor_reply_is_cleaned_and_indented_as_the_selection() {
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        (
            "fenced, reindented",
            "```python\ndef f(x):\n    return x * 2\n```",
            "    ",
            Some("    def f(x):\n        return x * 2"),
        ),
        (
            "same indentation kept",
            "    let a = 1;\n    let b = 2;",
            "    ",
            Some("    let a = 1;\n    let b = 2;"),
        ),
        (
            "deeper reply dedented",
            "\n\n        a();\n\n        b();\n",
            "  ",
            Some("  a();\n\n  b();"),
        ),
        (
            "prose, crlf, unfenced",
            "Here is the refactored code:\r\n\r\nconst y = x ?? 0;\r\n",
            "",
            Some("const y = x ?? 0;"),
        ),
        (
            "tabs",
            "```go\nif ok {\n\treturn\n}\n```",
            "\t",
            Some("\tif ok {\n\t\treturn\n\t}"),
        ),
        (
            "unicode",
            "```\n// ñandú\nlet ñ = 1;\n```",
            "  ",
            Some("  // ñandú\n  let ñ = 1;"),
        ),
        ("only prose", "Here is the code:\n\n", "", None),
        ("empty fence", "```rust\n```", "  ", None),
        ("empty", "", "", None),
    ];
    for (name, reply, indent, want) in cases {
        assert_eq!(clean_refactor(reply, indent).as_deref(), *want, "{name}");
    }
}
