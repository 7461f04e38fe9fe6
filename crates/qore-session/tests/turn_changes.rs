//! What the last turn changed, against real files and a real SQLite store: the turn's calls
//! run through the real built-in tools with a recorder, the turn is stored with its record,
//! then `last_turn_changes` tells each file's before and now.

use qore_session::turn_changes::{last_turn_changes, ChangedFile};
use qore_store::{NewSession, SqliteStore, Store};
use qore_tools::{builtin_tools, ChangeRecorder, Sandbox, ToolOptions};
use serde_json::json;

mod undo_common;
use undo_common::stored_turn;

#[tokio::test]
async fn the_last_turn_is_told_file_by_file() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = std::fs::canonicalize(tmp.path())
        .expect("canonical")
        .join("project");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::write(root.join("a.txt"), "one\ntwo\n").expect("write");
    let recorder = ChangeRecorder::new();
    let options = ToolOptions {
        record_changes: Some(recorder.clone()),
        ..ToolOptions::default()
    };
    let tools = builtin_tools(Sandbox::new(&root).expect("sandbox"), &options);
    let store = SqliteStore::open(tmp.path().join("qore.db")).expect("store");
    let new = NewSession {
        project_dir: Some(root.clone()),
        ..NewSession::default()
    };
    let session = store.create_session(&new).await.expect("session");

    let none = last_turn_changes(&store, &session, &root)
        .await
        .expect("told");
    assert_eq!(none, None, "no turn yet");

    let first = [("write_file", json!({"path": "old.txt", "content": "x"}))];
    stored_turn(&store, &session, &tools, &recorder, &first).await;
    let second = [
        (
            "edit_file",
            json!({"path": "a.txt", "old_string": "two", "new_string": "2"}),
        ),
        (
            "create_file",
            json!({"path": "b/new.txt", "content": "new\n"}),
        ),
        ("run_command", json!({"argv": ["pwd"]})),
    ];
    stored_turn(&store, &session, &tools, &recorder, &second).await;
    // The user changes b/new.txt after the turn.
    std::fs::write(root.join("b/new.txt"), "mine\n").expect("write");

    let told = last_turn_changes(&store, &session, &root)
        .await
        .expect("told");
    let told = told.expect("a turn");
    assert_eq!(told.seq, 2);
    let file = |path: &str, before: Option<&str>, now: &str, changed_since: bool| ChangedFile {
        path: path.into(),
        before: before.map(|b| b.as_bytes().to_vec()),
        before_recorded: true,
        now: Some(now.as_bytes().to_vec()),
        changed_since,
    };
    assert_eq!(
        told.files,
        vec![
            file("a.txt", Some("one\ntwo\n"), "one\n2\n", false),
            file("b/new.txt", None, "mine\n", true),
        ]
    );
    assert_eq!(told.unrecorded_calls, vec!["run_command `pwd`".to_owned()]);
}
