//! `@path` mentions in `qore chat`, in a real terminal (tmux) against a loopback server of
//! hand-written streams: a mentioned file goes with the message and is kept with the turn,
//! Tab completes a path after `@`, a large file is cut with a note, and a mention of an
//! ignored path or one outside the project refuses the message, so the server gets nothing.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;

use common::chat_term;
use common::tmux::Tmux;
use common::turns::{answer, MODEL};
use common::{command, content_text, run_cmd};
use qore_testkit::{ReplayServer, Reply};
use serde_json::Value;

const SESSION: &str = "mentions";

/// A project beside an outside file: `src/main.rs`, `.gitignore` ignoring `target/`,
/// `target/x`, and `big.txt` of 20 000 numbered lines (about 240 KiB).
fn project(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("project");
    std::fs::create_dir_all(root.join("src")).expect("src");
    std::fs::create_dir_all(root.join("target")).expect("target");
    std::fs::write(root.join("src/main.rs"), "fn main() { marker_7f3a(); }\n").expect("main");
    std::fs::write(root.join(".gitignore"), "target/\n").expect(".gitignore");
    std::fs::write(root.join("target/x"), "built\n").expect("target/x");
    let big: String = (1..=20_000).map(|n| format!("line number {n}\n")).collect();
    std::fs::write(root.join("big.txt"), big).expect("big.txt");
    std::fs::write(dir.join("outside.txt"), "far away\n").expect("outside");
    root
}

/// `qore chat` on `root` in tmux, saving into `data`, the session named [`SESSION`].
fn chat(url: &str, root: &Path, data: &Path) -> Option<Tmux> {
    let extra = ["--session", SESSION];
    chat_term::chat_on(url, root, data, (&extra, &[]), (120, 40))
}

/// The text of the last user message of a request.
fn last_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().expect("messages");
    let user = (messages.iter().rev())
        .find(|m| m["role"] == "user")
        .expect("a user message");
    content_text(&user["content"])
}

#[tokio::test]
async fn a_mentioned_file_goes_with_the_message_and_stays_with_the_turn() {
    // A message this large makes the session ask the model listing for the context window.
    let listing = Reply::json(
        200,
        r#"{"object":"list","data":[{"id":"m","object":"model"}]}"#,
    );
    let replies = vec![answer("It calls marker."), listing, answer("A long file.")];
    let server = ReplayServer::start(replies).await.expect("server");
    let dir = tempfile::tempdir().expect("dir");
    let root = project(dir.path());
    let url = format!("{}/v1", server.url());
    let Some(term) = chat(&url, &root, dir.path()) else {
        return;
    };
    term.wait_for("> ").await;
    // Tab completes `@sr` to `@src/`, and then `@src/m` to the file.
    term.keys("What does @sr");
    term.key("Tab");
    term.wait_for("What does @src/").await;
    term.keys("m");
    term.key("Tab");
    term.wait_for("What does @src/main.rs").await;
    term.keys(" call?");
    term.key("Enter");
    term.wait_for("It calls marker.").await;
    term.wait_for_count("> ", 2).await;
    term.keys("Summarise @big.txt");
    term.key("Enter");
    term.wait_for("A long file.").await;
    term.wait_for_count("> ", 3).await;
    term.key("C-d");
    assert_eq!(term.wait_exit().await, 0, "{}", term.text());

    let bodies: Vec<Value> = (server.requests().iter())
        .filter(|r| r.path.ends_with("/chat/completions"))
        .map(|r| r.json().expect("a JSON body"))
        .collect();
    assert_eq!(bodies.len(), 2);
    let first = last_user_text(&bodies[0]);
    let attached = "What does @src/main.rs call?\n\n<file path=\"src/main.rs\">\n\
                    fn main() { marker_7f3a(); }\n</file>";
    assert_eq!(first, attached);
    let second = last_user_text(&bodies[1]);
    assert!(second.starts_with("Summarise @big.txt\n\n<file path=\"big.txt\">\nline number 1\n"));
    // Whole lines while they fit in 64 KiB.
    let mut fits = 0;
    let mut bytes = 0;
    for n in 1..=20_000 {
        bytes += format!("line number {n}\n").len();
        if bytes > 64 * 1024 {
            break;
        }
        fits = n;
    }
    let note = format!("line number {fits}\n[cut: first {fits} of 20000 lines;");
    assert!(
        second.contains(&note),
        "{note:?} in {}",
        &second[second.len().saturating_sub(300)..]
    );
    assert!(second.len() <= 65 * 1024, "{} bytes", second.len());
    assert!(!second.contains("line number 20000\n"));

    // The session keeps what the model saw.
    let mut show = command(&["sessions", "show", SESSION]);
    show.env("QORE_DATA_DIR", dir.path());
    let shown = run_cmd(show).await;
    assert_eq!(shown.code, Some(0), "{shown:?}");
    assert!(
        shown.stdout.contains("<file path=\"src/main.rs\">"),
        "{}",
        shown.stdout
    );
    assert!(shown.stdout.contains("marker_7f3a"), "{}", shown.stdout);
}

#[tokio::test]
async fn an_ignored_or_outside_mention_refuses_the_message() {
    let server = ReplayServer::start(vec![answer("unused")])
        .await
        .expect("server");
    let dir = tempfile::tempdir().expect("dir");
    let root = project(dir.path());
    let url = format!("{}/v1", server.url());
    let Some(term) = chat(&url, &root, dir.path()) else {
        return;
    };
    // (the message, what the refusal on screen says)
    let cases = [
        ("Read @target/x please", "the rule `target/` in .gitignore"),
        ("Read @../outside.txt please", "outside the project root"),
    ];
    for (n, (message, reason)) in cases.iter().enumerate() {
        term.wait_for_count("> ", n + 1).await;
        term.keys(message);
        term.key("Enter");
        let screen = term.wait_for(reason).await;
        assert!(screen.contains("Nothing was sent"), "{screen}");
    }
    // Up brings the refused message back to be changed.
    term.wait_for_count("> ", 3).await;
    term.key("Up");
    term.wait_for_count("Read @../outside.txt please", 2).await;
    term.key("C-c");
    term.wait_for_count("> ", 4).await;
    term.key("C-d");
    assert_eq!(term.wait_exit().await, 0, "{}", term.text());
    assert_eq!(server.requests().len(), 0, "nothing is sent");
}

#[tokio::test]
async fn run_attaches_the_mentions_of_its_arguments_only() {
    let dir = tempfile::tempdir().expect("dir");
    let root = project(dir.path());
    let project = root.to_str().expect("UTF-8 path");
    // (piped stdin, the prompt's argument, exit code, the user message sent: none when refused)
    let file = "<file path=\"src/main.rs\">\nfn main() { marker_7f3a(); }\n</file>";
    let cases: [(&str, &str, i32, Option<String>); 3] = [
        (
            "",
            "Explain @src/main.rs",
            0,
            Some(format!("Explain @src/main.rs\n\n{file}")),
        ),
        (
            "@big.txt is not a mention here\n",
            "What is @src/main.rs?",
            0,
            Some(format!(
                "@big.txt is not a mention here\n\nWhat is @src/main.rs?\n\n{file}"
            )),
        ),
        ("", "Read @target/x", 1, None),
    ];
    for (stdin, prompt, code, sent) in cases {
        let server = ReplayServer::start(vec![answer("Done.")])
            .await
            .expect("server");
        let url = format!("{}/v1", server.url());
        let args = [
            "run",
            "--url",
            &url,
            "--model",
            MODEL,
            "--project",
            project,
            prompt,
        ];
        let mut cmd = command(&args);
        cmd.stdin(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("qore runs");
        let mut input = child.stdin.take().expect("stdin");
        tokio::io::AsyncWriteExt::write_all(&mut input, stdin.as_bytes())
            .await
            .expect("write stdin");
        drop(input);
        let out = child.wait_with_output().await.expect("qore ends");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{prompt}: {stderr}");
        let bodies: Vec<Value> = (server.requests().iter())
            .map(|r| r.json().expect("a JSON body"))
            .collect();
        match sent {
            Some(sent) => assert_eq!(last_user_text(&bodies[0]), sent, "{prompt}"),
            None => {
                assert!(bodies.is_empty(), "{prompt}: nothing is sent");
                assert!(stderr.contains(".gitignore"), "{stderr}");
            }
        }
    }
}
