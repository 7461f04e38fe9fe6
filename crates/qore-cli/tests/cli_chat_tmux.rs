//! `qore chat` in a real terminal (tmux, `tests/common/tmux.rs`) against a loopback server of
//! hand-written streams: what a person sees on the screen, escape codes included.
#![cfg(target_os = "linux")]

mod common;

use common::chat_term;
use common::turns::answer;
use qore_testkit::ReplayServer;

#[tokio::test]
async fn a_chat_in_tmux_answers_and_ends_on_ctrl_d() {
    let server = ReplayServer::start(vec![answer("Hello from the model.")])
        .await
        .expect("server");
    let data = tempfile::tempdir().expect("data dir");
    let project = tempfile::tempdir().expect("project dir");
    let url = format!("{}/v1", server.url());
    let Some(term) = chat_term::chat_on(&url, project.path(), data.path(), (&[], &[]), (100, 30))
    else {
        return;
    };
    term.wait_for("> ").await;
    term.keys("Say hello.");
    term.key("Enter");
    term.wait_for("Hello from the model.").await;
    term.wait_for_count("> ", 2).await;
    term.key("C-d");
    assert_eq!(term.wait_exit().await, 0, "{}", term.text());
    assert_eq!(server.requests().len(), 1);
}
