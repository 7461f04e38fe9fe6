//! Reading whole turns back from a real SQLite file: each as the record it was appended
//! from, undone ones marked, a bad row named in the error.

mod common;

use common::tool_turn;
use qore_core::Message;
use qore_store::{NewSession, Store, StoreError, TurnRecord, TurnStatus};

#[test]
fn turns_come_back_as_they_were_appended() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qore.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.create_session(&NewSession::default()).unwrap();
    let failed = TurnRecord {
        status: TurnStatus::Failed,
        replies: Vec::new(),
        ..tool_turn(2, 5)
    };
    let cancelled = TurnRecord {
        status: TurnStatus::Cancelled,
        ..tool_turn(3, 5)
    };
    let appended = [tool_turn(1, 10), failed, cancelled];
    let mut ids = Vec::new();
    for turn in &appended {
        ids.push(store.append_turn(&id, turn).unwrap());
    }
    store.mark_undone(ids[0]).unwrap();
    drop(store);

    let store = Store::open(&path).unwrap();
    let turns = store.turns(&id).unwrap();
    assert_eq!(turns.len(), 3);
    // (stored turn, the record it must equal, undone)
    let mut cancelled_stored = appended[2].clone();
    cancelled_stored.replies.pop(); // its partial answer is never stored
    let expected = [
        (&appended[0], true),
        (&appended[1], false),
        (&cancelled_stored, false),
    ];
    for (n, (turn, (record, undone))) in turns.iter().zip(expected).enumerate() {
        assert_eq!(&turn.record, record, "turn {n}");
        assert_eq!(turn.undone, undone, "turn {n}");
        assert_eq!(turn.seq, n as i64 + 1);
        assert_eq!(turn.id, ids[n]);
    }
    let history: Vec<Message> = (turns.iter().filter(|t| !t.undone))
        .flat_map(|t| std::iter::once(t.record.user.clone()).chain(t.record.replies.clone()))
        .collect();
    assert_eq!(store.history(&id).unwrap().messages(), &history[..]);
}

#[test]
fn an_unknown_session_or_a_bad_row_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qore.db");
    let mut store = Store::open(&path).unwrap();
    assert!(matches!(store.turns("nope"), Err(StoreError::NotFound(_))));
    let id = store.create_session(&NewSession::default()).unwrap();
    assert_eq!(store.turns(&id).unwrap(), Vec::new());
    store.append_turn(&id, &tool_turn(1, 3)).unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE messages SET content = '{oops' WHERE seq = 2", [])
        .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    let error = store.turns(&id).unwrap_err();
    assert!(
        matches!(&error, StoreError::Corrupt { what, .. } if what.starts_with("message ")),
        "{error}"
    );
}
