//! The real-client tests of `qore serve`: `tests/serve/` (the OpenAI and Anthropic Python
//! SDKs, Claude Code, codex and aider against this build's `qore serve`, with a scripted Chat
//! Completions upstream and the local model behind it), run by `cargo test --workspace`.
//! `scripts/serve-env.sh` and `scripts/agents-env.sh` install the clients (pinned,
//! idempotent) first; a failing
//! install, a failing or skipped test, or no test at all fails this test with pytest's output.

mod common;

use std::time::Duration;

use common::pytest::{env_path, pytest};

#[tokio::test]
async fn sdk_clients_and_claude_code_drive_qore_serve() {
    let python = env_path("serve-env.sh", "python");
    let claude = env_path("serve-env.sh", "claude");
    // The suite gives each client the base URL and key it needs itself.
    let unset = [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_AUTH_TOKEN",
    ];
    let envs = [("CLAUDE_BIN", claude.as_path())];
    let output = pytest(&python, "serve", &envs, &unset, Duration::from_secs(600)).await;
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
