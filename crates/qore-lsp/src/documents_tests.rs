//! Document sync, one table: a text, changes, the text after them.

use serde_json::json;
use tower_lsp_server::ls_types::TextDocumentContentChangeEvent;

use super::Documents;

/// A change of `[l1, c1, l2, c2]` (or the whole text with `None`) to `text`.
fn change(range: Option<[u32; 4]>, text: &str) -> TextDocumentContentChangeEvent {
    let range = range.map(|[l1, c1, l2, c2]| {
        json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
    });
    serde_json::from_value(json!({"range": range, "text": text})).unwrap()
}

#[test]
fn changes_apply_in_order_with_utf16_positions() {
    let cases = vec![
        ("whole text", "abc", vec![change(None, "xyz")], "xyz"),
        (
            "insertion",
            "ab\ncd\n",
            vec![change(Some([1, 1, 1, 1]), "X")],
            "ab\ncXd\n",
        ),
        (
            "deletion across lines",
            "ab\ncd\n",
            vec![change(Some([0, 1, 1, 1]), "")],
            "ad\n",
        ),
        (
            "in order: the second change sees the first",
            "one\n",
            vec![
                change(Some([0, 3, 0, 3]), " two"),
                change(Some([0, 7, 0, 7]), "!"),
            ],
            "one two!\n",
        ),
        (
            "after an emoji (2 UTF-16 units)",
            "😀a\n",
            vec![change(Some([0, 2, 0, 3]), "b")],
            "😀b\n",
        ),
        (
            "inside the emoji: its start",
            "😀a\n",
            vec![change(Some([0, 1, 0, 1]), "<")],
            "<😀a\n",
        ),
        (
            "CRLF line ends",
            "ab\r\ncd\r\n",
            vec![change(Some([1, 0, 1, 2]), "X")],
            "ab\r\nX\r\n",
        ),
        (
            "past the end: clamped",
            "ab\n",
            vec![change(Some([9, 9, 9, 9]), "Z")],
            "ab\nZ",
        ),
        (
            "backwards range",
            "abcd",
            vec![change(Some([0, 3, 0, 1]), "-")],
            "a-d",
        ),
    ];
    for (name, text, changes, expected) in cases {
        let mut docs = Documents::default();
        docs.open("file:///a", None, text.into(), 1, false);
        assert!(docs.change("file:///a", 2, &changes), "{name}");
        let doc = docs.get("file:///a").unwrap();
        assert_eq!((doc.text.as_str(), doc.version), (expected, 2), "{name}");
    }
}

#[test]
fn others_are_the_open_unignored_documents_most_recent_first() {
    let mut docs = Documents::default();
    docs.open("file:///a", None, "a".into(), 1, false);
    docs.open("file:///b", None, "b".into(), 1, false);
    docs.open("file:///secret", None, "s".into(), 1, true);
    docs.open("file:///c", None, "c".into(), 1, false);
    assert!(docs.change("file:///a", 2, &[change(None, "a2")]));
    assert!(!docs.change("file:///nope", 2, &[change(None, "x")]));
    let texts: Vec<&str> = docs
        .others("file:///c")
        .iter()
        .map(|d| d.text.as_str())
        .collect();
    assert_eq!(texts, ["a2", "b"]);
    docs.close("file:///a");
    assert_eq!(docs.len(), 3);
    assert!(docs.heap_bytes() >= 3);
}
