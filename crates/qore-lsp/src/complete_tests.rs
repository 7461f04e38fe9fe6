//! The pure parts of completion: cutting other documents to the budget, and the range a
//! completion replaces.

use qore_session::completion::clean::Completion;
use qore_session::completion::context::{CompletionContext, Cursor, Window};
use tower_lsp_server::ls_types::{Position, Range};

use super::{cut, edit_range, open_files};
use crate::documents::Documents;

#[test]
fn cut_keeps_whole_lines_within_the_budget() {
    let cases = [
        ("fits", "ab\ncd\n", 10, "ab\ncd\n"),
        ("whole lines", "ab\ncd\nef\n", 7, "ab\ncd\n"),
        ("one long line: a char boundary", "aé", 2, "a"),
        ("nothing", "abc", 0, ""),
    ];
    for (name, text, max, expected) in cases {
        assert_eq!(cut(text, max), expected, "{name}");
    }
}

#[test]
fn open_files_are_the_recent_others_under_the_budget() {
    let mut docs = Documents::default();
    let path = |p: &str| Some(std::path::PathBuf::from(p));
    docs.open("file:///old", path("/old"), "old\n".into(), 1, false);
    docs.open("file:///big", path("/big"), "1234\n5678\n".into(), 1, false);
    docs.open("file:///secret", path("/secret"), "s\n".into(), 1, true);
    docs.open("file:///me", path("/me"), "me\n".into(), 1, false);
    let files = open_files(&docs, "file:///me", 9);
    let got: Vec<(&str, &str)> = files
        .iter()
        .map(|f| (f.path.as_str(), f.text.as_str()))
        .collect();
    assert_eq!(got, [("/big", "1234\n"), ("/old", "old\n")]);
    assert!(open_files(&docs, "file:///me", 0).is_empty());
}

#[test]
fn the_range_covers_what_the_completion_overwrites() {
    let units = |line: u32, a: u32, b: u32| Range {
        start: Position::new(line, a),
        end: Position::new(line, b),
    };
    let cases = [
        ("nothing replaced", "x = \n", 4, 0, units(0, 4, 4)),
        ("a closer replaced", "f(a)\n", 3, 1, units(0, 3, 4)),
        (
            "UTF-16 units left and right",
            "😀(é)\n",
            3,
            2,
            units(0, 3, 5),
        ),
    ];
    for (name, text, character, replace, expected) in cases {
        let cursor = Cursor { line: 0, character };
        let ctx = CompletionContext::new(text, cursor, &Window::default());
        let completion = Completion {
            text: "x".into(),
            replace,
        };
        assert_eq!(edit_range(&ctx, 0, &completion), expected, "{name}");
    }
}
