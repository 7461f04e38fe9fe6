//! Quick refactor and ignore files in `qore lsp`: code actions per configured instruction
//! (defaults, `config.toml`, the editor's settings winning), `qore.refactor` applying one
//! `workspace/applyEdit`, a failure shown as an Error message with no edit; a `.gitignore`d
//! file gets no completion, no actions, and its text is never sent.

#[path = "cli_lsp_support/mod.rs"]
mod support;

use qore_testkit::chat::chat_answer;
use qore_testkit::Reply;
use serde_json::{json, Value};
use support::{error_code, infill, quick, Editor};

const ADD: &str = "def add(a, b):\n    return a+b\n";

/// The line 1 selection `return a+b`.
fn selection() -> Value {
    json!({"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 14}})
}

async fn action_titles(editor: &mut Editor, uri: &str, range: Value) -> Value {
    let params = json!({"textDocument": {"uri": uri}, "range": range,
                        "context": {"diagnostics": []}});
    let reply = editor.client.call("textDocument/codeAction", params).await;
    match reply["result"].as_array() {
        Some(actions) => actions.iter().map(|a| a["title"].clone()).collect(),
        None => reply["result"].clone(),
    }
}

#[tokio::test]
async fn code_actions_come_from_defaults_config_and_settings() {
    let mut editor = Editor::start(vec![]).await;
    let uri = editor.open("add.py", ADD).await;
    let titles = action_titles(&mut editor, &uri, selection()).await;
    assert_eq!(titles, json!(["Refactor", "Add documentation", "Fix"]));
    let empty = json!({"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 4}});
    assert_eq!(action_titles(&mut editor, &uri, empty).await, Value::Null);

    let config = "[[refactor.actions]]\ntitle = \"Simplify\"\ninstruction = \"Simplify it.\"\n";
    let mut editor = Editor::start_with(vec![], quick(), &[("config.toml", config)]).await;
    let uri = editor.open("add.py", ADD).await;
    assert_eq!(
        action_titles(&mut editor, &uri, selection()).await,
        json!(["Simplify"])
    );
    let tidy = json!({"qore": {"refactor": {"actions": [{"title": "Tidy", "instruction": "t"}]}}});
    let params = json!({"settings": tidy});
    editor
        .client
        .notify("workspace/didChangeConfiguration", params)
        .await;
    assert_eq!(
        action_titles(&mut editor, &uri, selection()).await,
        json!(["Tidy"])
    );
}

#[tokio::test]
async fn the_refactor_command_applies_one_edit_replacing_the_range() {
    let answer = "Here is the refactored code:\n```python\nreturn a + b\n```";
    let mut editor = Editor::start(vec![chat_answer(answer)]).await;
    let uri = editor.open("add.py", ADD).await;
    let params = json!({"textDocument": {"uri": uri}, "range": selection(),
                        "context": {"diagnostics": []}});
    let reply = editor.client.call("textDocument/codeAction", params).await;
    let command = reply["result"][0]["command"].clone();
    assert_eq!(command["command"], "qore.refactor", "{reply}");
    let params = json!({"command": command["command"], "arguments": command["arguments"]});
    let reply = editor.client.call("workspace/executeCommand", params).await;
    assert_eq!(reply.get("result"), Some(&Value::Null), "{reply}");
    let edits: Vec<&Value> = (editor.client.seen.iter())
        .filter(|m| m["method"] == "workspace/applyEdit")
        .collect();
    assert_eq!(edits.len(), 1, "{:?}", editor.client.seen);
    let changes = &edits[0]["params"]["edit"]["changes"][&uri];
    assert_eq!(changes.as_array().map(Vec::len), Some(1), "{changes}");
    // Only blanks left of the selection: the edit starts at the line's start and the new
    // text carries the indentation.
    let range = json!({"start": {"line": 1, "character": 0}, "end": selection()["end"]});
    assert_eq!(changes[0]["newText"], "    return a + b", "{changes}");
    assert_eq!(changes[0]["range"], range, "{changes}");
    let requests = editor.server.requests();
    assert_eq!(requests[0].path, "/v1/chat/completions");
    let body = String::from_utf8_lossy(&requests[0].body);
    assert!(
        body.contains("<selection_start>return a+b<selection_end>"),
        "{body}"
    );
}

#[tokio::test]
async fn a_failed_refactor_is_an_error_message_and_no_edit() {
    let failure = Reply::json(400, r#"{"error": {"message": "bad model"}}"#);
    let mut editor = Editor::start(vec![failure]).await;
    let uri = editor.open("add.py", ADD).await;
    let args = json!([{"uri": uri, "range": selection(), "instruction": "Fix"}]);
    let params = json!({"command": "qore.refactor", "arguments": args});
    let reply = editor.client.call("workspace/executeCommand", params).await;
    assert_eq!(error_code(&reply), Some(-32803), "{reply}");
    let shown = editor
        .client
        .wait_for("an error message", |m| m["method"] == "window/showMessage")
        .await;
    assert_eq!(shown["params"]["type"], 1, "an Error: {shown}");
    let applied = editor
        .client
        .seen
        .iter()
        .any(|m| m["method"] == "workspace/applyEdit");
    assert!(!applied, "{:?}", editor.client.seen);
    let bad = json!({"command": "qore.refactor", "arguments": [{"uri": 3}]});
    let reply = editor.client.call("workspace/executeCommand", bad).await;
    assert_eq!(error_code(&reply), Some(-32602), "{reply}");
}

#[tokio::test]
async fn an_ignored_file_gets_nothing_and_its_text_goes_nowhere() {
    let mut editor = Editor::start(vec![infill(&["a + b"])]).await;
    std::fs::write(editor.file(".gitignore"), "secret.py\n").unwrap();
    std::fs::write(editor.file(".qoreignore"), "private/\n").unwrap();
    // Roots' rules are read at open, after the files above exist.
    let secret = editor.open("secret.py", "TOKEN = 'hunter2'\n").await;
    let private = editor.open("private/key.py", "KEY = 'swordfish'\n").await;
    editor.open("helper.py", "def helper():\n    pass\n").await;
    let add = editor.open("add.py", "def add(a, b):\n    return \n").await;
    for uri in [&secret, &private] {
        let reply = editor.inline(uri, 0, 5).await;
        assert_eq!(reply["result"], json!({"items": []}), "{reply}");
        let whole =
            json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}});
        assert_eq!(action_titles(&mut editor, uri, whole).await, Value::Null);
    }
    assert!(editor.server.requests().is_empty());
    let reply = editor.inline(&add, 1, 11).await;
    assert_eq!(
        reply["result"]["items"][0]["insertText"], "a + b",
        "{reply}"
    );
    let body = String::from_utf8_lossy(&editor.server.requests()[0].body).into_owned();
    assert!(
        !body.contains("hunter2") && !body.contains("swordfish"),
        "{body}"
    );
}
