//! Importing QodeAssist chat histories (0.4, 0.2, 0.1: files written from the format
//! description, in tests/data/qodeassist/) into a real store, and refusing bad files with the
//! file's name and what is wrong.

use std::path::{Path, PathBuf};

use qore_core::{ContentBlock, Message, Role};
use qore_session::transcript::{import_file, TranscriptError};
use qore_store::{SqliteStore, Store, TurnStatus};
use serde_json::json;

/// A 0.2 file under the name QodeAssist gives it: the title, then when it was saved.
const LEGACY_0_2: &str = "list-the-files_2025-03-04_10-20.json";

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/qodeassist")
        .join(name)
}

fn store() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("qore.db")).unwrap();
    (dir, store)
}

fn call(id: &str, name: &str, input: serde_json::Value) -> ContentBlock {
    ContentBlock::tool_use(id, name, input)
}

fn result(id: &str, text: &str, is_error: bool) -> ContentBlock {
    ContentBlock::tool_result(id, text, is_error)
}

fn assistant(blocks: Vec<ContentBlock>) -> Message {
    Message::new(Role::Assistant, blocks)
}

fn thinking(text: &str, signature: &str) -> ContentBlock {
    ContentBlock::Thinking {
        text: text.into(),
        signature: Some(signature.into()),
    }
}

/// Per file: its turns as (status, messages, input tokens), and the notes' kinds.
type Expected = (
    Vec<(TurnStatus, Vec<Message>, Option<u64>)>,
    Vec<&'static str>,
);

fn expected(file: &str) -> Expected {
    use TurnStatus::{Failed, Finished};
    match file {
        "chat_0.4.json" => (
            vec![
                (
                    Finished,
                    vec![
                        Message::user("Why does main.cpp not build?"),
                        assistant(vec![
                            thinking("I should read the file.", "c2lnLTE="),
                            ContentBlock::text("Let me look at it."),
                            call("call_1", "read_file", json!({"path": "main.cpp"})),
                            call("call_2", "run_build", json!({"target": "all"})),
                        ]),
                        Message::new(
                            Role::User,
                            vec![
                                result("call_1", "int main() { return 0 }", false),
                                result("call_2", "main.cpp:1: error: expected ';'", true),
                            ],
                        ),
                        Message::assistant("A `;` is missing after `return 0`."),
                    ],
                    Some(812),
                ),
                (
                    Finished,
                    vec![
                        Message::user("Thanks! Anything else?"),
                        assistant(vec![
                            ContentBlock::RedactedThinking {
                                data: "ZW5jcnlwdGVk".into(),
                            },
                            ContentBlock::text("No, that was all."),
                        ]),
                    ],
                    Some(930),
                ),
                (Failed, vec![Message::user("One more question")], None),
            ],
            vec!["attachment", "file_edit", "sparkle", "system"],
        ),
        LEGACY_0_2 => (
            vec![
                (
                    Finished,
                    vec![
                        Message::user("List the files"),
                        assistant(vec![
                            thinking("The user wants a listing.", "c2lnLWxpc3Q="),
                            call("call_a", "list_dir", json!({"path": "."})),
                            call("call_b", "read_file", json!({"path": "CMakeLists.txt"})),
                        ]),
                        Message::new(
                            Role::User,
                            vec![
                                result("call_a", "main.cpp\nCMakeLists.txt", false),
                                result("call_b", "project(demo)", false),
                            ],
                        ),
                        Message::assistant("There are two files: main.cpp and CMakeLists.txt."),
                    ],
                    Some(420),
                ),
                (
                    Finished,
                    vec![Message::user("Good."), Message::assistant("Glad to help.")],
                    None,
                ),
            ],
            vec!["file_edit", "system"],
        ),
        _ => (
            vec![
                (
                    Finished,
                    vec![
                        Message::user("What is RAII?"),
                        Message::assistant(
                            "Resource Acquisition Is Initialization: a resource lives as long \
                             as the object that owns it.",
                        ),
                    ],
                    None,
                ),
                (
                    Finished,
                    vec![
                        Message::user("An example?"),
                        Message::assistant("std::lock_guard releases its mutex in its destructor."),
                    ],
                    None,
                ),
            ],
            vec![],
        ),
    }
}

#[tokio::test]
async fn qodeassist_histories_of_every_version_import_as_well_formed_turns() {
    for file in ["chat_0.4.json", LEGACY_0_2, "chat_0.1.json"] {
        let (_dir, store) = store();
        let imported = import_file(&store, &data(file), None, Some(Path::new("/src/demo")))
            .await
            .unwrap();
        let (turns, note_kinds) = expected(file);
        assert!(imported.source.starts_with("QodeAssist 0."), "{file}");
        assert_eq!(imported.turns, turns.len(), "{file}");
        assert_eq!(
            imported.notes.len(),
            note_kinds.len(),
            "{file}: {:?}",
            imported.notes
        );
        for (note, kind) in imported.notes.iter().zip(note_kinds) {
            assert!(note.contains(kind), "{file}: {note} should be about {kind}");
        }
        let info = store.session(&imported.id).await.unwrap();
        assert_eq!(info.project_dir.as_deref(), Some("/src/demo"), "{file}");
        let saved = humantime::parse_rfc3339("2025-03-04T10:20:00Z").unwrap();
        let stored = store.turns(&imported.id).await.unwrap();
        if file == LEGACY_0_2 {
            assert_eq!(
                info.created_at, 1_741_083_600_000,
                "{file}: saved at, from the name"
            );
            assert!(
                stored.iter().all(|t| t.record.started_at == saved),
                "{file}"
            );
        } else {
            assert!(
                stored.iter().all(|t| t.record.started_at > saved),
                "{file}: import time"
            );
        }
        assert_eq!(stored.len(), turns.len(), "{file}");
        for (at, (turn, (status, messages, input))) in stored.iter().zip(turns).enumerate() {
            let record = &turn.record;
            let got: Vec<Message> = std::iter::once(record.user.clone())
                .chain(record.replies.iter().cloned())
                .collect();
            assert_eq!(got, messages, "{file} turn {at}");
            assert_eq!(record.status, status, "{file} turn {at}");
            assert_eq!(record.usage.input_tokens, input, "{file} turn {at}");
        }
    }
}

#[tokio::test]
async fn a_bad_file_is_refused_naming_the_file_and_the_problem() {
    let qore = |turns: serde_json::Value| {
        json!({"format": "qore-session", "version": 1, "session": {"id": "x",
            "created_at": "2026-01-02T03:04:05.000Z", "updated_at": "2026-01-02T03:04:05.000Z"},
            "turns": turns})
        .to_string()
    };
    let turn = |messages: serde_json::Value, started: &str| {
        json!([{"seq": 1, "status": "finished", "started_at": started,
            "finished_at": "2026-01-02T03:04:05.000Z", "messages": messages}])
    };
    let user = json!({"role": "user", "blocks": [{"type": "text", "text": "hi"}]});
    let open_call = json!({"role": "assistant", "blocks": [{"type": "tool_use", "id": "c",
        "name": "read_file", "input": {}}]});
    let qa =
        |messages: serde_json::Value| json!({"version": "0.4", "messages": messages}).to_string();
    let cases: Vec<(&str, String, &str)> = vec![
        ("empty", String::new(), "not JSON"),
        ("cut", "{\"version\": \"0.4\", \"mess".into(), "not JSON"),
        ("an array", "[1, 2]".into(), "not a JSON object"),
        ("unrelated", "{\"hello\": 1}".into(), "neither a qore session export"),
        ("other format", "{\"format\": \"llm-log\"}".into(), "unknown \"format\""),
        ("qore v2", "{\"format\": \"qore-session\", \"version\": 2}".into(), "version 2 is not supported"),
        ("qore no turns", "{\"format\": \"qore-session\", \"version\": 1, \"session\": {\"id\": \"x\", \"created_at\": \"2026-01-02T03:04:05Z\", \"updated_at\": \"2026-01-02T03:04:05Z\"}}".into(), "missing field `turns`"),
        ("qore empty turn", qore(turn(json!([]), "2026-01-02T03:04:05Z")), "turns[0]: a turn has no messages"),
        ("qore bad time", qore(turn(json!([user]), "yesterday")), "turns[0].started_at"),
        ("qore bad role", qore(turn(json!([{"role": "robot", "blocks": []}]), "2026-01-02T03:04:05Z")), "turns[0].messages[0].role"),
        ("qore open call", qore(turn(json!([user, open_call]), "2026-01-02T03:04:05Z")), "tool call 'c' has no result"),
        ("qodeassist 0.3", "{\"version\": \"0.3\", \"messages\": []}".into(), "version '0.3' is not supported"),
        ("version number", "{\"version\": 0.4, \"messages\": []}".into(), "\"version\" must be a string, found 0.4"),
        ("messages object", "{\"version\": \"0.4\", \"messages\": {}}".into(), "\"messages\" must be an array"),
        ("message string", qa(json!(["hi"])), "messages[0] must be an object, found \"hi\""),
        ("bad role", qa(json!([{"role": "robot", "blocks": []}])), "messages[0].role must be"),
        ("no blocks", qa(json!([{"role": "user"}])), "messages[0].blocks must be an array"),
        ("block without type", qa(json!([{"role": "user", "blocks": [{"text": "x"}]}])), "messages[0].blocks[0] has no \"type\""),
        ("text not a string", qa(json!([{"role": "user", "blocks": [{"type": "text", "text": 5}]}])), "messages[0].blocks[0].text must be a string, found 5"),
        ("call without name", qa(json!([{"role": "assistant", "blocks": [{"type": "tool_call", "id": "c"}]}])), "messages[0].blocks[0] has no \"name\""),
        ("arguments a number", qa(json!([{"role": "assistant", "blocks": [{"type": "tool_call", "id": "c", "name": "n", "arguments": 3}]}])), "arguments must be an object or a string"),
        ("usage text", qa(json!([{"role": "assistant", "blocks": [], "usage": {"promptTokens": "many"}}])), "messages[0].usage.promptTokens must be a whole number"),
        ("legacy role", "{\"version\": \"0.2\", \"messages\": [{\"role\": 9}]}".into(), "messages[0].role must be a number from 0 to 5, found 9"),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, text, reason) in cases {
        let (_db, store) = store();
        let path = dir.path().join(format!("{}.json", name.replace(' ', "_")));
        std::fs::write(&path, text).unwrap();
        match import_file(&store, &path, None, None).await {
            Err(e @ TranscriptError::Invalid { .. }) => {
                let message = e.to_string();
                assert!(
                    message.starts_with(&format!("{}: ", path.display())),
                    "{name}: {message}"
                );
                assert!(message.contains(reason), "{name}: {message}");
            }
            other => panic!("{name}: expected a refusal, got {other:?}"),
        }
        assert!(
            store.list_sessions(None).await.unwrap().is_empty(),
            "{name}: nothing is written"
        );
    }
    let (_db, store) = store();
    let missing = dir.path().join("missing.json");
    let error = import_file(&store, &missing, None, None).await.unwrap_err();
    assert!(matches!(error, TranscriptError::Read { .. }), "{error:?}");
    assert!(error.to_string().contains("missing.json"), "{error}");
}
