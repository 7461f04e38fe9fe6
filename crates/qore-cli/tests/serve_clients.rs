//! The real-client tests of `qore serve`: `tests/serve/` (the OpenAI and Anthropic Python
//! SDKs and Claude Code against this build's `qore serve`, with a scripted Chat Completions
//! upstream and the local model behind it), run by `cargo test --workspace`.
//! `scripts/serve-env.sh` installs the clients (pinned, idempotent) first; a failing
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
