//! `qore chat` scripted through stdin against the local model server (SmolLM2-135M on
//! llama.cpp, installed and started by `qore local start`), behind a recording proxy. The
//! model is tiny: the test checks what was sent and kept, never the words.

mod common;

use std::time::Duration;

use common::{command, run_with_limit};
use serde_json::Value;
use tokio::io::AsyncWriteExt as _;

/// Room for the first install of the local server.
const FIRST_START: Duration = Duration::from_secs(900);

#[tokio::test]
async fn a_scripted_chat_on_the_local_model_carries_the_first_turn() {
    let started = run_with_limit(command(&["local", "start"]), FIRST_START).await;
    assert_eq!(started.code, Some(0), "{started:?}");
    let upstream = std::net::SocketAddr::from(([127, 0, 0, 1], qore_client::local::port()));
    let proxy = qore_testkit::RecordingProxy::start(upstream)
        .await
        .expect("proxy starts");
    let port = proxy
        .url()
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_owned();
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
        .env("QORE_DATA_DIR", data.path())
        .stdin(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn qore");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b"Say hi\nSay bye\n").await.expect("write");
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(300), child.wait_with_output())
        .await
        .expect("the chat ends")
        .expect("wait");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let stderr = String::from_utf8(output.stderr).expect("UTF-8");
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    let lines: Vec<Value> = (stdout.lines())
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    assert_eq!(lines[0]["type"], "session", "{stdout}");
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 2, "{stdout}\n{stderr}");
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
    let store = qore_store::Store::open(data.path().join("qore.db")).expect("open");
    assert_eq!(store.history(id).expect("history").len(), 4);
}
