//! SQLite's versioned schema (`PRAGMA user_version`): a file of every older version (0, a
//! database qore never wrote; 1, before file changes; 2, before `qore serve`'s tables; 3,
//! before `rate_events`) is migrated on open, keeps what it had and takes every new kind of
//! row; a file from a newer qore is refused with a clear error.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{change, new_key, stored_messages, tool_turn, usage_row};
use qore_store::{LimitCheck, LimitVerdict, NewResponse, NewSession, Store, StoreError};
use qore_store::{SqliteStore, SCHEMA_VERSION};

async fn open(path: &Path) -> Arc<dyn Store> {
    qore_store::open(path.to_str().unwrap()).await.unwrap()
}

fn sql(path: &Path, batch: &str) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(batch).unwrap();
}

/// Everything a version 4 store holds can be written to the migrated file.
async fn write_every_kind(store: &dyn Store, session: &str) {
    let mut turn = tool_turn(2, 1);
    turn.file_changes = vec![change("a.txt", None, Some("h"), true)];
    let turn_id = store.append_turn(session, &turn).await.unwrap();
    let key = store.create_key(&new_key("ci", 1)).await.unwrap();
    store
        .record_usage(&[usage_row("2025-06-01", &key.id, 5)])
        .await
        .unwrap();
    let response = NewResponse {
        id: "resp_a",
        key_id: &key.id,
        session_id: Some(session),
        turn_id: Some(turn_id),
        pending: None,
        object: "{}",
    };
    store.put_response(&response).await.unwrap();
    let check = LimitCheck {
        key_id: key.id.clone(),
        rpm: Some(1),
        tpm: None,
        budget_tokens: None,
        estimate: 0,
    };
    let verdict = store.admit(&check).await.unwrap();
    assert!(
        matches!(verdict, LimitVerdict::Admitted { .. }),
        "{verdict:?}"
    );
    let last = store.last_undoable_turn(session).await.unwrap().unwrap();
    assert_eq!(last.file_changes.len(), 1);
}

#[tokio::test]
async fn a_file_of_every_older_version_is_migrated_and_keeps_its_sessions() {
    // (version, what that version's file lacks)
    let cases = [
        (
            1,
            "DROP TABLE request_log; DROP TABLE rate_events; DROP TABLE responses;
             DROP TABLE usage; DROP TABLE api_keys; DROP TABLE file_changes;",
        ),
        (
            2,
            "DROP TABLE request_log; DROP TABLE rate_events; DROP TABLE responses;
             DROP TABLE usage; DROP TABLE api_keys;",
        ),
        (
            3,
            "DROP TABLE request_log; DROP TABLE rate_events;
             ALTER TABLE api_keys DROP COLUMN changes;",
        ),
        (
            4,
            "DROP TABLE request_log; ALTER TABLE api_keys DROP COLUMN changes;",
        ),
        (5, "ALTER TABLE api_keys DROP COLUMN changes;"),
    ];
    assert_eq!(SCHEMA_VERSION, 6);
    for (version, lacks) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("qore.db");
        let store = open(&path).await;
        let named = NewSession {
            name: Some("kept".into()),
            ..NewSession::default()
        };
        let id = store.create_session(&named).await.unwrap();
        let turn = tool_turn(1, 10);
        store.append_turn(&id, &turn).await.unwrap();
        drop(store);
        // Make it the file that version left.
        sql(&path, &format!("{lacks} PRAGMA user_version = {version};"));

        let store = open(&path).await;
        assert_eq!(
            store.session("kept").await.unwrap().id,
            id,
            "version {version}"
        );
        assert_eq!(
            store.history(&id).await.unwrap().messages(),
            stored_messages(&turn)
        );
        write_every_kind(&*store, &id).await;
        drop(store);
        let conn = rusqlite::Connection::open(&path).unwrap();
        assert_eq!(qore_store::schema_version(&conn).unwrap(), SCHEMA_VERSION);
    }
}

#[tokio::test]
async fn a_database_at_user_version_0_is_migrated_and_keeps_its_tables() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    sql(
        &path,
        "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('kept');",
    );
    let store = open(&path).await;
    let id = store.create_session(&NewSession::default()).await.unwrap();
    write_every_kind(&*store, &id).await;
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
    SqliteStore::open(&path).unwrap();
    assert_eq!(qore_store::schema_version(&conn).unwrap(), SCHEMA_VERSION);
}

#[tokio::test]
async fn a_database_from_a_newer_qore_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    sql(&path, "PRAGMA user_version = 99;");
    let error = qore_store::open(path.to_str().unwrap())
        .await
        .err()
        .unwrap();
    assert!(matches!(error, StoreError::Migration { .. }), "{error}");
    assert!(error.to_string().contains("new.db"), "{error}");
}
