//! Changes shown before they are approved, in a real terminal (tmux, `tests/common/tmux.rs`)
//! against a loopback server of hand-written streams: a coloured diff before the question
//! for an edit, a new file and a long write (cut), a command with its directory; `/diff`
//! after the turn; the same diff in `qore run --tools confirm`, plain under `NO_COLOR`, and
//! as the `diff` field of `--json`'s `approval_request`.
//!
//! No test here waits for the program's exit status: tmux at times marks the pane dead
//! without one (seen about once in ten chats ended by Ctrl-D, the process gone), which a
//! test cannot tell from a hang; the tmux server is killed when the test ends.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::time::Duration;

use common::chat_term;
use common::tmux::Tmux;
use common::turns::{answer, turn, MODEL};
use qore_testkit::ReplayServer;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt as _;

const QUESTION: &str = "[y] yes, [a] always for";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";

/// A project with `notes.txt`.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("project dir");
    std::fs::write(dir.path().join("notes.txt"), "one\ntwo\nthree\n").expect("write");
    dir
}

fn edit_notes(id: &str) -> qore_testkit::Reply {
    let edit = json!({"path": "notes.txt", "old_string": "two", "new_string": "TWO"});
    turn("", &[(id, "edit_file", edit)])
}

fn path_of(dir: &Path) -> &str {
    dir.to_str().expect("UTF-8 path")
}

/// Where `needle` is on `screen`; fails the test when it is not there.
fn at(screen: &str, needle: &str) -> usize {
    (screen.find(needle)).unwrap_or_else(|| panic!("{needle:?} is not on the screen:\n{screen}"))
}

/// `qore chat` on `project` against `server` in a 100-column tmux of `rows` rows, with a
/// data dir of its own (kept as long as the chat).
struct Chat {
    term: Tmux,
    _data: tempfile::TempDir,
}

impl Chat {
    fn start(server: &ReplayServer, project: &tempfile::TempDir, rows: u16) -> Option<Chat> {
        let data = tempfile::tempdir().expect("data dir");
        let url = format!("{}/v1", server.url());
        let term = chat_term::chat_on(&url, project.path(), data.path(), (&[], &[]), (100, rows))?;
        Some(Chat { term, _data: data })
    }
}

#[tokio::test]
async fn chat_shows_each_change_before_its_question_and_diff_shows_the_turn() {
    let long: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    let server = ReplayServer::start(vec![
        edit_notes("c1"),
        turn(
            "",
            &[(
                "c2",
                "write_file",
                json!({"path": "new.txt", "content": "fresh line\n"}),
            )],
        ),
        turn(
            "",
            &[(
                "c3",
                "write_file",
                json!({"path": "long.txt", "content": long}),
            )],
        ),
        turn(
            "",
            &[("c4", "run_command", json!({"argv": ["echo", "hi there"]}))],
        ),
        answer("Done."),
    ])
    .await
    .expect("server");
    let project = project();
    let Some(Chat { term, _data }) = Chat::start(&server, &project, 50) else {
        return;
    };
    term.wait_for("> ").await;
    term.keys("Change the notes.");
    term.key("Enter");

    // An edit: the removed line red, the added one green, both before the question.
    term.wait_for_count(QUESTION, 1).await;
    let screen = term.screen();
    let question = at(&screen, "qore: run edit_file");
    assert!(at(&screen, &format!("{RED}-two")) < question, "{screen}");
    assert!(at(&screen, &format!("{GREEN}+TWO")) < question, "{screen}");
    assert!(at(&screen, "@@ -1,3 +1,3 @@") < question, "{screen}");
    term.keys("y");
    term.key("Enter");

    // A new file: all additions.
    let text = term.wait_for_count(QUESTION, 2).await;
    assert!(
        text.contains("@@ -0,0 +1 @@\n+fresh line\nqore: run write_file"),
        "{text}"
    );
    term.keys("y");
    term.key("Enter");

    // A long write: 2 headers, 1 hunk header and 100 additions, 40 shown.
    let text = term.wait_for_count(QUESTION, 3).await;
    assert!(
        text.contains("+line 37\n… 63 more lines\nqore: run write_file"),
        "{text}"
    );
    assert!(!text.contains("+line 38"), "{text}");
    term.keys("y");
    term.key("Enter");

    // A command: the command line and where it runs.
    let text = term.wait_for_count(QUESTION, 4).await;
    let cwd = std::fs::canonicalize(project.path()).expect("canonical project");
    let shown = format!("command: echo 'hi there'\n     in: {}\n", cwd.display());
    assert!(text.contains(&shown), "{text}");
    term.keys("n");
    term.key("Enter");
    term.wait_for("Done.").await;
    term.wait_for_count("> ", 2).await;

    // /diff: every file the turn changed, as a unified diff each.
    term.keys("/diff");
    term.key("Enter");
    // Each file's diff appears a second time (the approvals showed them first), whole:
    // the long file's last line too, which its approval left out.
    let expected = [
        (
            "--- a/long.txt\n+++ b/long.txt\n@@ -0,0 +1,100 @@\n+line 1\n",
            2,
        ),
        ("+line 99\n+line 100\n", 1),
        (
            "--- a/new.txt\n+++ b/new.txt\n@@ -0,0 +1 @@\n+fresh line\n",
            2,
        ),
        (
            "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
            2,
        ),
    ];
    let shown = term.wait_until(Duration::from_secs(10), |text| {
        (expected.iter()).all(|(diff, times)| text.matches(diff).count() == *times)
    });
    if let Err(text) = shown.await {
        panic!("/diff did not show every file's diff: {text}");
    }
    assert!(term.screen().contains(&format!("{GREEN}+fresh line")));
    let notes = std::fs::read_to_string(project.path().join("notes.txt")).expect("notes");
    assert_eq!(notes, "one\nTWO\nthree\n");
}

/// `/diff` when the last turn changed nothing says so.
#[tokio::test]
async fn diff_after_a_turn_without_changes_says_so() {
    let server = ReplayServer::start(vec![answer("Nothing to change.")])
        .await
        .expect("server");
    let project = project();
    let Some(Chat { term, _data }) = Chat::start(&server, &project, 50) else {
        return;
    };
    term.wait_for("> ").await;
    term.keys("/diff");
    term.key("Enter");
    term.wait_for("no turn yet").await;
    term.keys("Hello.");
    term.key("Enter");
    term.wait_for("Nothing to change.").await;
    term.keys("/diff");
    term.key("Enter");
    term.wait_for("no changes in the last turn").await;
}

/// `qore run --tools confirm` on a terminal shows the same diff before its question:
/// coloured, and plain under `NO_COLOR`.
#[tokio::test]
async fn run_confirm_shows_the_diff_coloured_unless_no_color() {
    for (env_no_color, coloured) in [(None, true), (Some("1"), false)] {
        let server = ReplayServer::start(vec![edit_notes("c1"), answer("Edited.")])
            .await
            .expect("server");
        let data = tempfile::tempdir().expect("data dir");
        let project = project();
        let url = format!("{}/v1", server.url());
        let argv = [
            common::QORE,
            "run",
            "--tools",
            "confirm",
            "--url",
            &url,
            "--model",
            MODEL,
            "--project",
            path_of(project.path()),
            "Edit the notes.",
        ];
        let mut env = vec![("QORE_DATA_DIR", path_of(data.path()))];
        env.extend(env_no_color.map(|v| ("NO_COLOR", v)));
        let Some(term) = Tmux::start(&argv, &env, project.path(), (100, 30)) else {
            return;
        };
        let text = term.wait_for(QUESTION).await;
        assert!(
            text.contains("--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\nqore: run edit_file"),
            "{text}"
        );
        let screen = term.screen();
        assert_eq!(screen.contains(&format!("{RED}-two")), coloured, "{screen}");
        assert_eq!(
            screen.contains(&format!("{GREEN}+TWO")),
            coloured,
            "{screen}"
        );
        term.keys("y");
        term.key("Enter");
        term.wait_for("Edited.").await;
        let notes = std::fs::read_to_string(project.path().join("notes.txt")).expect("notes");
        assert_eq!(notes, "one\nTWO\nthree\n");
    }
}

/// `--json`: the approval request carries the diff (and a command its line and directory).
#[tokio::test]
async fn json_approval_requests_carry_the_diff() {
    let server = ReplayServer::start(vec![
        edit_notes("c1"),
        turn("", &[("c2", "run_command", json!({"argv": ["ls", "-l"]}))]),
        answer("Done."),
    ])
    .await
    .expect("server");
    let project = project();
    let url = format!("{}/v1", server.url());
    let mut cmd = common::command(&[
        "run",
        "--json",
        "--tools",
        "confirm",
        "--ephemeral",
        "--url",
        &url,
        "--model",
        MODEL,
        "--project",
        path_of(project.path()),
        "Edit the notes.",
    ]);
    cmd.stdin(std::process::Stdio::piped());
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("qore");
    let mut stdin = child.stdin.take().expect("stdin");
    let decisions =
        "{\"id\": \"c1\", \"decision\": \"deny\"}\n{\"id\": \"c2\", \"decision\": \"deny\"}\n";
    stdin.write_all(decisions.as_bytes()).await.expect("write");
    drop(stdin);
    let out = child.wait_with_output().await.expect("qore ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let requests: Vec<Value> = (stdout.lines())
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["type"] == "approval_request")
        .collect();
    assert_eq!(requests.len(), 2, "{stdout}");
    assert_eq!(
        requests[0]["diff"],
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    );
    let cwd = std::fs::canonicalize(project.path()).expect("canonical project");
    assert_eq!(requests[1]["command"], "ls -l");
    assert_eq!(requests[1]["cwd"], path_of(&cwd));
    // Denied: nothing was written.
    let notes = std::fs::read_to_string(project.path().join("notes.txt")).expect("notes");
    assert_eq!(notes, "one\ntwo\nthree\n");
}
