//! `qore serve` keeping what it was sent where asked, and refusing what the model cannot
//! take: `x-qore-session` on Chat Completions and Messages keeps whole turns in a named
//! session (`qore sessions` sees them); an image for the local model (text only, says its
//! `/props`) is a 400 naming it, and the model is not asked. Real binary, loopback.

mod cli_serve_support;
mod common;

use cli_serve_support::World;
use qore_store::Store as _;
use qore_testkit::chat::{chat_answer, chat_tool_call};
use qore_testkit::ReplayServer;
use serde_json::{json, Value};

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

#[tokio::test]
async fn a_named_session_keeps_whole_turns_from_either_dialect() {
    let upstream = ReplayServer::start_cycling(vec![
        chat_answer("first answer"),
        chat_tool_call("call_9", "lookup", r#"{"q": "x"}"#),
        chat_answer("second answer"),
        chat_answer("unkept answer"),
    ])
    .await
    .unwrap();
    let w = World::new();
    w.chat_provider("up", &upstream);
    let mut server = w.serve(&[]).await;
    let named = [("x-qore-session", "notes")];
    let first = json!({"model": "up/m", "messages": [user("one")]});
    let answer = server.post("/v1/chat/completions", &first, &named).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    // A tool round: the call goes back to the caller; the turn is kept once it is whole.
    let asked = json!({"model": "up/m", "max_tokens": 50, "tools": [{"name": "lookup", "input_schema": {"type": "object"}}],
        "messages": [user("one"), {"role": "assistant", "content": "first answer"}, user("two")]});
    let answer = server.post("/v1/messages", &asked, &named).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(answer.json()["stop_reason"], "tool_use", "{}", answer.text);
    let resumed = json!({"model": "up/m", "max_tokens": 50, "tools": [{"name": "lookup", "input_schema": {"type": "object"}}],
        "messages": [user("one"), {"role": "assistant", "content": "first answer"}, user("two"),
            {"role": "assistant", "content": [{"type": "tool_use", "id": "call_9", "name": "lookup", "input": {"q": "x"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_9", "content": "found"}]}]});
    let answer = server.post("/v1/messages", &resumed, &named).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    // Without the header nothing is kept.
    let answer = server.post("/v1/chat/completions", &first, &[]).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    server.stop().await;
    let store = qore_store::SqliteStore::open(w.data.join("qore.db")).unwrap();
    let session = store.session("notes").await.unwrap();
    let turns = store.turns(&session.id).await.unwrap();
    let texts: Vec<Vec<String>> = (turns.iter())
        .map(|t| {
            let mut all = vec![t.record.user.text()];
            all.extend(t.record.replies.iter().map(|m| m.text()));
            all
        })
        .collect();
    assert_eq!(
        texts,
        [
            vec!["one".to_owned(), "first answer".to_owned()],
            vec![
                "two".to_owned(),
                String::new(),
                String::new(),
                "second answer".to_owned()
            ],
        ],
        "{turns:#?}"
    );
    assert_eq!(store.list_sessions(None).await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_image_for_the_local_text_model_is_a_400_naming_it() {
    let w = World::new();
    let mut server = w.serve(&[]).await;
    let image =
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}});
    let body = json!({"model": "local/default", "max_tokens": 4,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "what is it"}, image]}]});
    let answer = server.post("/v1/chat/completions", &body, &[]).await;
    assert_eq!(answer.status, 400, "{}", answer.text);
    let error = &answer.json()["error"];
    assert_eq!(error["param"], "messages", "{}", answer.text);
    assert!(
        error["message"]
            .as_str()
            .unwrap_or("")
            .contains("does not take images"),
        "{}",
        answer.text
    );
    // The same request without the image is answered.
    let body = json!({"model": "local/default", "max_tokens": 4, "messages": [user("Say hi")]});
    let answer = server.post("/v1/chat/completions", &body, &[]).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    server.stop().await;
}
