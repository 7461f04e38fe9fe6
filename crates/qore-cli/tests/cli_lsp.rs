//! `qore lsp` as an editor meets it: the real binary over stdio, a loopback llama.cpp
//! provider. Capabilities; inline completion and the completion fallback after incremental
//! edits, and an accepted item's command counted; a chat agent from the settings in single-line mode; settings (bad values warned by
//! key, `enabled: false`); malformed frames survived;
//! a provider failure as a one-line error; `shutdown`/`exit`.

#[path = "cli_lsp_support/mod.rs"]
mod support;

use qore_testkit::lsp::frame;
use qore_testkit::Reply;
use serde_json::{json, Value};
use support::{error_code, infill, Editor};

const ADD: &str = "def add(a, b):\n    return \n\nprint(add(1, 2))\n";

#[tokio::test]
async fn initialize_advertises_what_the_server_does_and_exit_ends_it() {
    let mut editor = Editor::start(vec![]).await;
    let caps = &editor.init["result"]["capabilities"];
    assert_eq!(caps["inlineCompletionProvider"], json!({}), "{caps}");
    assert_eq!(caps["textDocumentSync"], json!(2), "incremental: {caps}");
    assert!(caps["completionProvider"].is_object(), "{caps}");
    assert!(caps["codeActionProvider"].is_object(), "{caps}");
    assert_eq!(
        caps["executeCommandProvider"]["commands"],
        json!(["qore.refactor", "qore.completionAccepted"]),
        "{caps}"
    );
    assert_eq!(editor.client.shutdown().await, Some(0));
}

#[tokio::test]
async fn inline_completion_after_incremental_edits_sends_the_edited_text() {
    let mut editor = Editor::start(vec![infill(&["a", " + ", "b"])]).await;
    let uri = editor.open("add.py", "def add(a, b):\n    retur\n").await;
    // "retur" -> "return " (an insertion), then a third line (an insertion at the end), in
    // UTF-16 positions.
    let changes = json!([
        {"range": {"start": {"line": 1, "character": 9}, "end": {"line": 1, "character": 9}},
         "text": "n "},
        {"range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 0}},
         "text": "\nprint(add(1, 2))\n"},
    ]);
    let params = json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": changes});
    editor.client.notify("textDocument/didChange", params).await;
    let reply = editor.inline(&uri, 1, 11).await;
    let range = json!({"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 11}});
    let mut items = reply["result"]["items"].clone();
    // Each item carries the command an editor runs when it accepts the item whole.
    let command = items[0]["command"].take();
    assert_eq!(command["command"], "qore.completionAccepted", "{reply}");
    assert_eq!(
        items,
        json!([{"insertText": "a + b", "range": range, "command": null}]),
        "{reply}"
    );
    let accepted = json!({"command": command["command"], "arguments": command["arguments"]});
    let answer = editor
        .client
        .call("workspace/executeCommand", accepted)
        .await;
    assert_eq!(answer["result"], Value::Null, "{answer}");
    let uuid = command["arguments"][0].as_str().unwrap_or("?").to_owned();
    let logged = (editor.client)
        .wait_for("the accept logged", |m| {
            m["method"] == "window/logMessage"
                && m["params"]["message"]
                    .as_str()
                    .is_some_and(|t| t.contains(&format!("completion {uuid} accepted")))
        })
        .await;
    assert!(
        logged["params"]["message"]
            .as_str()
            .is_some_and(|t| t.contains("accepted 1")),
        "{logged}"
    );
    let sent: Vec<(String, Value)> = (editor.server.requests().iter())
        .map(|r| (r.path.clone(), r.json().unwrap_or_default()))
        .map(|(path, body)| (path, json!([body["input_prefix"], body["input_suffix"]])))
        .collect();
    let parts = json!(["def add(a, b):\n    return ", "\n\nprint(add(1, 2))\n"]);
    assert_eq!(sent, [("/infill".to_owned(), parts)]);
}

#[tokio::test]
async fn the_completion_fallback_is_one_text_edit_and_the_range_covers_closers() {
    let mut editor = Editor::start(vec![infill(&["1, 2)"]), infill(&["\n"])]).await;
    let uri = editor.open("call.py", "print(add(\n").await;
    let position = json!({"line": 0, "character": 10});
    let params = json!({"textDocument": {"uri": uri}, "position": position});
    let reply = editor
        .client
        .call("textDocument/completion", params.clone())
        .await;
    let items = reply["result"].as_array().expect("a list of items");
    assert_eq!(items.len(), 1, "{reply}");
    assert_eq!(items[0]["label"], "1, 2)");
    let edit = &items[0]["textEdit"];
    assert_eq!(edit["newText"], "1, 2)", "{reply}");
    assert_eq!(edit["range"]["start"], position, "{reply}");
    // Nothing left of the reply after cleaning: no item at all.
    let reply = editor.client.call("textDocument/completion", params).await;
    assert_eq!(reply["result"], json!([]), "{reply}");
}

#[tokio::test]
async fn settings_warn_by_key_and_enabled_false_sends_nothing() {
    let options = json!({"qore": {"completion": {"debounceMs": 0, "mode": "sideways"},
                                  "bogus": 1}});
    let mut editor = Editor::start_with(vec![], options, &[]).await;
    let warning = editor
        .client
        .wait_for("a settings warning", |m| {
            m["method"] == "window/showMessage"
        })
        .await;
    let text = warning["params"]["message"].as_str().unwrap_or_default();
    assert!(text.contains("completion.mode"), "{warning}");
    assert_eq!(warning["params"]["type"], 2, "a warning: {warning}");
    let off = json!({"settings": {"enabled": false}});
    editor
        .client
        .notify("workspace/didChangeConfiguration", off)
        .await;
    let uri = editor.open("add.py", ADD).await;
    let reply = editor.inline(&uri, 1, 11).await;
    assert_eq!(reply["result"], json!({"items": []}), "{reply}");
    assert!(editor.server.requests().is_empty());
}

#[tokio::test]
async fn malformed_frames_are_answered_and_the_server_goes_on() {
    let mut editor = Editor::start(vec![infill(&["a + b"])]).await;
    let cases: Vec<(&str, Vec<u8>, i64)> = vec![
        ("a body that is not JSON", frame(b"{not json"), -32700),
        ("JSON that is no message", frame(b"[1, 2]"), -32600),
        (
            "a header without a length",
            b"X-Junk: 1\r\n\r\n".to_vec(),
            -32700,
        ),
    ];
    for (name, bytes, code) in cases {
        editor.client.send_raw(&bytes).await;
        let reply = editor
            .client
            .wait_for(name, |m| m.get("id") == Some(&Value::Null))
            .await;
        assert_eq!(error_code(&reply), Some(code), "{name}: {reply}");
    }
    let uri = editor.open("add.py", ADD).await;
    let reply = editor.inline(&uri, 1, 11).await;
    assert_eq!(
        reply["result"]["items"][0]["insertText"], "a + b",
        "{reply}"
    );
    assert_eq!(editor.client.shutdown().await, Some(0));
}

#[tokio::test]
async fn a_provider_failure_is_an_error_of_one_line_and_the_server_goes_on() {
    // A completion is not retried: the 500 reaches the editor at once (a retry would get the
    // completion and no error).
    let failure = Reply::json(
        500,
        r#"{"error": {"message": "model crashed\nstack: ..."}}"#,
    )
    .with_header("retry-after-ms", "0");
    let replies = vec![failure, infill(&["a + b"])];
    let mut editor = Editor::start(replies).await;
    let uri = editor.open("add.py", ADD).await;
    let reply = editor.inline(&uri, 1, 11).await;
    assert_eq!(error_code(&reply), Some(-32803), "{reply}");
    assert_eq!(editor.server.requests().len(), 1, "one attempt");
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty() && !message.contains('\n'), "{reply}");
    assert!(
        message.contains("500") || message.contains("crashed"),
        "{reply}"
    );
    let reply = editor.inline(&uri, 1, 11).await;
    assert_eq!(
        reply["result"]["items"][0]["insertText"], "a + b",
        "{reply}"
    );
    let bad = editor
        .client
        .call("textDocument/inlineCompletion", json!({"oops": 1}))
        .await;
    assert_eq!(error_code(&bad), Some(-32602), "{bad}");
    assert_eq!(editor.client.shutdown().await, Some(0));
}

#[tokio::test]
async fn a_chat_agent_from_the_settings_gets_the_cursor_prompt_in_single_line_mode() {
    let answer = "```python\na + b\nprint('extra')\n```";
    let options = json!({"completion": {"debounceMs": 0, "agent": "fixer", "mode": "single"}});
    let replies = vec![qore_testkit::chat::chat_answer(answer)];
    let mut editor = Editor::start_with(replies, options, &[]).await;
    let uri = editor.open("add.py", ADD).await;
    let reply = editor.inline(&uri, 1, 11).await;
    assert_eq!(
        reply["result"]["items"][0]["insertText"], "a + b",
        "{reply}"
    );
    let requests = editor.server.requests();
    assert_eq!(requests[0].path, "/v1/chat/completions", "{requests:?}");
    let body = String::from_utf8_lossy(&requests[0].body);
    assert!(body.contains("return <cursor>"), "{body}");
}
