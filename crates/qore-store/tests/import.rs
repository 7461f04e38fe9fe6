//! Reading whole turns back, writing a whole session at once (an import), listing counts and
//! the resolver's error words, against real SQLite files.

mod common;

use std::time::{Duration, UNIX_EPOCH};

use common::{stored_messages, tool_rounds_turn, tool_turn};
use qore_core::Message;
use qore_store::{ImportTurn, NewSession, SessionImport, Store, StoreError, TurnStatus};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("qore.db")).unwrap();
    (dir, store)
}

fn import_of(turns: Vec<ImportTurn>) -> SessionImport {
    SessionImport {
        session: NewSession {
            name: Some("imported".into()),
            project_dir: Some("/src/app".into()),
            agent: Some("coder".into()),
            model: Some("m-1".into()),
            parent_id: Some("not-here".into()),
        },
        title: None,
        created_at: Some(UNIX_EPOCH + Duration::from_millis(1_600_000_000_123)),
        turns,
    }
}

#[test]
fn an_imported_session_keeps_its_turns_times_and_undone_flags() {
    let (_dir, mut store) = store();
    let mut failed = tool_turn(2, 3);
    failed.status = TurnStatus::Failed;
    failed.replies.pop();
    let turns = vec![
        ImportTurn {
            record: tool_rounds_turn(1, 2, 5),
            undone: false,
        },
        ImportTurn {
            record: failed,
            undone: false,
        },
        ImportTurn {
            record: tool_turn(3, 1),
            undone: true,
        },
    ];
    let id = store.import_session(&import_of(turns.clone())).unwrap();
    let info = store.session("imported").unwrap();
    assert_eq!(info.id, id);
    assert_eq!(info.created_at, 1_600_000_000_123);
    assert_eq!(info.parent_id, None, "a parent that is not here is dropped");
    assert_eq!(info.title.as_deref(), Some("question 1"));
    assert_eq!((info.turn_count, info.message_count), (3, 6 + 3 + 4));
    // The latest reported usage of a turn that is not undone.
    assert_eq!(info.last_usage.and_then(|u| u.input_tokens), Some(102));
    let stored = store.turns(&id).unwrap();
    assert_eq!(stored.len(), 3);
    for ((at, turn), given) in stored.iter().enumerate().zip(&turns) {
        assert_eq!(turn.seq, at as i64 + 1);
        assert_eq!(turn.undone, given.undone);
        assert_eq!(turn.record, given.record, "turn {at}");
    }
    let history = store.history(&id).unwrap();
    let expected: Vec<Message> = turns[..2]
        .iter()
        .flat_map(|t| stored_messages(&t.record))
        .collect();
    assert_eq!(history.iter().cloned().collect::<Vec<_>>(), expected);
}

#[test]
fn an_import_with_one_bad_turn_writes_nothing() {
    let (_dir, mut store) = store();
    let mut bad = tool_turn(2, 1);
    bad.replies.truncate(1);
    let turns = [tool_turn(1, 1), bad]
        .into_iter()
        .map(|record| ImportTurn {
            record,
            undone: false,
        })
        .collect();
    match store.import_session(&import_of(turns)) {
        Err(StoreError::MalformedTurn(why)) => assert!(why.contains("has no result"), "{why}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(store.list_sessions(None).unwrap().is_empty());
    store.import_session(&import_of(Vec::new())).unwrap();
    assert!(matches!(
        store.import_session(&import_of(Vec::new())),
        Err(StoreError::NameTaken(name)) if name == "imported"
    ));
}

#[test]
fn the_resolver_says_no_such_session_or_lists_an_ambiguous_prefix() {
    let (_dir, mut store) = store();
    let mut ids: Vec<String> = (0..2)
        .map(|_| store.create_session(&NewSession::default()).unwrap())
        .collect();
    // Candidates are listed in id order; two ids of one millisecond differ in random bits.
    ids.sort();
    let common: String = (ids[0].chars().zip(ids[1].chars()))
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a)
        .collect();
    let cases = [
        ("zzz".to_owned(), "no such session: 'zzz'".to_owned()),
        (
            common.clone(),
            format!(
                "ambiguous prefix '{common}': matches {}, {}",
                ids[0], ids[1]
            ),
        ),
    ];
    for (key, message) in cases {
        match store.session(&key) {
            Err(e) => assert_eq!(e.to_string(), message),
            Ok(found) => panic!("{key}: found {}", found.id),
        }
    }
    assert!(matches!(store.turns("zzz"), Err(StoreError::NotFound(_))));
    for _ in 0..20 {
        store.create_session(&NewSession::default()).unwrap();
    }
    let all = store.session_ids().unwrap();
    assert_eq!(all.len(), 22);
    assert!(all.windows(2).all(|w| w[0] < w[1]), "in id order");
    // 22 sessions share the first character: 20 are listed, then "…".
    match store.session("0") {
        Err(StoreError::Ambiguous { candidates, .. }) => {
            assert_eq!(candidates.len(), 21);
            assert_eq!(candidates[..20], all[..20]);
            assert_eq!(candidates[20], "…");
        }
        other => panic!("expected an ambiguous prefix, got {other:?}"),
    }
}
