//! `qore chat` in tmux for the chat's terminal tests ([`chat`]).
#![cfg(target_os = "linux")]

use std::path::Path;

use super::tmux::Tmux;
use super::QORE;

/// `qore chat ARGS` in a `cols`×`rows` tmux pane in `cwd`, saving into the data dir `data`;
/// `None` where tmux cannot be had.
pub fn chat(args: &[&str], data: &Path, cwd: &Path, size: (u16, u16)) -> Option<Tmux> {
    let mut argv = vec![QORE, "chat"];
    argv.extend_from_slice(args);
    let env = [("QORE_DATA_DIR", data.to_str().expect("UTF-8 path"))];
    Tmux::start(&argv, &env, cwd, size)
}
