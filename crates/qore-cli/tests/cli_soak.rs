//! The soak's short form: `scripts/soak-serve.sh` (the script a user runs for ten minutes) for
//! 75 seconds with a fault every 12, on the binary under test: three real `qore serve`
//! processes on a real PostgreSQL behind a real HAProxy (`scripts/scale.sh`), mixed load in
//! three dialects, streamed and not, stored responses and named sessions, while PostgreSQL is
//! stopped and frozen and processes are SIGKILLed.
//!
//! Passes when the script says nothing acknowledged was lost and no stored turn is half,
//! after at least one fault of each kind and with some writes acknowledged. The script runs
//! with a hard limit (killed past it) and stops everything it started.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::QORE;

/// The longest the script may take: 75 s of load, start, recovery and check, on a busy machine.
const LIMIT: Duration = Duration::from_secs(420);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `soak_load` example beside the binary under test, built first (same profile).
fn soak_load() -> PathBuf {
    if let Ok(path) = std::env::var("SOAK_LOAD_BIN") {
        return PathBuf::from(path);
    }
    let out_dir = Path::new(QORE).parent().expect("qore's directory");
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root())
        .args(["build", "-q", "-p", "qore-serve", "--example", "soak_load"]);
    if out_dir.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("cargo runs");
    assert!(
        status.success(),
        "cargo build --example soak_load: {status}"
    );
    let path = out_dir.join("examples/soak_load");
    assert!(path.exists(), "no {}", path.display());
    path
}

/// `soak: requests=N acknowledged=N …` as a map.
fn counts(stdout: &str) -> BTreeMap<String, String> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("soak: requests="))
        .unwrap_or_else(|| panic!("no counts line in:\n{stdout}"));
    (line["soak: ".len()..].split_whitespace())
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn number(counts: &BTreeMap<String, String>, key: &str) -> u64 {
    let value = counts
        .get(key)
        .unwrap_or_else(|| panic!("no {key} in {counts:?}"));
    value
        .parse()
        .unwrap_or_else(|e| panic!("{key}={value}: {e}"))
}

#[test]
fn a_short_soak_loses_nothing_acknowledged() {
    let load = soak_load();
    let dir = tempfile::Builder::new()
        .prefix("qore-soak-")
        .tempdir()
        .expect("a temporary directory");
    let mut child = Command::new("bash")
        .arg(root().join("scripts/soak-serve.sh"))
        .args(["--seconds", "75", "--chaos-every", "12", "--outage", "3"])
        .args(["--concurrency", "8", "--interval-ms", "30", "--dir"])
        .arg(dir.path())
        .env("QORE_BIN", QORE)
        .env("SOAK_LOAD_BIN", &load)
        .env_remove("QORE_STORE_URL")
        .env_remove("QORE_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs soak-serve.sh");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > LIMIT {
            // SIGTERM: the script's trap stops what it started.
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            std::thread::sleep(Duration::from_secs(20));
            let _ = child.kill();
            let _ = child.wait();
            panic!("soak-serve.sh ran past {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let out = child.wait_with_output().expect("its output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let chaos = std::fs::read_to_string(dir.path().join("chaos.log")).unwrap_or_default();
    let check = std::fs::read_to_string(dir.path().join("check.log")).unwrap_or_default();
    let context =
        format!("{stdout}\n--- stderr\n{stderr}\n--- chaos.log\n{chaos}\n--- check.log\n{check}");
    let c = counts(&stdout);
    assert_eq!(
        number(&c, "lost"),
        0,
        "acknowledged writes were lost:\n{context}"
    );
    assert_eq!(
        number(&c, "half_turns"),
        0,
        "half turns in the store:\n{context}"
    );
    assert!(status.success(), "soak-serve.sh: {status}\n{context}");
    assert!(
        number(&c, "acknowledged") > 0,
        "nothing acknowledged:\n{context}"
    );
    for fault in ["SIGKILL", "PostgreSQL stop", "PostgreSQL freeze"] {
        assert!(chaos.contains(fault), "no {fault} in the run:\n{context}");
    }
    eprintln!("{stdout}");
}
