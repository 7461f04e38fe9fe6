//! Running a Python test suite of the repository (tests/editors, tests/serve) from a cargo
//! test: the clients' venv from the project's install script, pytest bounded in time.

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
        .env("QORE_BIN", super::QORE)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("QORE_URL")
        .env_remove("QORE_MODEL")
        .kill_on_drop(true)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in envs {
        cmd.env(name, value);
    }
    for name in unset {
        cmd.env_remove(name);
    }
    let child = cmd.spawn().expect("pytest starts");
    tokio::time::timeout(limit, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("tests/{suite} did not finish within {limit:?}"))
        .expect("pytest runs")
}
