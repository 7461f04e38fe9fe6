//! The chat's input in a real terminal (tmux) against a loopback server of hand-written
//! streams: a multi-line paste is one message, and the prompts of earlier chats (the data
//! dir's history) come back with Up and Ctrl-R in a chat started later.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;

use common::chat_term;
use common::content_text;
use common::tmux::Tmux;
use common::turns::answer;
use qore_testkit::ReplayServer;
use serde_json::Value;

/// `qore chat` against `url` on the project `project`, saving into `data`.
fn chat(url: &str, project: &Path, data: &Path) -> Option<Tmux> {
    chat_term::chat_on(url, project, data, (&[], &[]), (100, 30))
}

/// The text of each request's last user message.
fn sent(server: &ReplayServer) -> Vec<String> {
    (server.requests().iter())
        .map(|r| r.json().expect("a JSON body"))
        .map(|body: Value| {
            let messages = body["messages"].as_array().expect("messages").clone();
            let user = (messages.iter().rev())
                .find(|m| m["role"] == "user")
                .expect("a user message")
                .clone();
            content_text(&user["content"])
        })
        .collect()
}

#[tokio::test]
async fn a_pasted_block_of_three_lines_is_one_message() {
    let server = ReplayServer::start(vec![answer("Three lines read.")])
        .await
        .expect("server");
    let dirs = (
        tempfile::tempdir().expect("data"),
        tempfile::tempdir().expect("project"),
    );
    let url = format!("{}/v1", server.url());
    let Some(term) = chat(&url, dirs.1.path(), dirs.0.path()) else {
        return;
    };
    term.wait_for("> ").await;
    term.paste("first line of the paste\nsecond line\nthird line");
    term.wait_for("third line").await;
    term.key("Enter");
    term.wait_for("Three lines read.").await;
    term.wait_for_count("> ", 2).await;
    term.key("C-d");
    assert_eq!(term.wait_exit().await, 0, "{}", term.text());
    assert_eq!(
        sent(&server),
        ["first line of the paste\nsecond line\nthird line"]
    );
}

#[tokio::test]
async fn a_later_chat_recalls_earlier_prompts_with_up_and_ctrl_r() {
    let replies = ["One.", "Two.", "Three.", "Four."].map(answer).to_vec();
    let server = ReplayServer::start(replies).await.expect("server");
    let dirs = (
        tempfile::tempdir().expect("data"),
        tempfile::tempdir().expect("project"),
    );
    let url = format!("{}/v1", server.url());
    let first = ["remember the lighthouse keeper", "and then the tide tables"];
    {
        let Some(term) = chat(&url, dirs.1.path(), dirs.0.path()) else {
            return;
        };
        for (n, (prompt, reply)) in first.iter().zip(["One.", "Two."]).enumerate() {
            term.wait_for_count("> ", n + 1).await;
            term.keys(prompt);
            term.key("Enter");
            term.wait_for(reply).await;
        }
        term.wait_for_count("> ", 3).await;
        term.key("C-d");
        assert_eq!(term.wait_exit().await, 0, "{}", term.text());
    }
    // A second chat of the same data dir: Up brings the last prompt, Ctrl-R finds the other.
    let Some(term) = chat(&url, dirs.1.path(), dirs.0.path()) else {
        return;
    };
    term.wait_for("> ").await;
    term.key("Up");
    term.wait_for("> and then the tide tables").await;
    term.key("Enter");
    term.wait_for("Three.").await;
    term.wait_for_count("> ", 2).await;
    term.key("C-r");
    term.keys("lighthouse");
    term.wait_for("remember the lighthouse keeper").await;
    term.key("Enter");
    term.wait_for("Four.").await;
    term.wait_for_count("> ", 3).await;
    term.key("C-d");
    assert_eq!(term.wait_exit().await, 0, "{}", term.text());
    let expected = [first[0], first[1], first[1], first[0]];
    assert_eq!(sent(&server), expected);
}
