//! `qore run` keeps its conversation as a session in the data dir: a later run continues it
//! (`--session NAME`, `-c/--continue`) and its request carries the earlier turns; `--ephemeral`
//! saves nothing; `--json` names the saved session first.

mod common;

use std::path::Path;

use common::{command, run_cmd, Run};
use qore_testkit::chat::{chat_answer, role_pairs, sent_messages};
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
            true => role_pairs(&[
                ("user", "Sky colour?"),
                ("assistant", "Blue."),
                ("user", "Grass colour?"),
            ]),
            false => role_pairs(&[("user", "Grass colour?")]),
        };
        assert_eq!(sent_messages(&server.requests()[1]), expected, "{case}");
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

#[tokio::test]
async fn the_system_prompt_is_the_given_one_then_the_projects_rules() {
    let server = ReplayServer::start(vec![chat_answer("Ok.")]).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".qore/rules")).unwrap();
    std::fs::write(project.join("AGENTS.md"), "Use tabs.\n").unwrap();
    std::fs::write(project.join(".qore/rules/b.md"), "Rule B.").unwrap();
    std::fs::write(project.join(".qore/rules/a.md"), "Rule A.").unwrap();
    let done = run(&server, dir.path(), &["--system", "Be brief."], "Hi").await;
    assert_eq!(done.code, Some(0), "{done:?}");
    assert_eq!(
        sent_messages(&server.requests()[0]),
        role_pairs(&[
            ("system", "Be brief.\n\nUse tabs.\n\nRule A.\n\nRule B."),
            ("user", "Hi"),
        ])
    );
}

#[tokio::test]
async fn a_run_cancelled_by_ctrl_c_is_saved_and_continued_well_formed() {
    // The first answer stalls with the connection open; the second one finishes.
    let stalled = chat_answer("Never.").stall_after(10);
    let server = ReplayServer::start(vec![stalled, chat_answer("Done.")])
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let url = format!("{}/v1", server.url());
    let args = [
        "run", "--url", &url, "--model", "tiny", "--tools", "off", "Slow.",
    ];
    let mut cmd = command(&args);
    cmd.env("QORE_DATA_DIR", dir.path().join("data"))
        .current_dir(&project);
    let mut child = cmd.spawn().unwrap();
    let asked = async {
        while server.requests().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    };
    // A guard, not a timing claim.
    tokio::time::timeout(std::time::Duration::from_secs(30), asked)
        .await
        .expect("the request reached the server");
    let pid = child.id().unwrap().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status();
    assert!(sent.unwrap().success());
    let status = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait())
        .await
        .expect("qore ends after SIGINT")
        .unwrap();
    assert_eq!(status.code(), Some(130));
    let again = run(&server, dir.path(), &["-c"], "Again.").await;
    assert_eq!(again.code, Some(0), "{again:?}");
    let messages = sent_messages(&server.requests()[1]);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0].0, "user");
    assert!(
        messages[0].1.contains("Slow.") && messages[0].1.contains("Again."),
        "{messages:?}"
    );
}
