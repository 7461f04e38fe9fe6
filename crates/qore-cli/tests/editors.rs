//! The editor tests: `tests/editors/` (pytest-lsp and a headless Neovim driving `qore lsp`
//! against a loopback provider) run against this build's `qore` binary, so that
//! `cargo test --workspace` runs them. `scripts/editor-env.sh` installs the clients (pinned,
//! idempotent) first; a failing install or a failing test fails this test with its output.

mod common;

use std::time::Duration;

use common::pytest::{env_path, pytest};

#[tokio::test]
async fn editor_clients_drive_qore_lsp() {
    let Some(fixtures) = qore_testkit::fixtures_dir() else {
        eprintln!("skipped: the recorded fixtures are not available");
        return;
    };
    let python = env_path("editor-env.sh", "python");
    let nvim = env_path("editor-env.sh", "nvim");
    let envs = [
        ("NVIM_BIN", nvim.as_path()),
        ("QORE_FIXTURES", fixtures.as_path()),
    ];
    let output = pytest(&python, "editors", &envs, &[], Duration::from_secs(600)).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the editor tests failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(" passed"), "no editor test ran:\n{stdout}");
}
