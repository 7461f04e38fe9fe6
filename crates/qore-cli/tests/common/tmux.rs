//! A real terminal for `qore`: a private tmux server (Debian's tmux, installed by
//! `scripts/term-env.sh`) running one command in a pane of a fixed size. A test types with
//! [`Tmux::keys`] / [`Tmux::key`] / [`Tmux::paste`] (bracketed paste, as a terminal sends a
//! multi-line paste), waits for text with [`Tmux::wait_for`], and reads the screen back with
//! or without its escape codes ([`Tmux::screen`], [`Tmux::text`]).
//!
//! Promises: the tmux server is private (its own socket in a temporary directory, no user
//! configuration), the pane stays after the command ends so its last screen can be read, and
//! the server is killed when the [`Tmux`] is dropped. Every wait is bounded (10 s unless told)
//! and panics with the screen it saw.
//!
//! The command runs under `sh`, which prints how it ended as the last line ([`ended`]), and
//! [`Tmux::wait_exit`] reads that line: tmux 3.3a now and then leaves an exited pane command
//! a zombie it never reaps (seen under load, about one run in four), so the pane's own
//! `#{pane_dead_status}` may never come; the shell waits for its child itself.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use super::pty::shell_quoted;

/// What the shell prints after the command, before its exit status.
const ENDED: &str = "command ended with status";

/// The exit status on the shell's `[command ended with status N]` line of `text`, if any.
fn ended(text: &str) -> Option<i32> {
    let start = text.rfind(&format!("[{ENDED} "))? + ENDED.len() + 2;
    let rest = &text[start..];
    rest[..rest.find(']')?].parse().ok()
}

/// One tmux server with one pane running the command under test.
pub struct Tmux {
    tmux: PathBuf,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

/// The tmux binary, installed by `scripts/term-env.sh` when missing; `None` (with the reason
/// printed) where it cannot be had.
fn tmux_binary() -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/term-env.sh");
    let out = Command::new("bash").arg(&script).arg("tmux").output();
    match out {
        Ok(out) if out.status.success() => {
            let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            Some(PathBuf::from(path))
        }
        Ok(out) => {
            let why = String::from_utf8_lossy(&out.stderr);
            eprintln!("skipped: no tmux ({}): {why}", script.display());
            None
        }
        Err(err) => {
            eprintln!("skipped: could not run {}: {err}", script.display());
            None
        }
    }
}

impl Tmux {
    /// `argv` (the binary first) in a `cols`×`rows` terminal, in `cwd`, with `env` set (and
    /// `QORE_URL`/`QORE_MODEL`/`NO_COLOR` unset unless given). `None` where tmux cannot be
    /// had.
    pub fn start(
        argv: &[&str],
        env: &[(&str, &str)],
        cwd: &Path,
        size: (u16, u16),
    ) -> Option<Tmux> {
        let tmux = tmux_binary()?;
        let dir = tempfile::tempdir().expect("tmux dir");
        let conf = dir.path().join("tmux.conf");
        let settings = "set -g remain-on-exit on\nset -g history-limit 10000\n\
                        set -g default-terminal tmux-256color\nset -g status off\n";
        std::fs::write(&conf, settings).expect("tmux.conf");
        let this = Tmux {
            tmux,
            socket: dir.path().join("socket"),
            _dir: dir,
        };
        let line: Vec<String> = argv.iter().map(|a| shell_quoted(a)).collect();
        let script = format!("{}; echo \"[{ENDED} $?]\"", line.join(" "));
        let (cols, rows) = (size.0.to_string(), size.1.to_string());
        let mut cmd = this.command();
        cmd.args(["-f", conf.to_str().expect("UTF-8 path")])
            .args(["new-session", "-d", "-s", "t", "-x", &cols, "-y", &rows])
            .arg("-c")
            .arg(cwd)
            .env_remove("QORE_URL")
            .env_remove("QORE_MODEL")
            .env_remove("NO_COLOR")
            .env_remove("TMUX");
        for (key, value) in env {
            cmd.args(["-e", &format!("{key}={value}")]);
        }
        cmd.args(["sh", "-c", &script]);
        let out = cmd.output().expect("run tmux");
        assert!(out.status.success(), "tmux new-session: {out:?}");
        Some(this)
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.tmux);
        cmd.arg("-S").arg(&self.socket);
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        let out = self.command().args(args).output().expect("run tmux");
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        out
    }

    /// Type `text` literally (no key names).
    pub fn keys(&self, text: &str) {
        self.run(&["send-keys", "-t", "t", "-l", text]);
    }

    /// Press keys by tmux's names: `Enter`, `Tab`, `Up`, `C-r`, `C-c`, `C-d`, `Escape`.
    pub fn key(&self, name: &str) {
        self.run(&["send-keys", "-t", "t", name]);
    }

    /// Paste `text` as a terminal does (bracketed when the program asked for it).
    pub fn paste(&self, text: &str) {
        self.run(&["set-buffer", "-b", "paste", "--", text]);
        self.run(&["paste-buffer", "-p", "-d", "-b", "paste", "-t", "t"]);
    }

    /// The whole screen and scrollback with escape codes (colours, bold, dim).
    pub fn screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-e", "-J", "-S", "-", "-t", "t"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The whole screen and scrollback as plain text, wrapped lines joined.
    pub fn text(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", "t"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Wait until the plain screen shows `needle` `times` times (10 s); the plain screen.
    pub async fn wait_for_count(&self, needle: &str, times: usize) -> String {
        self.wait_until(Duration::from_secs(10), |text| {
            text.matches(needle).count() >= times
        })
        .await
        .unwrap_or_else(|text| panic!("{needle:?} did not appear {times} times:\n{text}"))
    }

    /// Wait until the plain screen shows `needle` (10 s); the plain screen.
    pub async fn wait_for(&self, needle: &str) -> String {
        self.wait_for_count(needle, 1).await
    }

    /// Wait until the command has ended (10 s); its exit status.
    pub async fn wait_exit(&self) -> i32 {
        let text = (self
            .wait_until(Duration::from_secs(10), |text| ended(text).is_some())
            .await)
            .unwrap_or_else(|text| panic!("the command did not end:\n{text}"));
        ended(&text).unwrap_or_default()
    }

    /// Poll the plain screen until `done` holds; the last screen either way.
    pub async fn wait_until(
        &self,
        limit: Duration,
        done: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        let polls = (limit.as_millis() / 50).max(1);
        let mut text = String::new();
        for _ in 0..polls {
            text = self.text();
            if done(&text) {
                return Ok(text);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(text)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}
