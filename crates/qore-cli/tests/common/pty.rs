//! A pseudo-terminal for `qore` (util-linux `script`): what is written to the child's stdin
//! is typed on the terminal, its stdout is what the terminal shows.
#![cfg(target_os = "linux")]

use std::process::Stdio;
use std::time::Duration;

use tokio::process::Child;

/// `s` quoted for `sh -c`.
pub fn shell_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Read from `reader` into `seen` until `needle` appears `times` times (10 s at most).
pub async fn read_until_count(
    reader: &mut (impl tokio::io::AsyncRead + Unpin),
    seen: &mut String,
    needle: &str,
    times: usize,
) {
    read_until_count_within(reader, seen, needle, times, Duration::from_secs(10)).await
}

/// [`read_until_count`] waiting at most `limit`.
pub async fn read_until_count_within(
    reader: &mut (impl tokio::io::AsyncRead + Unpin),
    seen: &mut String,
    needle: &str,
    times: usize,
    limit: Duration,
) {
    use tokio::io::AsyncReadExt as _;
    let wait = async {
        let mut piece = [0u8; 1024];
        while seen.matches(needle).count() < times {
            let n = reader.read(&mut piece).await.expect("read the terminal");
            assert!(n > 0, "the terminal closed before {needle:?}: {seen}");
            seen.push_str(&String::from_utf8_lossy(&piece[..n]));
        }
    };
    tokio::time::timeout(limit, wait)
        .await
        .unwrap_or_else(|_| panic!("{needle:?} did not appear {times} times: {seen}"));
}

/// Whether util-linux `script` is there to give `qore` a pseudo-terminal (with a note if not).
pub fn has_script() -> bool {
    let has = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !has {
        eprintln!("skipped: util-linux `script` (a pseudo-terminal) is not available");
    }
    has
}

/// `argv` (the binary first) run in a pseudo-terminal with `env` set.
pub fn in_pty(argv: &[&str], env: &[(&str, &std::path::Path)]) -> Child {
    let line: Vec<String> = argv.iter().map(|a| shell_quoted(a)).collect();
    let mut cmd = tokio::process::Command::new("script");
    cmd.args(["-qec", &line.join(" "), "/dev/null"])
        .env_remove("QORE_URL")
        .env_remove("QORE_MODEL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (key, value) in env {
        cmd.env(key, value);
    }
    cmd.spawn().expect("spawn script")
}
