//! `qore chat` scripted through stdin against the local model server (SmolLM2-135M on
//! llama.cpp, installed and started by `qore local start`), behind a recording proxy. The
//! model is tiny: the test checks what was sent and kept, never the words.

mod common;

use common::command;
use common::live::run_with_stdin;
use common::local::{proxied_local_server, proxy_port};
use serde_json::Value;

#[tokio::test]
async fn a_scripted_chat_on_the_local_model_carries_the_first_turn() {
    let proxy = proxied_local_server().await;
    let port = proxy_port(&proxy);
    let data = tempfile::tempdir().expect("data dir");
    let project = tempfile::tempdir().expect("project dir");
    let project_arg = project.path().to_str().expect("UTF-8 path");
    let args = [
        "chat",
        "--json",
        "--max-tokens",
        "12",
        "--temperature",
        "0",
        "--project",
        project_arg,
    ];
    let mut cmd = command(&args);
    cmd.env("QORE_LOCAL_PORT", &port)
        .env("QORE_DATA_DIR", data.path());
    let run = run_with_stdin(cmd, "Say hi\nSay bye\n").await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = run.json_lines();
    assert_eq!(lines[0]["type"], "session", "{run:?}");
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 2, "{run:?}");
    let first_answer = results[0]["text"].as_str().expect("text");
    let chats: Vec<Value> = (proxy.requests().iter())
        .filter(|r| r.path.ends_with("/chat/completions"))
        .filter_map(|r| r.json())
        .collect();
    assert_eq!(chats.len(), 2, "{chats:?}");
    let second: Vec<(&str, String)> = (chats[1]["messages"].as_array().expect("messages"))
        .iter()
        .map(|m| {
            let role = m["role"].as_str().unwrap_or_default();
            (role, common::content_text(&m["content"]))
        })
        .collect();
    let expected = [
        ("user", "Say hi".to_owned()),
        ("assistant", first_answer.to_owned()),
        ("user", "Say bye".to_owned()),
    ];
    assert_eq!(
        second, expected,
        "the second request carries the first turn"
    );
    // Both turns are in the store.
    let id = lines[0]["id"].as_str().expect("id");
    let store = qore_store::SqliteStore::open(data.path().join("qore.db")).expect("open");
    let history = qore_store::Store::history(&store, id)
        .await
        .expect("history");
    assert_eq!(history.len(), 4);
}
