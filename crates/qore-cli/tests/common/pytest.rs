//! Running a Python test suite of the repository (tests/editors, tests/serve) from a cargo
//! test: the clients' venv from the project's install script, pytest bounded in time; and
//! any other such run ([`bounded`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

/// `scripts/SCRIPT WHAT` (install if needed, print a path): the path.
pub fn env_path(script: &str, what: &str) -> PathBuf {
    let output = Command::new("bash")
        .arg(repo().join("scripts").join(script))
        .arg(what)
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "scripts/{script} {what} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

/// `python -m pytest -q -ra` in `tests/SUITE` with `envs` set and `unset` removed, to its
/// end, killed past `limit`.
pub async fn pytest(
    python: &Path,
    suite: &str,
    envs: &[(&str, &Path)],
    unset: &[&str],
    limit: Duration,
) -> Output {
    let mut cmd = tokio::process::Command::new(python);
    cmd.args(["-m", "pytest", "-q", "-ra"])
        .current_dir(repo().join("tests").join(suite))
        .env("PYTHONDONTWRITEBYTECODE", "1");
    for (name, value) in envs {
        cmd.env(name, value);
    }
    for name in unset {
        cmd.env_remove(name);
    }
    bounded(cmd, &format!("tests/{suite}"), limit).await
}

/// `cmd` run to its end with QORE_BIN set to the binary under test and no QORE_URL or
/// QORE_MODEL, no stdin and its output captured; killed past `limit` (a panic naming `what`).
pub async fn bounded(mut cmd: tokio::process::Command, what: &str, limit: Duration) -> Output {
    cmd.env("QORE_BIN", super::QORE)
        .env_remove("QORE_URL")
        .env_remove("QORE_MODEL")
        .kill_on_drop(true)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd
        .spawn()
        .unwrap_or_else(|err| panic!("{what} does not start: {err}"));
    tokio::time::timeout(limit, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
        .unwrap_or_else(|err| panic!("{what} did not run: {err}"))
}
