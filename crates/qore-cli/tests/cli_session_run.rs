//! `qore run` keeps its conversation as a session in the data dir: a later run continues it
//! (`--session NAME`, `-c/--continue`) and its request carries the earlier turns; `--ephemeral`
//! saves nothing; `--json` names the saved session first.

mod common;

use std::path::Path;

use common::{command, run_cmd, Run};
use qore_testkit::chat::chat_answer;
use qore_testkit::{ReplayServer, Reply};
use serde_json::json;

/// `qore run` against `server` with its data dir and project in `dir`.
async fn run(server: &ReplayServer, dir: &Path, extra: &[&str], prompt: &str) -> Run {
    let url = format!("{}/v1", server.url());
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let mut args = vec!["run", "--url", &url, "--model", "tiny", "--tools", "off"];
    args.extend_from_slice(extra);
    args.push(prompt);
    let mut cmd = command(&args);
    cmd.env("QORE_DATA_DIR", dir.join("data"))
        .current_dir(&project);
    run_cmd(cmd).await
}

/// The (role, content) pairs of the `n`th request.
fn sent(server: &ReplayServer, n: usize) -> Vec<(String, String)> {
    let body = server.requests()[n].json().unwrap();
    (body["messages"].as_array().unwrap().iter())
        .map(|m| {
            let content = m["content"].as_str().unwrap_or_default().to_owned();
            (m["role"].as_str().unwrap().to_owned(), content)
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    (list.iter())
        .map(|(r, c)| (r.to_string(), c.to_string()))
        .collect()
}

#[tokio::test]
async fn a_continued_session_sends_the_earlier_turns() {
    // (case, flags of the first run, flags of the second run, the second request's messages)
    type Case = (
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
        bool,
    );
    let cases: &[Case] = &[
        (
            "--session NAME twice",
            &["--session", "work"],
            &["--session", "work"],
            true,
        ),
        ("a run, then --continue", &[], &["--continue"], true),
        ("a run, then -c", &[], &["-c"], true),
        (
            "an ephemeral run is not continued",
            &["--ephemeral"],
            &["-c"],
            false,
        ),
        ("a new run does not continue", &[], &[], false),
        (
            "another name is another session",
            &["--session", "a"],
            &["--session", "b"],
            false,
        ),
    ];
    for (case, first, second, continued) in cases {
        let server = ReplayServer::start(vec![chat_answer("Blue."), chat_answer("Green.")])
            .await
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let one = run(&server, dir.path(), first, "Sky colour?").await;
        assert_eq!(one.code, Some(0), "{case}: {one:?}");
        assert_eq!(one.stdout, "Blue.\n", "{case}");
        let two = run(&server, dir.path(), second, "Grass colour?").await;
        assert_eq!(two.code, Some(0), "{case}: {two:?}");
        let expected = match continued {
            true => pairs(&[
                ("user", "Sky colour?"),
                ("assistant", "Blue."),
                ("user", "Grass colour?"),
            ]),
            false => pairs(&[("user", "Grass colour?")]),
        };
        assert_eq!(sent(&server, 1), expected, "{case}");
    }
}

#[tokio::test]
async fn json_names_the_saved_session_first_and_ephemeral_names_none() {
    let server = ReplayServer::start_repeating(chat_answer("Hi."))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let saved = run(
        &server,
        dir.path(),
        &["--json", "--session", "greet"],
        "Hello",
    )
    .await;
    assert_eq!(saved.code, Some(0), "{saved:?}");
    let lines = saved.json_lines();
    assert_eq!(lines[0]["type"], "session", "{lines:?}");
    let id = lines[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 26, "a ULID: {id}");
    assert_eq!(lines.last().unwrap()["type"], "result");
    // The same session again, by its id this time.
    let again = run(&server, dir.path(), &["--json", "--session", &id], "Again").await;
    assert_eq!(again.json_lines()[0], json!({"type": "session", "id": id}));
    let ephemeral = run(&server, dir.path(), &["--json", "--ephemeral"], "Hello").await;
    assert_eq!(ephemeral.code, Some(0), "{ephemeral:?}");
    assert!(
        ephemeral
            .json_lines()
            .iter()
            .all(|l| l["type"] != "session"),
        "{ephemeral:?}"
    );
}

#[tokio::test]
async fn a_failed_run_is_continued_without_two_user_messages_in_a_row() {
    let refused = Reply::json(
        400,
        r#"{"error":{"message":"no","type":"invalid_request_error"}}"#,
    );
    let server = ReplayServer::start(vec![refused, chat_answer("Done.")])
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let one = run(&server, dir.path(), &[], "First try.").await;
    assert_eq!(one.code, Some(1), "{one:?}");
    let two = run(&server, dir.path(), &["-c"], "Second try.").await;
    assert_eq!(two.code, Some(0), "{two:?}");
    let body = server.requests()[1].json().unwrap();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{messages:?}");
    let text = messages[0]["content"].to_string();
    assert!(
        text.contains("First try.") && text.contains("Second try."),
        "{text}"
    );
}

#[tokio::test]
async fn ephemeral_conflicts_with_continuing() {
    let server = ReplayServer::start(vec![]).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    for flags in [
        &["--ephemeral", "-c"][..],
        &["--ephemeral", "--session", "x"],
    ] {
        let refused = run(&server, dir.path(), flags, "Hi").await;
        assert_eq!(refused.code, Some(2), "{flags:?}: {refused:?}");
    }
    assert!(server.requests().is_empty());
}
