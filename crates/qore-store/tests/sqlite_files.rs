//! What only the SQLite backend promises, checked on real files: the file (and its missing
//! directories) is created in WAL mode with foreign keys on; rows are readable with plain SQL
//! (the crate doc's example query works); removing a session leaves no turn, message or file
//! change row; a row that does not decode is an error naming it; the default location follows
//! `QORE_DATA_DIR` and `QORE_STORE_URL`.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{change, tool_turn};
use qore_store::{NewSession, SqliteStore, Store, StoreError};

async fn open(path: &Path) -> Arc<dyn Store> {
    qore_store::open(path.to_str().unwrap()).await.unwrap()
}

fn count(path: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[tokio::test]
async fn a_new_file_is_wal_with_foreign_keys_in_a_created_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/deeper/qore.db");
    let store = open(&path).await;
    store.ping().await.unwrap();
    assert_eq!(store.location(), path.display().to_string());
    assert!(path.exists());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(
        qore_store::schema_version(&conn).unwrap(),
        qore_store::SCHEMA_VERSION
    );
    // Foreign keys are a per-connection setting: the store's own connection enforces them,
    // which shows as a refused orphan session.
    let orphan = NewSession {
        parent_id: Some("gone".into()),
        ..NewSession::default()
    };
    assert!(matches!(
        store.create_session(&orphan).await,
        Err(StoreError::NotFound(_))
    ));
}

#[tokio::test]
async fn stored_rows_are_readable_with_plain_sql() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qore.db");
    let store = open(&path).await;
    let new = NewSession {
        project_dir: Some("/src/app".into()),
        ..NewSession::default()
    };
    let id = store.create_session(&new).await.unwrap();
    let turns: Vec<_> = (1..=3).map(|n| tool_turn(n, 10)).collect();
    for turn in &turns {
        store.append_turn(&id, turn).await.unwrap();
    }
    let conn = rusqlite::Connection::open(&path).unwrap();
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

#[tokio::test]
async fn removing_a_session_leaves_no_row_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qore.db");
    let store = open(&path).await;
    let id = store.create_session(&NewSession::default()).await.unwrap();
    let mut turn = tool_turn(1, 1);
    turn.file_changes = vec![change("a.txt", Some(b"x"), Some("h"), true)];
    store.append_turn(&id, &turn).await.unwrap();
    let all = "SELECT (SELECT count(*) FROM turns) + (SELECT count(*) FROM messages)
               + (SELECT count(*) FROM file_changes)";
    assert_eq!(count(&path, all), 1 + 4 + 1);
    store.remove(&id).await.unwrap();
    assert_eq!(count(&path, all), 0);
}

#[tokio::test]
async fn a_row_that_does_not_decode_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qore.db");
    let store = open(&path).await;
    let id = store.create_session(&NewSession::default()).await.unwrap();
    store.append_turn(&id, &tool_turn(1, 3)).await.unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE messages SET content = '{oops' WHERE seq = 2", [])
        .unwrap();
    drop(conn);
    let store = open(&path).await;
    let error = store.turns(&id).await.unwrap_err();
    assert!(
        matches!(&error, StoreError::Corrupt { what, .. } if what.starts_with("message ")),
        "{error}"
    );
    let error = store.history(&id).await.unwrap_err();
    assert!(matches!(&error, StoreError::Corrupt { .. }), "{error}");
}

/// The only test of this binary that sets environment variables (they are process-wide).
#[tokio::test]
async fn the_default_location_follows_qore_data_dir_and_qore_store_url() {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var("QORE_DATA_DIR", dir.path().join("data"));
    std::env::remove_var(qore_store::STORE_URL_VAR);
    let store = SqliteStore::open_default().unwrap();
    assert_eq!(store.path(), dir.path().join("data/qore.db"));
    assert!(store.path().exists());
    let configured = qore_store::open_configured().await.unwrap();
    assert_eq!(configured.location(), store.location());
    let elsewhere = dir.path().join("elsewhere.db");
    std::env::set_var(qore_store::STORE_URL_VAR, &elsewhere);
    let configured = qore_store::open_configured().await.unwrap();
    assert_eq!(configured.location(), elsewhere.display().to_string());
    assert!(elsewhere.exists());
    std::env::remove_var(qore_store::STORE_URL_VAR);
}
