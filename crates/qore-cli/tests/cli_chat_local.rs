//! `qore chat` scripted through stdin against the local model server (SmolLM2-135M on
//! llama.cpp, installed and started by `qore local start`), behind a recording proxy. The
//! model is tiny: the tests check what was sent and kept, never the words.

mod common;

use std::path::Path;
use std::time::Duration;

use common::command;
use common::live::run_with_stdin;
use common::local::{proxied_local_server, proxy_port};
use common::pty::{has_script, in_pty};
use serde_json::Value;
use tokio::io::AsyncWriteExt as _;

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

/// Read the terminal into `seen` until it shows `needle` `times` times (the local model on a
/// busy machine: two minutes at most).
async fn shown(
    terminal: &mut tokio::process::ChildStdout,
    seen: &mut String,
    needle: &str,
    times: usize,
) {
    let limit = Duration::from_secs(120);
    common::pty::read_until_count_within(terminal, seen, needle, times, limit).await
}

/// Issue 33: a plain chat on a terminal (tools on by default) with one file attached sent
/// 1,961 prompt tokens, half of them the tools described for a model with no tool calling.
/// Now none are described (said once), and the request is the question and the file.
#[tokio::test]
async fn a_plain_terminal_chat_on_the_local_model_describes_no_tools() {
    if !has_script() {
        return;
    }
    let proxy = proxied_local_server().await;
    let port = proxy_port(&proxy);
    let (data, config) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let project = tempfile::tempdir().unwrap();
    let notes = "The build uses cargo.\nTests run with cargo test.\n";
    std::fs::write(project.path().join("notes.txt"), notes).unwrap();
    let argv = [
        common::QORE,
        "chat",
        "--max-tokens",
        "8",
        "--temperature",
        "0",
        "--project",
        project.path().to_str().expect("UTF-8 path"),
    ];
    let env = [
        ("QORE_DATA_DIR", data.path()),
        ("QORE_CONFIG_DIR", config.path()),
        ("QORE_LOCAL_PORT", Path::new(&port)),
    ];
    let mut child = in_pty(&argv, &env);
    let mut terminal = child.stdout.take().expect("stdout");
    let mut keys = child.stdin.take().expect("stdin");
    let mut seen = String::new();
    const PROMPT: &str = "\x1b[K> ";
    shown(&mut terminal, &mut seen, PROMPT, 1).await;
    keys.write_all(b"What build tool does @notes.txt name?\r")
        .await
        .unwrap();
    keys.flush().await.unwrap();
    shown(&mut terminal, &mut seen, PROMPT, 2).await;
    keys.write_all(b"\x04").await.unwrap();
    keys.flush().await.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    assert!(status.is_ok_and(|s| s.is_ok_and(|s| s.success())), "{seen}");
    assert_eq!(seen.matches("no tools are offered").count(), 1, "{seen}");
    assert!(seen.contains("--tools confirm"), "{seen}");
    let chats: Vec<Value> = (proxy.requests().iter())
        .filter(|r| r.path.ends_with("/chat/completions"))
        .filter_map(|r| r.json())
        .collect();
    assert_eq!(chats.len(), 1, "{chats:?}");
    assert!(chats[0].get("tools").is_none(), "{}", chats[0]);
    let messages = chats[0]["messages"].as_array().expect("messages");
    let texts: Vec<String> = messages
        .iter()
        .map(|m| common::content_text(&m["content"]))
        .collect();
    let prompt = texts.concat();
    assert!(!prompt.contains("tool_call"), "tools described: {prompt}");
    assert!(prompt.contains(notes), "the file is attached: {prompt}");
    // The question, the file and the chat's own prompt, not 7,800 characters of tools.
    assert!(
        prompt.len() < 1_500,
        "{} characters: {prompt}",
        prompt.len()
    );
}
