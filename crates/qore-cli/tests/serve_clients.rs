//! The real-client tests of `qore serve`: `tests/serve/` (the OpenAI and Anthropic Python
//! SDKs, Claude Code, codex and aider against this build's `qore serve`, with a scripted Chat
//! Completions upstream and the local model behind it), run by `cargo test --workspace`.
//! `scripts/serve-env.sh` and `scripts/agents-env.sh` install the clients (pinned,
//! idempotent) first; a failing
//! install, a failing or skipped test, or no test at all fails this test with pytest's output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const QORE: &str = env!("CARGO_BIN_EXE_qore");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

/// `scripts/serve-env.sh WHAT` (install if needed, print a path): the path.
fn serve_env(what: &str) -> PathBuf {
    let output = Command::new("bash")
        .arg(repo().join("scripts").join("serve-env.sh"))
        .arg(what)
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "scripts/serve-env.sh {what} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

/// Run `cmd` to the end, killing it past `limit`.
async fn output_within(mut cmd: tokio::process::Command, limit: Duration) -> Output {
    cmd.kill_on_drop(true).stdin(Stdio::null());
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pytest starts");
    tokio::time::timeout(limit, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("the serve client tests did not finish within {limit:?}"))
        .expect("pytest runs")
}

#[tokio::test]
async fn sdk_clients_and_claude_code_drive_qore_serve() {
    let python = serve_env("python");
    let claude = serve_env("claude");
    let mut cmd = tokio::process::Command::new(python);
    cmd.args(["-m", "pytest", "-q", "-ra"])
        .current_dir(repo().join("tests").join("serve"))
        .env("QORE_BIN", QORE)
        .env("CLAUDE_BIN", claude)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("QORE_URL")
        .env_remove("QORE_MODEL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("ANTHROPIC_AUTH_TOKEN");
    let output = output_within(cmd, Duration::from_secs(600)).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}\n{stderr}");
    // pytest's output is printed above: the messages only say which gate failed.
    assert!(
        output.status.success(),
        "the serve client tests failed ({})",
        output.status
    );
    assert!(stdout.contains(" passed"), "no serve client test ran");
    assert!(
        !stdout.contains(" skipped"),
        "a serve client test was skipped"
    );
}
