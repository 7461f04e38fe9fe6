//! File changes: written with their turn, read back (sorted by path, bytes as they were)
//! for the last turn not undone, refused whole when malformed, removed with their session.

use std::sync::Arc;

use qore_store::{NewSession, Store, StoreError};

use crate::common::{change, tool_turn};

pub async fn changes_come_back_with_the_last_turn_not_undone(store: Arc<dyn Store>) {
    let id = store.create_session(&NewSession::default()).await.unwrap();
    assert_eq!(store.last_undoable_turn(&id).await.unwrap(), None);
    let mut first = tool_turn(1, 1);
    first.file_changes = vec![change("src/a.rs", Some(b"fn a() {}\n"), Some("h1"), true)];
    let first_id = store.append_turn(&id, &first).await.unwrap();
    let mut second = tool_turn(2, 1);
    second.file_changes = vec![
        change("z/new.txt", None, Some("h2"), true),
        change("bin\u{e9}.dat", Some(&[0, 159, 146, 150]), Some("h3"), true),
        change("huge.log", None, Some("h4"), false),
        change("gone.txt", Some(b""), None, true),
    ];
    let second_id = store.append_turn(&id, &second).await.unwrap();

    let other = crate::conformance::open(&store.location()).await;
    let last = other.last_undoable_turn(&id).await.unwrap().unwrap();
    assert_eq!((last.id, last.seq), (second_id, 2));
    let mut sorted = second.file_changes.clone();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(last.file_changes, sorted);
    assert_eq!(last.messages.len(), 4);
    assert_eq!(last.messages[0], second.user);
    assert_eq!(
        other.turns(&id).await.unwrap()[1].record.file_changes,
        sorted
    );
    other.mark_undone(second_id).await.unwrap();
    let last = other.last_undoable_turn(&id).await.unwrap().unwrap();
    assert_eq!((last.id, last.file_changes), (first_id, first.file_changes));
    other.mark_undone(first_id).await.unwrap();
    assert_eq!(other.last_undoable_turn(&id).await.unwrap(), None);
    assert!(matches!(
        other.last_undoable_turn("no-such").await,
        Err(StoreError::NotFound(_))
    ));

    store.remove(&id).await.unwrap();
    assert!(matches!(
        store.last_undoable_turn(&id).await,
        Err(StoreError::NotFound(_))
    ));
}

pub async fn a_turn_with_a_bad_change_is_refused_whole(store: Arc<dyn Store>) {
    let id = store.create_session(&NewSession::default()).await.unwrap();
    // (changes, the words of the refusal)
    let cases = [
        (
            vec![
                change("a.txt", None, Some("h"), true),
                change("a.txt", Some(b"x"), Some("h"), true),
            ],
            "`a.txt` is given twice",
        ),
        (
            vec![change("/etc/passwd", None, Some("h"), true)],
            "not a path relative",
        ),
        (vec![change("", None, None, true)], "not a path relative"),
        (
            vec![change("big.bin", Some(b"x"), Some("h"), false)],
            "not restorable but has its prior content",
        ),
    ];
    for (changes, words) in cases {
        let mut turn = tool_turn(1, 1);
        turn.file_changes = changes;
        match store.append_turn(&id, &turn).await {
            Err(StoreError::MalformedTurn(why)) => assert!(why.contains(words), "{why}"),
            other => panic!("{words}: expected a refusal, got {other:?}"),
        }
    }
    assert_eq!(store.last_undoable_turn(&id).await.unwrap(), None);
    assert!(store.history(&id).await.unwrap().is_empty());
}
