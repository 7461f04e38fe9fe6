//! Copilot shapes: reading a completion request as each plugin sends it, and the item built
//! from a completion (UTF-16 ranges with multi-byte characters on the line).

use qore_session::completion::context::{CompletionContext, Cursor, Window};
use serde_json::{json, Value};
use tower_lsp_server::ls_types::Position;

use super::{item, rejected_uuids, uuid_of, CompletionRequest};

const URI: &str = "file:///p/add.py";

/// The character and version read, or the error.
type Read = Result<(u32, Option<i64>), &'static str>;

#[test]
fn a_completion_request_is_read_from_doc_else_from_the_top_level() {
    let at = json!({"line": 1, "character": 11});
    let cases: Vec<(&str, Value, Read)> = vec![
        (
            "Qt Creator: doc only",
            json!({"doc": {"uri": URI, "version": 3, "position": at}}),
            Ok((11, Some(3))),
        ),
        (
            "copilot.lua: extra keys",
            json!({"_": true, "doc": {"uri": URI, "version": 4, "position": at, "insertSpaces": true,
                "tabSize": 4, "indentSize": 4, "relativePath": "add.py", "languageId": "python",
                "source": "def add", "ifInserted": {}},
                "textDocument": {"uri": URI, "version": 4}, "position": at}),
            Ok((11, Some(4))),
        ),
        (
            "top level only",
            json!({"textDocument": {"uri": URI, "version": 5}, "position": at}),
            Ok((11, Some(5))),
        ),
        (
            "doc without a position",
            json!({"doc": {"uri": URI}, "position": {"line": 1, "character": 2}}),
            Ok((2, None)),
        ),
        (
            "no uri",
            json!({"doc": {"position": at}}),
            Err("no doc.uri nor textDocument.uri"),
        ),
        (
            "no position",
            json!({"doc": {"uri": URI}}),
            Err("no doc.position nor position"),
        ),
    ];
    for (name, params, expected) in cases {
        let got = CompletionRequest::from_params(params);
        match (got, expected) {
            (Ok(request), Ok((character, version))) => {
                assert_eq!(request.uri.as_str(), URI, "{name}");
                assert_eq!(request.position, Position::new(1, character), "{name}");
                assert_eq!(request.version, version, "{name}");
            }
            (Err(why), Err(wanted)) => assert_eq!(why, wanted, "{name}"),
            (got, wanted) => panic!("{name}: got {got:?}, wanted {wanted:?}"),
        }
    }
    assert!(
        CompletionRequest::from_params(json!([1])).is_err(),
        "not an object"
    );
}

#[test]
fn an_item_is_the_whole_line_from_character_zero() {
    let cases = [
        // (line, cursor character in UTF-16 units, completion, characters it overwrites,
        //  wanted text, wanted range end)
        ("    return ", 11, "a + b", 0, "    return a + b", 11),
        // é is one UTF-16 unit (two bytes), 😀 two units (four bytes).
        ("s = 'é😀' + ", 12, "x", 0, "s = 'é😀' + x", 12),
        // The completion overwrites the closer right of the cursor: the range covers it.
        ("f(😀", 4, "1)", 1, "f(😀1)", 5),
    ];
    for (line, character, completion, replace, text, end) in cases {
        let doc = format!("first\n{line})\n"); // a closer right of every cursor
        let cursor = Cursor { line: 1, character };
        let ctx = CompletionContext::new(&doc, cursor, &Window::default());
        assert_eq!(ctx.line_before, line, "{line}");
        let range = ctx.replaced(1, replace);
        let position = Position::new(1, character);
        let at = Position::new(range.end.line, range.end.character);
        let item = item(&ctx.line_before, completion, position, at, 7);
        assert_eq!(item["text"], text, "{line}");
        assert_eq!(item["displayText"], completion, "{line}");
        assert_eq!(
            item["position"],
            json!({"line": 1, "character": character}),
            "{line}"
        );
        let range =
            json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": end}});
        assert_eq!(item["range"], range, "{line}");
        assert_eq!(item["docVersion"], 7, "{line}");
    }
}

#[test]
fn every_item_has_its_own_uuid() {
    let at = Position::new(0, 0);
    let uuids: std::collections::HashSet<String> = (0..50)
        .map(|_| {
            item("", "x", at, at, 1)["uuid"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(uuids.len(), 50);
    assert!(
        uuids.iter().all(|u| uuid::Uuid::parse_str(u).is_ok()),
        "{uuids:?}"
    );
}

#[test]
fn feedback_names_the_uuids_each_client_sends() {
    let cases = [
        ("notifyShown", json!({"uuid": "u1"}), Some("u1")),
        (
            "notifyAccepted",
            json!({"uuid": "u2", "acceptedLength": 3}),
            Some("u2"),
        ),
        (
            "didShowCompletion (copilot.vim)",
            json!({"item": {"insertText": "x", "command": {"command": "c", "arguments": ["u3"]}}}),
            Some("u3"),
        ),
        (
            "didPartiallyAcceptCompletion",
            json!({"item": {"uuid": "u4"}, "acceptedLength": 1}),
            Some("u4"),
        ),
        (
            "an item without one",
            json!({"item": {"insertText": "x"}}),
            None,
        ),
        ("null params", Value::Null, None),
    ];
    for (name, params, wanted) in cases {
        assert_eq!(uuid_of(&params).as_deref(), wanted, "{name}");
    }
    let rejected = json!({"uuids": ["a", 3, "b"]});
    assert_eq!(rejected_uuids(&rejected), ["a", "b"]);
    assert!(rejected_uuids(&Value::Null).is_empty());
}
