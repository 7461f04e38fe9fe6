//! `qore chat` in tmux for the chat's terminal tests ([`chat_on`]).
#![cfg(target_os = "linux")]

use std::path::Path;

use super::tmux::Tmux;
use super::turns::MODEL;
use super::QORE;

/// `qore chat --url URL --model MODEL --project PROJECT EXTRA` in a `cols`×`rows` tmux pane
/// in the project, saving into the data dir `data`, with `env` set too; `None` where tmux
/// cannot be had.
pub fn chat_on(
    url: &str,
    project: &Path,
    data: &Path,
    (extra, env): (&[&str], &[(&str, &str)]),
    size: (u16, u16),
) -> Option<Tmux> {
    let dir = project.to_str().expect("UTF-8 path");
    let mut argv = vec![
        QORE,
        "chat",
        "--url",
        url,
        "--model",
        MODEL,
        "--project",
        dir,
    ];
    argv.extend_from_slice(extra);
    let mut all_env = vec![("QORE_DATA_DIR", data.to_str().expect("UTF-8 path"))];
    all_env.extend_from_slice(env);
    Tmux::start(&argv, &all_env, project, size)
}
