//! `qore chat` in tmux for the chat's terminal tests: the chat runs under `sh`, which prints
//! how it ended, so a test reads the exit status off the screen.
//!
//! Why not the pane's own status: tmux 3.3a now and then leaves the pane's command a
//! zombie it never reaps after the pane has closed (seen under load, about one run in four),
//! so `#{pane_dead_status}` never comes; the shell waits for its child itself.
#![cfg(target_os = "linux")]

use std::path::Path;

use super::pty::shell_quoted;
use super::tmux::Tmux;
use super::QORE;

/// What the screen shows when the chat has ended with status 0.
pub const ENDED_WELL: &str = "qore ended with status 0";

/// `qore chat ARGS` in a `cols`×`rows` tmux pane in `cwd`, saving into the data dir `data`;
/// `None` where tmux cannot be had.
pub fn chat(args: &[&str], data: &Path, cwd: &Path, size: (u16, u16)) -> Option<Tmux> {
    let mut line = vec![shell_quoted(QORE), "chat".to_owned()];
    line.extend(args.iter().map(|a| shell_quoted(a)));
    let script = format!("{}; echo \"qore ended with status $?\"", line.join(" "));
    let env = [("QORE_DATA_DIR", data.to_str().expect("UTF-8 path"))];
    Tmux::start(&["sh", "-c", &script], &env, cwd, size)
}
