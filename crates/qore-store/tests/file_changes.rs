//! File changes against a real SQLite file: written with their turn, read back for the last
//! turn not undone, refused whole when malformed, removed with their session.

mod common;

use common::tool_turn;
use qore_store::{FileChange, NewSession, Store, StoreError};

fn change(path: &str, before: Option<&[u8]>, after: Option<&str>, restorable: bool) -> FileChange {
    FileChange {
        path: path.into(),
        before: before.map(<[u8]>::to_vec),
        after_hash: after.map(str::to_owned),
        restorable,
    }
}

#[test]
fn changes_come_back_with_the_last_turn_not_undone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qore.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.create_session(&NewSession::default()).unwrap();
    assert_eq!(store.last_undoable_turn(&id).unwrap(), None);
    let mut first = tool_turn(1, 1);
    first.file_changes = vec![change("src/a.rs", Some(b"fn a() {}\n"), Some("h1"), true)];
    let first_id = store.append_turn(&id, &first).unwrap();
    let mut second = tool_turn(2, 1);
    second.file_changes = vec![
        change("z/new.txt", None, Some("h2"), true),
        change("bin\u{e9}.dat", Some(&[0, 159, 146, 150]), Some("h3"), true),
        change("huge.log", None, Some("h4"), false),
    ];
    let second_id = store.append_turn(&id, &second).unwrap();
    drop(store);

    let mut store = Store::open(&path).unwrap();
    let last = store.last_undoable_turn(&id).unwrap().unwrap();
    assert_eq!((last.id, last.seq), (second_id, 2));
    let mut sorted = second.file_changes.clone();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(last.file_changes, sorted);
    assert_eq!(last.messages.len(), 4);
    assert_eq!(last.messages[0], second.user);
    store.mark_undone(second_id).unwrap();
    let last = store.last_undoable_turn(&id).unwrap().unwrap();
    assert_eq!((last.id, last.file_changes), (first_id, first.file_changes));
    store.mark_undone(first_id).unwrap();
    assert_eq!(store.last_undoable_turn(&id).unwrap(), None);
    assert!(matches!(
        store.last_undoable_turn("no-such"),
        Err(StoreError::NotFound(_))
    ));

    store.remove(&id).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let left: i64 = conn
        .query_row("SELECT count(*) FROM file_changes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 0);
}

#[test]
fn a_turn_with_a_bad_change_is_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path().join("qore.db")).unwrap();
    let id = store.create_session(&NewSession::default()).unwrap();
    let mut turn = tool_turn(1, 1);
    turn.file_changes = vec![
        change("a.txt", None, Some("h"), true),
        change("a.txt", Some(b"x"), Some("h"), true),
    ];
    match store.append_turn(&id, &turn) {
        Err(StoreError::MalformedTurn(why)) => assert!(why.contains("`a.txt`"), "{why}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(store.last_undoable_turn(&id).unwrap(), None);
    assert!(store.history(&id).unwrap().is_empty());
}
