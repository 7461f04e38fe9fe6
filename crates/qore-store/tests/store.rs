//! The store against real SQLite files: round trip, lookup, listing, renaming, removal,
//! undo, refused turns, and migrating a database that predates qore's schema.

mod common;

use std::path::Path;

use common::{stored_messages, tool_turn};
use qore_core::{ContentBlock, Message, Role, ToolResultPart};
use qore_store::{NewSession, Store, StoreError, TurnStatus, SCHEMA_VERSION};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("nested/qore.db")).unwrap();
    (dir, store)
}

#[test]
fn a_multi_turn_session_with_tools_round_trips() {
    let (dir, mut store) = store();
    let new = NewSession {
        project_dir: Some("/src/app".into()),
        agent: Some("coder".into()),
        model: Some("m-1".into()),
        ..NewSession::default()
    };
    let id = store.create_session(&new).unwrap();
    let turns: Vec<_> = (1..=3).map(|n| tool_turn(n, 10)).collect();
    for turn in &turns {
        store.append_turn(&id, turn).unwrap();
    }
    drop(store);
    let store = Store::open(dir.path().join("nested/qore.db")).unwrap();
    let expected: Vec<Message> = turns.iter().flat_map(stored_messages).collect();
    assert_eq!(store.history(&id).unwrap().messages(), &expected[..]);
    let info = store.session(&id).unwrap();
    assert_eq!(info.title.as_deref(), Some("question 1"));
    assert_eq!(info.project_dir.as_deref(), Some("/src/app"));
    assert_eq!(info.turn_count, 3);
    assert_eq!(info.last_usage, Some(turns[2].usage));
    let conn = rusqlite::Connection::open(dir.path().join("nested/qore.db")).unwrap();
    let json: String = conn
        .query_row(
            "SELECT m.content FROM messages m JOIN turns t ON t.id = m.turn_id
             WHERE t.session_id = ?1 AND t.seq = 1 AND m.seq = 2 AND m.role = 'assistant'",
            [&id],
            |row| row.get(0),
        )
        .unwrap();
    assert!(json.contains(r#""type":"tool_use""#), "{json}");
    // The query the crate doc gives as an example.
    let mut prompts = conn
        .prepare(
            "SELECT json_extract(content, '$.blocks[0].text') FROM messages m JOIN turns t ON
             t.id = m.turn_id JOIN sessions s ON s.id = t.session_id WHERE m.seq = 1 AND
             s.project_dir = '/src/app' ORDER BY t.seq",
        )
        .unwrap();
    let prompts: Vec<String> = (prompts.query_map([], |row| row.get(0)).unwrap())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        prompts,
        turns.iter().map(|t| t.user.text()).collect::<Vec<_>>()
    );
}

#[test]
fn sessions_are_found_by_id_name_or_unique_prefix() {
    let (_dir, mut store) = store();
    let ids: Vec<String> = (0..3)
        .map(|_| store.create_session(&NewSession::default()).unwrap())
        .collect();
    store.rename(&ids[1], "work").unwrap();
    // ULIDs made in the same run share their time prefix: the first characters are ambiguous.
    let common: String = ids[0].chars().take(4).collect();
    let shared_by_all = ids.iter().all(|id| id.starts_with(&common));
    for id in &ids {
        assert_eq!(&store.session(id).unwrap().id, id);
        assert_eq!(&store.session(&id.to_uppercase()).unwrap().id, id);
    }
    assert_eq!(store.session("work").unwrap().id, ids[1]);
    if shared_by_all {
        match store.session(&common) {
            Err(StoreError::Ambiguous { candidates, .. }) => assert_eq!(candidates.len(), 3),
            other => panic!("expected an ambiguous prefix, got {other:?}"),
        }
    }
    let unique = (10..=26)
        .map(|len| &ids[2][..len])
        .find(|p| ids.iter().filter(|id| id.starts_with(p)).count() == 1)
        .unwrap();
    assert_eq!(store.session(unique).unwrap().id, ids[2]);
    for missing in ["", "zzzz", "nope"] {
        assert!(matches!(
            store.session(missing),
            Err(StoreError::NotFound(_))
        ));
    }
}

#[test]
fn sessions_list_newest_write_first_per_project() {
    let (_dir, mut store) = store();
    let in_dir = |dir: &str| NewSession {
        project_dir: Some(dir.into()),
        ..NewSession::default()
    };
    let a = store.create_session(&in_dir("/p")).unwrap();
    let b = store.create_session(&in_dir("/q")).unwrap();
    let c = store.create_session(&in_dir("/p")).unwrap();
    store.append_turn(&a, &tool_turn(1, 1)).unwrap();
    let ids =
        |list: Vec<qore_store::SessionInfo>| list.into_iter().map(|s| s.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.list_sessions(None).unwrap()),
        [a.clone(), c.clone(), b.clone()]
    );
    assert_eq!(
        ids(store.list_sessions(Some(Path::new("/p"))).unwrap()),
        [a.clone(), c.clone()]
    );
    assert_eq!(
        store
            .latest_for_project(Path::new("/q"))
            .unwrap()
            .unwrap()
            .id,
        b
    );
    assert!(store.latest_for_project(Path::new("/r")).unwrap().is_none());
    let listed = store.list_sessions(None).unwrap();
    assert_eq!((listed[0].turn_count, listed[1].turn_count), (1, 0));
    assert_eq!(listed[1].last_usage, None);
}

#[test]
fn rename_refuses_a_taken_name_and_remove_deletes_everything() {
    let (dir, mut store) = store();
    let a = store.create_session(&NewSession::default()).unwrap();
    let b = store.create_session(&NewSession::default()).unwrap();
    store.append_turn(&a, &tool_turn(1, 1)).unwrap();
    store.rename(&a, " first ").unwrap();
    assert!(matches!(store.rename(&b, "first"), Err(StoreError::NameTaken(n)) if n == "first"));
    assert!(matches!(store.rename(&b, "  "), Err(StoreError::EmptyName)));
    store.rename("first", "renamed").unwrap();
    assert_eq!(store.session("renamed").unwrap().id, a);
    store.remove("renamed").unwrap();
    assert!(matches!(store.session(&a), Err(StoreError::NotFound(_))));
    assert!(matches!(store.history(&a), Err(StoreError::NotFound(_))));
    let conn = rusqlite::Connection::open(dir.path().join("nested/qore.db")).unwrap();
    let left: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM turns) + (SELECT count(*) FROM messages)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0);
}

#[test]
fn an_undone_turn_stays_stored_but_leaves_the_history() {
    let (_dir, mut store) = store();
    let id = store.create_session(&NewSession::default()).unwrap();
    let first = tool_turn(1, 1);
    store.append_turn(&id, &first).unwrap();
    let second = store.append_turn(&id, &tool_turn(2, 1)).unwrap();
    store.mark_undone(second).unwrap();
    assert_eq!(
        store.history(&id).unwrap().messages(),
        &stored_messages(&first)[..]
    );
    assert_eq!(store.session(&id).unwrap().turn_count, 2);
    assert!(matches!(
        store.mark_undone(qore_store::TurnId(999)),
        Err(StoreError::NoSuchTurn(999))
    ));
}

#[test]
fn a_failed_or_cancelled_turn_is_kept_without_its_partial_answer() {
    let (_dir, mut store) = store();
    let id = store.create_session(&NewSession::default()).unwrap();
    for status in [TurnStatus::Failed, TurnStatus::Cancelled] {
        let mut turn = tool_turn(1, 1);
        turn.status = status;
        turn.replies[2] = Message::assistant("half an ans");
        store.append_turn(&id, &turn).unwrap();
    }
    let history = store.history(&id).unwrap();
    assert_eq!(history.len(), 6);
    assert!(history.iter().all(|m| m.text() != "half an ans"));
}

fn result(id: &str) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.into(),
        content: vec![ToolResultPart::Text { text: "ok".into() }],
        is_error: false,
    }
}

#[test]
fn a_malformed_turn_is_refused_and_nothing_is_written() {
    type Break = fn(&mut qore_store::TurnRecord);
    let cases: [(&str, Break, &str); 7] = [
        ("no result", |t| t.replies.truncate(1), "has no result"),
        (
            "stray result",
            |t| t.replies[1].blocks.push(result("other")),
            "answers no open call",
        ),
        (
            "system reply",
            |t| t.replies[2].role = Role::System,
            "system message",
        ),
        (
            "opens as assistant",
            |t| t.user.role = Role::Assistant,
            "open with a user message",
        ),
        (
            "text among results",
            |t| t.replies[1].blocks.push(ContentBlock::text("x")),
            "mixes",
        ),
        (
            "ends on results",
            |t| {
                t.replies.pop();
            },
            "must end with an assistant",
        ),
        (
            "partial keeps a call open",
            |t| {
                t.status = TurnStatus::Cancelled;
                t.replies.remove(1);
            },
            "has no result",
        ),
    ];
    let (_dir, mut store) = store();
    let id = store.create_session(&NewSession::default()).unwrap();
    for (name, break_turn, reason) in cases {
        let mut turn = tool_turn(1, 1);
        break_turn(&mut turn);
        match store.append_turn(&id, &turn) {
            Err(StoreError::MalformedTurn(why)) => assert!(why.contains(reason), "{name}: {why}"),
            other => panic!("{name}: expected a refusal, got {other:?}"),
        }
    }
    assert!(store.history(&id).unwrap().is_empty());
    assert_eq!(store.session(&id).unwrap().title, None);
    assert!(matches!(
        store.append_turn("no-such", &tool_turn(1, 1)),
        Err(StoreError::NotFound(_))
    ));
}

#[test]
fn a_database_at_user_version_0_is_migrated_and_keeps_its_tables() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let old = rusqlite::Connection::open(&path).unwrap();
    old.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('kept');")
        .unwrap();
    drop(old);
    let mut store = Store::open(&path).unwrap();
    let id = store.create_session(&NewSession::default()).unwrap();
    store.append_turn(&id, &tool_turn(1, 1)).unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(qore_store::schema_version(&conn).unwrap(), SCHEMA_VERSION);
    let note: String = conn
        .query_row("SELECT body FROM notes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(note, "kept");
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    // Opening again at the latest version changes nothing.
    Store::open(&path).unwrap();
}

#[test]
fn a_database_from_a_newer_qore_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let error = Store::open(&path).err().unwrap();
    assert!(matches!(error, StoreError::Migration { .. }), "{error}");
}

#[test]
fn the_default_location_follows_qore_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var("QORE_DATA_DIR", dir.path().join("data"));
    let store = Store::open_default().unwrap();
    assert_eq!(store.path(), dir.path().join("data/qore.db"));
    assert!(store.path().exists());
}

#[test]
fn a_compressed_session_links_to_its_original_until_that_is_removed() {
    let (_dir, mut store) = store();
    let named = |name: &str| NewSession {
        name: Some(name.into()),
        ..NewSession::default()
    };
    let original = store.create_session(&named("long")).unwrap();
    let summary = NewSession {
        parent_id: Some(original.clone()),
        ..NewSession::default()
    };
    let compressed = store.create_session(&summary).unwrap();
    assert_eq!(
        store.session(&compressed).unwrap().parent_id,
        Some(original.clone())
    );
    let orphan = NewSession {
        parent_id: Some("gone".into()),
        ..NewSession::default()
    };
    assert!(matches!(store.create_session(&orphan), Err(StoreError::NotFound(p)) if p == "gone"));
    assert!(matches!(
        store.create_session(&named("long")),
        Err(StoreError::NameTaken(_))
    ));
    store.remove(&original).unwrap();
    assert_eq!(store.session(&compressed).unwrap().parent_id, None);
}
