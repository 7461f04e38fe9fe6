//! Cancelling completions in `qore lsp`: `$/cancelRequest` and a newer request for the same
//! document each drop the HTTP request in flight (the provider sees its client hang up) and
//! answer the old request with RequestCancelled (-32800); within the debounce, a superseded
//! request sends nothing at all; completions stalled on several documents hold back no other.

#[path = "cli_lsp_support/mod.rs"]
mod support;

use serde_json::json;
use support::{error_code, infill, Editor};

const ADD: &str = "def add(a, b):\n    return \n\nprint(add(1, 2))\n";

/// A provider that answers the head of a stream, then nothing until the client hangs up.
fn stalling() -> qore_testkit::Reply {
    infill(&["never"]).stall_after(0)
}

/// An editor whose first completion request is in flight at a stalling provider (the next
/// request gets `a + b`): the editor, the document, the request id.
async fn stalled() -> (Editor, String, i64) {
    let mut editor = Editor::start(vec![stalling(), infill(&["a + b"])]).await;
    let uri = editor.open("add.py", ADD).await;
    let id = editor.ask_inline(&uri, 1, 11).await;
    editor.provider_received(1).await;
    (editor, uri, id)
}

#[tokio::test]
async fn cancel_request_drops_the_provider_request_and_answers_request_cancelled() {
    let mut editor = Editor::start(vec![stalling(), infill(&["a + b"])]).await;
    let uri = editor.open("add.py", ADD).await;
    let id = editor.ask_inline(&uri, 1, 11).await;
    editor.provider_received(1).await;
    editor
        .client
        .notify("$/cancelRequest", json!({"id": id}))
        .await;
    let reply = editor.client.response(id).await;
    assert_eq!(error_code(&reply), Some(-32800), "{reply}");
    editor.provider_disconnects(1).await;
    let reply = editor.inline(&uri, 1, 11).await;
    assert_eq!(
        reply["result"]["items"][0]["insertText"], "a + b",
        "{reply}"
    );
}

#[tokio::test]
async fn a_newer_request_for_the_document_cancels_the_one_in_flight() {
    let (mut editor, uri, old) = stalled().await;
    let new = editor.ask_inline(&uri, 1, 11).await;
    let reply = editor.client.response(old).await;
    assert_eq!(error_code(&reply), Some(-32800), "{reply}");
    let reply = editor.client.response(new).await;
    assert_eq!(
        reply["result"]["items"][0]["insertText"], "a + b",
        "{reply}"
    );
    editor.provider_disconnects(1).await;
    assert_eq!(editor.server.requests().len(), 2);
}

#[tokio::test]
async fn a_request_superseded_within_the_debounce_sends_nothing() {
    let options = json!({"completion": {"debounceMs": 400}});
    let replies = vec![infill(&["a + b"]), infill(&["a + b"])];
    let mut editor = Editor::start_with(replies, options, &[]).await;
    let uri = editor.open("add.py", ADD).await;
    let other = editor.open("other.py", "x = 1\n").await;
    let old = editor.ask_inline(&uri, 1, 11).await;
    let elsewhere = editor.ask_inline(&other, 0, 5).await;
    let new = editor.ask_inline(&uri, 1, 11).await;
    let reply = editor.client.response(old).await;
    assert_eq!(error_code(&reply), Some(-32800), "{reply}");
    let reply = editor.client.response(new).await;
    let done = editor.client.response(elsewhere).await;
    assert!(
        reply.get("result").is_some() && done.get("result").is_some(),
        "{reply} {done}"
    );
    // The other document's request is not superseded; the old one never left.
    let mut prefixes: Vec<String> = (editor.server.requests().iter())
        .filter_map(|r| Some(r.json()?["input_prefix"].as_str()?.to_owned()))
        .collect();
    prefixes.sort();
    assert_eq!(prefixes, ["def add(a, b):\n    return ", "x = 1"]);
}

#[tokio::test]
async fn completions_stalled_on_five_documents_hold_nothing_back() {
    let mut replies = vec![stalling(); 5];
    replies.push(infill(&["a + b"]));
    let mut editor = Editor::start(replies).await;
    for i in 0..5 {
        let uri = editor.open(&format!("f{i}.py"), ADD).await;
        editor.ask_inline(&uri, 1, 11).await;
    }
    editor.provider_received(5).await;
    let uri = editor.open("add.py", ADD).await;
    let reply = editor.inline(&uri, 1, 11).await;
    assert_eq!(
        reply["result"]["items"][0]["insertText"], "a + b",
        "{reply}"
    );
}
