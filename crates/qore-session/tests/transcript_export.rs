//! Exporting a stored session (qore's JSON and Markdown) and importing qore's export again,
//! against real SQLite files.

use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use qore_core::{ContentBlock, Message, Role, Usage};
use qore_session::transcript::{export, import_file, transcript, ExportFormat, QORE_FORMAT};
use qore_store::{NewSession, SqliteStore, Store, TurnRecord, TurnStatus};

fn store(dir: &Path) -> SqliteStore {
    SqliteStore::open(dir.join("qore.db")).unwrap()
}

fn turn(n: u64, status: TurnStatus) -> TurnRecord {
    let call = format!("call-{n}");
    TurnRecord {
        user: Message::user(format!("question {n}: what is in ```main.rs```?")),
        replies: vec![
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::Thinking {
                        text: "read it\nthen answer".into(),
                        signature: Some("sig".into()),
                    },
                    ContentBlock::tool_use(
                        call.clone(),
                        "read_file",
                        serde_json::json!({"path": "src/main.rs"}),
                    ),
                ],
            ),
            Message::new(
                Role::User,
                vec![ContentBlock::tool_result(
                    call,
                    "fn main() {}\n````\n",
                    n == 2,
                )],
            ),
            Message::assistant(format!("answer {n}")),
        ],
        usage: Usage {
            input_tokens: Some(1000 + n),
            output_tokens: Some(n),
            ..Usage::default()
        },
        model: Some("m-1".into()),
        agent: Some("coder".into()),
        started_at: UNIX_EPOCH + Duration::from_millis(1_760_000_000_123 + n),
        finished_at: UNIX_EPOCH + Duration::from_millis(1_760_000_001_456 + n),
        status,
        file_changes: Vec::new(),
    }
}

/// A named session in a project, compressed from another, with a finished, a failed and an
/// undone turn.
async fn filled(store: &dyn Store) -> String {
    let original = store.create_session(&NewSession::default()).await.unwrap();
    let id = store
        .create_session(&NewSession {
            name: Some("parser-work".into()),
            project_dir: Some("/src/app".into()),
            agent: Some("coder".into()),
            model: Some("m-1".into()),
            parent_id: Some(original),
        })
        .await
        .unwrap();
    store
        .append_turn(&id, &turn(1, TurnStatus::Finished))
        .await
        .unwrap();
    store
        .append_turn(&id, &turn(2, TurnStatus::Failed))
        .await
        .unwrap();
    let undone = store
        .append_turn(&id, &turn(3, TurnStatus::Finished))
        .await
        .unwrap();
    store.mark_undone(undone).await.unwrap();
    id
}

#[tokio::test]
async fn export_then_import_then_export_gives_the_same_document_but_the_id() {
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = store(one.path());
    let id = filled(&first).await;
    let exported = export(&first, "parser-work", ExportFormat::Json)
        .await
        .unwrap();
    let value: serde_json::Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(value["format"], QORE_FORMAT);
    assert_eq!(value["version"], 1);
    assert_eq!(value["turns"][1]["status"], "failed");
    assert_eq!(value["turns"][2]["undone"], true);
    assert_eq!(value["turns"][0]["started_at"], "2025-10-09T08:53:20.124Z");
    assert_eq!(
        value["turns"][0]["messages"][1]["blocks"][1]["type"],
        "tool_use"
    );
    let file = one.path().join("export.json");
    std::fs::write(&file, &exported).unwrap();

    // Into the same store: the original still holds the name and the parent is there.
    let again = import_file(&first, &file, None, Some(Path::new("/elsewhere")))
        .await
        .unwrap();
    assert_eq!(again.notes.len(), 1, "{:?}", again.notes);
    assert!(again.notes[0].contains("'parser-work' exists"));
    let copy = transcript(&first, &again.id).await.unwrap();
    assert_eq!(copy.session.name, None);
    assert_eq!(copy.turns, transcript(&first, &id).await.unwrap().turns);

    // Into another store: everything but the id and the write time, and the parent (not there).
    let second = store(two.path());
    let imported = import_file(&second, &file, None, None).await.unwrap();
    assert_eq!((imported.source.as_str(), imported.turns), ("qore", 3));
    assert!(imported.notes.is_empty(), "{:?}", imported.notes);
    let mut back = transcript(&second, &imported.id).await.unwrap();
    let mut original = transcript(&first, &id).await.unwrap();
    assert_eq!(back.session.id, imported.id);
    assert_eq!(back.session.parent_id, None);
    for t in [&mut back, &mut original] {
        t.session.id.clear();
        t.session.parent_id = None;
        t.session.updated_at = UNIX_EPOCH;
    }
    assert_eq!(back, original);
    assert_eq!(second.history(&imported.id).await.unwrap().len(), 4 + 3);
}

#[tokio::test]
async fn markdown_has_a_heading_per_turn_and_fences_that_hold() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let id = filled(&store).await;
    let markdown = export(&store, &id[..20], ExportFormat::Markdown)
        .await
        .unwrap();
    let expected_lines = [
        "# question 1: what is in ```main.rs```?",
        "- name: parser-work",
        "- project: /src/app",
        "## Turn 1 (finished)",
        "*2025-10-09 08:53:20 UTC · model m-1 · agent coder · 1001 in / 1 out tokens*",
        "## Turn 2 (failed)",
        "## Turn 3 (finished, undone)",
        "### Tool results",
        "> read it",
        "> then answer",
        "**Tool call** `read_file` (id `call-1`)",
        "**Result** of `call-2`, an error",
        "answer 1",
    ];
    let lines: Vec<&str> = markdown.lines().collect();
    for line in expected_lines {
        assert!(lines.contains(&line), "missing {line:?} in\n{markdown}");
    }
    // The result holds a run of four backticks: its fence has five, on lines of their own.
    let result = markdown.find("fn main() {}").unwrap();
    assert!(markdown[..result].ends_with("`````\n"), "{markdown}");
    assert!(
        markdown[result..].starts_with("fn main() {}\n````\n`````\n"),
        "{markdown}"
    );
}
