//! Importing a whole session at once: it keeps its turns, their times and undone flags and
//! the creation time it is given, drops a parent that is not there, and a session with one
//! bad turn (or a taken name) writes nothing.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use qore_core::Message;
use qore_store::{ImportTurn, NewSession, SessionImport, Store, StoreError, TurnStatus};

use crate::common::{stored_messages, tool_rounds_turn, tool_turn};

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

pub async fn an_imported_session_keeps_its_turns_times_and_undone_flags(store: Arc<dyn Store>) {
    let older = store.create_session(&NewSession::default()).await.unwrap();
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
    let id = store
        .import_session(&import_of(turns.clone()))
        .await
        .unwrap();
    let info = store.session("imported").await.unwrap();
    assert_eq!(info.id, id);
    assert_eq!(info.created_at, 1_600_000_000_123);
    assert_eq!(info.parent_id, None, "a parent that is not here is dropped");
    assert_eq!(info.title.as_deref(), Some("question 1"));
    assert_eq!(info.project_dir.as_deref(), Some("/src/app"));
    assert_eq!((info.turn_count, info.message_count), (3, 6 + 3 + 4));
    // The latest reported usage of a turn that is not undone.
    assert_eq!(info.last_usage.and_then(|u| u.input_tokens), Some(102));
    // Written now: it lists as the newest.
    let listed = store.list_sessions(None).await.unwrap();
    assert_eq!(
        listed.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        [id.as_str(), older.as_str()]
    );
    let stored = store.turns(&id).await.unwrap();
    assert_eq!(stored.len(), 3);
    for ((at, turn), given) in stored.iter().enumerate().zip(&turns) {
        assert_eq!(turn.seq, at as i64 + 1);
        assert_eq!(turn.undone, given.undone);
        assert_eq!(turn.record, given.record, "turn {at}");
    }
    let history = store.history(&id).await.unwrap();
    let expected: Vec<Message> = turns[..2]
        .iter()
        .flat_map(|t| stored_messages(&t.record))
        .collect();
    assert_eq!(history.iter().cloned().collect::<Vec<_>>(), expected);
    // A parent that is there is kept, and a given title too.
    let child = SessionImport {
        session: NewSession {
            parent_id: Some(id.clone()),
            ..NewSession::default()
        },
        title: Some("given".into()),
        created_at: None,
        turns: Vec::new(),
    };
    let child = store.import_session(&child).await.unwrap();
    let info = store.session(&child).await.unwrap();
    assert_eq!(
        (info.parent_id, info.title.as_deref()),
        (Some(id), Some("given"))
    );
}

pub async fn an_import_with_one_bad_turn_writes_nothing(store: Arc<dyn Store>) {
    let mut bad = tool_turn(2, 1);
    bad.replies.truncate(1);
    let turns = [tool_turn(1, 1), bad]
        .into_iter()
        .map(|record| ImportTurn {
            record,
            undone: false,
        })
        .collect();
    match store.import_session(&import_of(turns)).await {
        Err(StoreError::MalformedTurn(why)) => assert!(why.contains("has no result"), "{why}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(store.list_sessions(None).await.unwrap().is_empty());
    store.import_session(&import_of(Vec::new())).await.unwrap();
    assert!(matches!(
        store.import_session(&import_of(Vec::new())).await,
        Err(StoreError::NameTaken(name)) if name == "imported"
    ));
    assert_eq!(store.session_ids().await.unwrap().len(), 1);
}
