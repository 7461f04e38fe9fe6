//! The pure parts of completion: cutting other documents to the budget (the range a
//! completion replaces is `CompletionContext::replaced`'s, tested in qore-session).

use super::{cut, open_files};
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
