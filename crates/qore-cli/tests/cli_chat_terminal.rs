//! `qore chat` on a terminal (a pseudo-terminal from util-linux `script`) against a
//! loopback server of hand-written streams: Ctrl-C at the prompt does not end the chat, a
//! typo gets a suggestion, a tool call is approved through the line editor, a line ending in
//! `\` continues the message, Ctrl-D leaves; the turns and the editor history are saved.
#![cfg(target_os = "linux")]

mod common;

use std::time::Duration;

use common::pty::{has_script, in_pty, read_until_count};
use common::turns::{answer, turn, MODEL};
use qore_testkit::ReplayServer;
use serde_json::json;
use tokio::io::AsyncWriteExt as _;

/// Type `bytes` on the terminal, then wait until it shows `shown`.
async fn type_keys(
    keys: &mut tokio::process::ChildStdin,
    bytes: &[u8],
    (terminal, seen): (&mut tokio::process::ChildStdout, &mut String),
    shown: &str,
) {
    keys.write_all(bytes).await.expect("type");
    keys.flush().await.expect("flush");
    let times = seen.matches(shown).count() + 1;
    read_until_count(terminal, seen, shown, times).await;
}

#[tokio::test]
async fn a_terminal_chat_asks_through_the_editor_and_survives_ctrl_c() {
    if !has_script() {
        return;
    }
    let server = ReplayServer::start(vec![
        turn(
            "",
            &[(
                "call_a",
                "write_file",
                json!({"path": "a.txt", "content": "A"}),
            )],
        ),
        answer("Written."),
        answer("Two lines seen."),
    ])
    .await
    .expect("server");
    let data = tempfile::tempdir().expect("data dir");
    let project = tempfile::tempdir().expect("project dir");
    let url = format!("{}/v1", server.url());
    let argv = [
        common::QORE,
        "chat",
        "--url",
        &url,
        "--model",
        MODEL,
        "--project",
        project.path().to_str().expect("UTF-8 path"),
    ];
    let mut child = in_pty(&argv, &[("QORE_DATA_DIR", data.path())]);
    let mut terminal = child.stdout.take().expect("stdout");
    let mut keys = child.stdin.take().expect("stdin");
    let mut seen = String::new();

    read_until_count(&mut terminal, &mut seen, "> ", 1).await;
    // Each step types only once the editor shows its prompt again (keys typed before the
    // editor is in raw mode would reach it through the line discipline, `\r` as `\n`): a
    // step waits for the prompt it ends at, then checks what was printed before it. The
    // editor draws its prompt after clearing the line (`ESC [K`): that tells the prompt from
    // a `> ` in printed text (`write_file -> 1 line`).
    const PROMPT: &str = "\x1b[K> ";
    let steps: [(&[u8], &str, &str); 6] = [
        // Ctrl-C at the empty prompt: a new prompt, not the end.
        (b"\x03", PROMPT, ""),
        (b"/hlep\r", PROMPT, "did you mean /help?"),
        (b"Write a.\r", "[y] yes, [a] always", ""),
        (b"y\r", PROMPT, "Written."),
        (b"Line one\\\r", "... ", ""),
        (b"line two\r", PROMPT, "Two lines seen."),
    ];
    for (typed, prompt, printed) in steps {
        type_keys(&mut keys, typed, (&mut terminal, &mut seen), prompt).await;
        assert!(
            seen.contains(printed),
            "{printed:?} before {prompt:?}: {seen}"
        );
    }
    keys.write_all(b"\x04").await.expect("Ctrl-D");
    keys.flush().await.expect("flush");
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("Ctrl-D ends the chat")
        .expect("wait");
    assert!(status.success(), "{status:?}: {seen}");

    assert_eq!(
        std::fs::read_to_string(project.path().join("a.txt")).ok(),
        Some("A".to_owned())
    );
    let bodies: Vec<_> = (server.requests().iter())
        .map(|r| r.json().expect("JSON body"))
        .collect();
    assert_eq!(bodies.len(), 3);
    // The continued line is one message with a new line; it carries the tool turn before it.
    let messages = bodies[2]["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
    assert_eq!(
        common::content_text(&messages[4]["content"]),
        "Line one\nline two"
    );
    // The editor kept the messages, not the approval answer.
    let history = std::fs::read_to_string(data.path().join("chat_history")).expect("history");
    assert!(history.contains("Write a."), "{history}");
    assert!(!history.lines().any(|line| line == "y"), "{history}");
}
