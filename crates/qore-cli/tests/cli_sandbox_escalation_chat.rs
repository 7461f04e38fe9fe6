//! Asking for more rights in `qore chat`: `--json` front ends get the rights and the
//! justification in each `approval_request` and an "allow_session" answer counts for one
//! call; on a terminal, the chat's line editor asks even in `auto` mode, and `y` runs the
//! call with the rights (the file in the fake home is written).

mod cli_sandbox_escalation_support;
mod common;

use std::path::Path;

use cli_sandbox_escalation_support::*;
use common::command;
use common::config::ConfigDir;
use common::turns::{answer, turn, MODEL};
use qore_testkit::ReplayServer;
use serde_json::Value;
use tokio::io::AsyncWriteExt as _;

/// `qore chat --json --tools confirm`: each `approval_request` line carries the rights and
/// the justification; an "allow_session" answer counts for that call only (the next call
/// asking for full access is asked about again) and its file is written; the denied one is
/// not.
#[tokio::test]
async fn chat_json_approval_requests_carry_the_rights_and_are_never_remembered() {
    let w = World::new();
    let config = ConfigDir::new(&[("config.toml", CONFIG)]);
    let server = ReplayServer::start(two_escalations(&w.home)).await.unwrap();
    let url = format!("{}/v1", server.url());
    let project = w.proj.to_str().unwrap();
    let mut cmd = command(&[
        "chat",
        "--url",
        &url,
        "--model",
        MODEL,
        "--project",
        project,
        "--json",
        "--tools",
        "confirm",
    ]);
    cmd.env("QORE_CONFIG_DIR", &config.0)
        .env("QORE_DATA_DIR", &w.data)
        .env("HOME", &w.home);
    let input = [
        "Add the aliases.",
        r#"{"id": "call_1", "decision": "allow_session"}"#,
        r#"{"id": "call_2", "decision": "deny", "reason": "not b"}"#,
    ]
    .join("\n")
        + "\n";
    let run = common::live::run_with_stdin(cmd, &input).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let asked: Vec<Value> = (run.json_lines().into_iter())
        .filter(|l| l["type"] == "approval_request")
        .collect();
    let ids: Vec<&str> = asked.iter().filter_map(|l| l["id"].as_str()).collect();
    assert_eq!(ids, ["call_1", "call_2"], "{run:?}");
    for line in &asked {
        assert_eq!(line["rights"]["mode"], "full-access", "{line}");
        assert_eq!(line["rights"]["justification"], WHY, "{line}");
    }
    assert_eq!(w.rc(), "# rc\nalias a=1\n", "{run:?}");
    let results = results(&server);
    assert!(
        results[1].contains("not granted") && results[1].contains("not b"),
        "{}",
        results[1]
    );
}

/// `qore chat --tools auto` on a terminal: the chat's line editor asks about the call that
/// wants full access (auto runs everything else), showing the rights and the justification;
/// `y` writes the file.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_terminal_chat_in_auto_mode_still_asks_for_more_rights() {
    use common::pty::{has_script, in_pty, read_until_count};
    if !has_script() {
        return;
    }
    let w = World::new();
    let config = ConfigDir::new(&[("config.toml", CONFIG)]);
    let server = ReplayServer::start(vec![
        turn(
            "",
            &[("call_1", "run_command", escalated(&w.home, "alias a=1"))],
        ),
        answer("Added."),
    ])
    .await
    .unwrap();
    let url = format!("{}/v1", server.url());
    let argv = [
        common::QORE,
        "chat",
        "--url",
        &url,
        "--model",
        MODEL,
        "--project",
        w.proj.to_str().unwrap(),
        "--tools",
        "auto",
    ];
    let env: [(&str, &Path); 3] = [
        ("HOME", &w.home),
        ("QORE_CONFIG_DIR", &config.0),
        ("QORE_DATA_DIR", &w.data),
    ];
    let mut child = in_pty(&argv, &env);
    let mut terminal = child.stdout.take().unwrap();
    let mut keys = child.stdin.take().unwrap();
    let mut seen = String::new();
    // The editor draws its prompt after clearing the line (see cli_chat_terminal.rs).
    const PROMPT: &str = "\x1b[K> ";
    read_until_count(&mut terminal, &mut seen, PROMPT, 1).await;
    keys.write_all(b"Add the alias.\r").await.unwrap();
    keys.flush().await.unwrap();
    read_until_count(&mut terminal, &mut seen, ONCE, 1).await;
    assert!(
        seen.contains("asks for more rights for this call: sandbox mode full-access"),
        "{seen}"
    );
    assert!(seen.contains(WHY), "{seen}");
    keys.write_all(b"y\r").await.unwrap();
    keys.flush().await.unwrap();
    read_until_count(&mut terminal, &mut seen, "Added.", 1).await;
    read_until_count(&mut terminal, &mut seen, PROMPT, 2).await;
    keys.write_all(b"\x04").await.unwrap();
    keys.flush().await.unwrap();
    ends(&mut child, &seen).await;
    assert_eq!(w.rc(), "# rc\nalias a=1\n", "{seen}");
}
