//! The editor tests: `tests/editors/` (pytest-lsp and a headless Neovim driving `qore lsp`
//! against a loopback provider) run against this build's `qore` binary, so that
//! `cargo test --workspace` runs them. `scripts/editor-env.sh` installs the clients (pinned,
//! idempotent) first; a failing install or a failing test fails this test with its output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const QORE: &str = env!("CARGO_BIN_EXE_qore");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

/// `scripts/editor-env.sh WHAT` (install if needed, print a path): the path.
fn editor_env(what: &str) -> PathBuf {
    let output = Command::new("bash")
        .arg(repo().join("scripts").join("editor-env.sh"))
        .arg(what)
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "scripts/editor-env.sh {what} failed:\n{}",
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
        .unwrap_or_else(|_| panic!("the editor tests did not finish within {limit:?}"))
        .expect("pytest runs")
}

#[tokio::test]
async fn editor_clients_drive_qore_lsp() {
    let Some(fixtures) = qore_testkit::fixtures_dir() else {
        eprintln!("skipped: the recorded fixtures are not available");
        return;
    };
    let python = editor_env("python");
    let nvim = editor_env("nvim");
    let mut cmd = tokio::process::Command::new(python);
    cmd.args(["-m", "pytest", "-q", "-ra"])
        .current_dir(repo().join("tests").join("editors"))
        .env("QORE_BIN", QORE)
        .env("NVIM_BIN", nvim)
        .env("QORE_FIXTURES", fixtures)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("QORE_URL")
        .env_remove("QORE_MODEL");
    let output = output_within(cmd, Duration::from_secs(600)).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the editor tests failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(" passed"), "no editor test ran:\n{stdout}");
}
