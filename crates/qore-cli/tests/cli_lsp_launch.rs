//! The command lines editors' Copilot plugins run reach the LSP server: `qore --stdio`
//! (copilot.lua, copilot.vim, copilot.el), `qore AGENT_JS [--stdio]` (Qt Creator, with qore as
//! its "Node.js" and any existing file as its "agent.js") and `qore lsp --stdio`; each answers
//! `initialize` with serverInfo, Copilot methods (one sent without `params` at all), and exits
//! on `exit`. Near misses (a typo, a missing file) are still usage errors, not a server.
//! Accepted and rejected completions are counted in the log on stderr.

use std::process::Stdio;
use std::time::Duration;

use qore_testkit::lsp::LspClient;
use serde_json::{json, Value};

const QORE: &str = env!("CARGO_BIN_EXE_qore");

fn qore(args: &[&str], dir: &std::path::Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(QORE);
    cmd.args(args)
        .env("QORE_CONFIG_DIR", dir.join("config"))
        .env("QORE_DATA_DIR", dir.join("data"))
        .env_remove("QORE_URL")
        .env_remove("QORE_MODEL")
        .stderr(Stdio::null());
    cmd
}

#[tokio::test]
async fn each_plugins_command_line_starts_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("dist").join("agent.js");
    std::fs::create_dir_all(agent.parent().unwrap()).unwrap();
    std::fs::write(&agent, "// not run: qore only needs the file to exist\n").unwrap();
    let agent = agent.to_str().unwrap();
    let cases: [(&str, Vec<&str>); 4] = [
        ("copilot.lua / copilot.vim / copilot.el", vec!["--stdio"]),
        ("Qt Creator (newer)", vec![agent, "--stdio"]),
        ("Qt Creator (older)", vec![agent]),
        ("the subcommand", vec!["lsp", "--stdio"]),
    ];
    for (name, args) in cases {
        let mut client = LspClient::spawn(qore(&args, dir.path())).expect("qore starts");
        let init = client.initialize(dir.path(), Value::Null).await;
        assert_eq!(
            init["result"]["serverInfo"]["name"], "qore",
            "{name}: {init}"
        );
        let status = client.call("checkStatus", json!({"options": {}})).await;
        assert_eq!(
            status["result"],
            json!({"status": "OK", "user": "qore"}),
            "{name}"
        );
        // A request without `params` at all, as some clients send the stubs.
        let bare = json!({"jsonrpc": "2.0", "id": 900, "method": "getVersion"});
        client.send(&bare).await;
        let version = client.response(900).await;
        let wanted = init["result"]["serverInfo"]["version"].clone();
        assert_eq!(
            version["result"],
            json!({"version": wanted}),
            "{name}: {version}"
        );
        assert_eq!(client.shutdown().await, Some(0), "{name}");
    }
}

#[tokio::test]
async fn near_misses_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.js");
    let missing = missing.to_str().unwrap();
    let cases: [(&str, Vec<&str>); 3] = [
        ("a typo of --stdio", vec!["--stdoi"]),
        ("a missing agent.js", vec![missing, "--stdio"]),
        ("a file path and an unknown flag", vec![QORE, "--verbose"]),
    ];
    for (name, args) in cases {
        let mut cmd = qore(&args, dir.path());
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        let child = cmd.kill_on_drop(true).spawn().expect("qore starts");
        // A server would answer nothing and exit 0 at the end of its (closed) stdin.
        let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
            .await
            .unwrap_or_else(|_| panic!("{name}: qore is waiting instead of refusing"))
            .expect("qore's status");
        assert_eq!(out.status.code(), Some(2), "{name}: {out:?}");
    }
}

#[tokio::test]
async fn accepted_and_rejected_completions_are_logged_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stderr.log");
    let mut cmd = qore(&["--stdio"], dir.path());
    cmd.env_remove("QORE_LOG")
        .stderr(std::fs::File::create(&log).expect("log file"));
    let mut client = LspClient::spawn(cmd).expect("qore starts");
    client.initialize(dir.path(), Value::Null).await;
    let accepted = client
        .call("notifyAccepted", json!({"uuid": "u-accepted"}))
        .await;
    assert_eq!(accepted["result"], "OK", "{accepted}");
    let rejected = (client.call("notifyRejected", json!({"uuids": ["u-rejected"]}))).await;
    assert_eq!(rejected["result"], "OK", "{rejected}");
    assert_eq!(client.shutdown().await, Some(0));
    let text = std::fs::read_to_string(&log).expect("stderr");
    for (what, uuid) in [("accepted", "u-accepted"), ("rejected", "u-rejected")] {
        let line = (text
            .lines()
            .find(|l| l.contains(&format!("completion {what}"))))
        .unwrap_or_else(|| panic!("no 'completion {what}' line:\n{text}"));
        assert!(line.contains(uuid), "{line}");
    }
}
