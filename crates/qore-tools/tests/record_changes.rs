//! The writing tools record what they change into the session's recorder: the content before
//! the turn's first change (or "did not exist") and the hash of what the last change left;
//! failed calls, read-only tools and unchanged rewrites record nothing.

mod common;

use common::Project;
use qore_tools::{content_hash, Before, ChangeRecorder, ToolOptions};
use serde_json::json;

fn project(recorder: &ChangeRecorder) -> Project {
    Project::with_options(ToolOptions {
        record_changes: Some(recorder.clone()),
        ..ToolOptions::default()
    })
}

#[tokio::test]
async fn a_turn_of_writes_is_recorded_per_file() {
    let recorder = ChangeRecorder::new();
    let p = project(&recorder);
    p.write("kept.txt", "old\n");
    p.write("edited.rs", "fn a() {}\n");
    p.write("same.txt", "same\n");
    let calls = [
        (
            "create_file",
            json!({"path": "dir/new.txt", "content": "new\n"}),
        ),
        (
            "write_file",
            json!({"path": "kept.txt", "content": "first\n"}),
        ),
        (
            "write_file",
            json!({"path": "kept.txt", "content": "second\n"}),
        ),
        (
            "edit_file",
            json!({"path": "edited.rs", "old_string": "a", "new_string": "b"}),
        ),
        (
            "write_file",
            json!({"path": "same.txt", "content": "same\n"}),
        ),
        ("read_file", json!({"path": "kept.txt"})),
    ];
    for (tool, input) in calls {
        p.ok(tool, input).await;
    }
    // Failed calls change nothing and record nothing.
    p.err("create_file", json!({"path": "kept.txt", "content": "x"}))
        .await;
    p.err(
        "edit_file",
        json!({"path": "same.txt", "old_string": "zz", "new_string": "y"}),
    )
    .await;
    let recorded: Vec<_> = recorder
        .take()
        .into_iter()
        .map(|c| (c.path, c.before, c.after_hash))
        .collect();
    let expected = vec![
        (
            "dir/new.txt".to_string(),
            Before::Absent,
            content_hash(b"new\n"),
        ),
        (
            "edited.rs".into(),
            Before::Content(b"fn a() {}\n".to_vec()),
            content_hash(b"fn b() {}\n"),
        ),
        (
            "kept.txt".into(),
            Before::Content(b"old\n".to_vec()),
            content_hash(b"second\n"),
        ),
    ];
    assert_eq!(recorded, expected);
    p.ok(
        "write_file",
        json!({"path": "kept.txt", "content": "third\n"}),
    )
    .await;
    let next_turn = recorder.take();
    assert_eq!(next_turn.len(), 1);
    assert_eq!(next_turn[0].before, Before::Content(b"second\n".to_vec()));
}

#[tokio::test]
async fn without_a_recorder_the_tools_write_as_before() {
    let p = Project::new();
    p.ok("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert_eq!(p.read("a.txt"), "x");
}
