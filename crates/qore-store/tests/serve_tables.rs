//! `qore serve`'s tables (keys, usage, response ids) against real SQLite files: upgrading a
//! version 2 file keeps its sessions, two handles on one file see each other's keys and add
//! up each other's usage, and a revoked key is found as revoked.

mod common;

use common::{stored_messages, tool_turn};
use qore_store::{NewKey, NewSession, Store, UsageRow, SCHEMA_VERSION};

fn hash(n: u8) -> String {
    format!("{n:02x}").repeat(32)
}

fn key(name: &str, n: u8) -> NewKey {
    NewKey {
        name: name.into(),
        hash: hash(n),
        models: vec!["local/*".into()],
        tpm: Some(1000),
        ..NewKey::default()
    }
}

fn usage(key_id: &str, tokens_in: u64) -> UsageRow {
    UsageRow {
        day: "2025-06-01".into(),
        key_id: key_id.into(),
        model: "coder".into(),
        agent: "coder".into(),
        requests: 1,
        errors: 0,
        tokens_in,
        tokens_out: 1,
    }
}

#[test]
fn a_version_2_file_is_upgraded_and_keeps_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qore.db");
    let mut store = Store::open(&path).unwrap();
    let id = (store.create_session(&NewSession {
        name: Some("kept".into()),
        ..NewSession::default()
    }))
    .unwrap();
    let turn = tool_turn(1, 10);
    store.append_turn(&id, &turn).unwrap();
    drop(store);
    // Make it the file qore's schema 2 left: no serve tables, user_version 2.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP TABLE responses; DROP TABLE usage; DROP TABLE api_keys;
         PRAGMA user_version = 2;",
    )
    .unwrap();
    drop(conn);

    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.session("kept").unwrap().id, id);
    assert_eq!(
        store.history(&id).unwrap().messages(),
        stored_messages(&turn)
    );
    let created = store.create_key(&key("ci", 1)).unwrap();
    store.record_usage(&usage(&created.id, 5)).unwrap();
    let turn_id = store.append_turn(&id, &tool_turn(2, 1)).unwrap();
    store
        .put_response(&qore_store::NewResponse {
            id: "resp_a",
            key_id: &created.id,
            session_id: Some(&id),
            turn_id: Some(turn_id),
            pending: None,
            object: "{}",
        })
        .unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(qore_store::schema_version(&conn).unwrap(), SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION, 3);
}

#[test]
fn two_handles_on_one_file_see_each_others_keys_and_usage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qore.db");
    let server = Store::open(&path).unwrap();
    let cli = Store::open(&path).unwrap();
    let before = server.keys_version().unwrap();

    let created = cli.create_key(&key("alice", 1)).unwrap();
    let after_create = server.keys_version().unwrap();
    assert_ne!(before, after_create);
    let found = server.key_by_hash(&hash(1)).unwrap().unwrap();
    assert_eq!(found, created);
    assert!(!found.is_revoked());

    cli.revoke_key("alice").unwrap();
    assert_ne!(server.keys_version().unwrap(), after_create);
    let revoked = server.key_by_hash(&hash(1)).unwrap().unwrap();
    assert!(revoked.is_revoked(), "{revoked:?}");
    assert_eq!(server.keys().unwrap().len(), 1);

    server.record_usage(&usage(&created.id, 10)).unwrap();
    cli.record_usage(&usage(&created.id, 20)).unwrap();
    let rows = server.usage(Some(&created.id), None).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].requests, rows[0].tokens_in), (2, 30));
    assert_eq!(cli.tokens_used(&created.id).unwrap(), 32);
}

#[test]
fn a_duplicate_name_from_another_handle_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qore.db");
    let one = Store::open(&path).unwrap();
    let two = Store::open(&path).unwrap();
    one.create_key(&key("bob", 1)).unwrap();
    let why = two.create_key(&key("bob", 2)).unwrap_err().to_string();
    assert!(why.contains("'bob'"), "{why}");
}
