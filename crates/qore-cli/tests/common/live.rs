//! `qore` fed through stdin: all at once ([`run_with_stdin`]), or a running `qore` whose
//! stdin stays open, lines written to it while its stdout is read line by line ([`Live`]:
//! tool approvals, chat messages).

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdout};

use super::Run;

/// Run a prepared command with `stdin` written into its stdin, then closed (30 s at most).
pub async fn run_with_stdin(cmd: tokio::process::Command, stdin: &str) -> Run {
    run_with_stdin_within(cmd, stdin, Duration::from_secs(30)).await
}

/// [`run_with_stdin`] within `limit`.
pub async fn run_with_stdin_within(
    mut cmd: tokio::process::Command,
    stdin: &str,
    limit: Duration,
) -> Run {
    cmd.stdin(Stdio::piped());
    let mut child = cmd.spawn().expect("qore starts");
    let mut pipe = child.stdin.take().expect("stdin");
    pipe.write_all(stdin.as_bytes()).await.expect("write stdin");
    drop(pipe);
    let output = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("qore did not finish within {limit:?}"))
        .expect("qore runs");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// A running `qore` whose stdin stays open for decisions.
pub struct Live {
    pub child: Child,
    stdout: BufReader<ChildStdout>,
    seen: Vec<String>,
}

impl Live {
    pub fn spawn(mut cmd: tokio::process::Command) -> Live {
        cmd.stdin(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn qore");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Live {
            child,
            stdout,
            seen: Vec::new(),
        }
    }

    /// The next stdout line of `kind` (10 s at most); the lines before it are kept.
    pub async fn next_of(&mut self, kind: &str) -> Value {
        let wait = async {
            loop {
                let mut line = String::new();
                let n = self.stdout.read_line(&mut line).await.expect("read stdout");
                assert!(n > 0, "stdout ended before a {kind} line: {:#?}", self.seen);
                self.seen.push(line.trim_end().to_owned());
                let value: Value = serde_json::from_str(&line).expect("a JSON line");
                if value["type"] == kind {
                    return value;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .unwrap_or_else(|_| panic!("no {kind} line within 10 s: {:#?}", self.seen))
    }

    /// Send SIGINT, as Ctrl-C does.
    pub fn interrupt(&self) {
        let pid = self.child.id().expect("pid").to_string();
        let sent = std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .expect("run kill");
        assert!(sent.success());
    }

    /// Write `line` as one JSON line.
    pub async fn send(&mut self, line: Value) {
        self.send_text(&format!("{line}\n")).await;
    }

    /// Write `text` as it is.
    pub async fn send_text(&mut self, text: &str) {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        stdin
            .write_all(text.as_bytes())
            .await
            .expect("write to stdin");
        stdin.flush().await.expect("flush stdin");
    }

    /// Close stdin, wait for the end (10 s at most); the whole stdout is in the result.
    pub async fn finish(mut self) -> Run {
        drop(self.child.stdin.take());
        let mut rest = String::new();
        let wait = async {
            tokio::io::AsyncReadExt::read_to_string(&mut self.stdout, &mut rest)
                .await
                .expect("read stdout");
            self.child.wait_with_output().await.expect("wait")
        };
        let output = tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .expect("qore ends within 10 s");
        let mut stdout: String = self.seen.iter().map(|l| format!("{l}\n")).collect();
        stdout.push_str(&rest);
        Run {
            code: output.status.code(),
            stdout,
            stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
        }
    }
}
