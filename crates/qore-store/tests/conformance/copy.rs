//! Copying between stores (`copy_session`, `copy_key`, `copy_usage`, `copy_response` and
//! `copy_store` over them), from a store of one backend to a fresh one of the same or another:
//! ids, names, times, `seq`s, undone flags, file changes, revocations and counts are kept; a
//! copied response names the copied turn; copying again copies nothing.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use qore_store::{
    copy_store, ImportTurn, NewKey, NewResponse, NewSession, ResponseCopy, SessionCopy,
    SessionImport, Store, TurnStatus,
};

use crate::common::{change, new_key, tool_rounds_turn, tool_turn, usage_row};

/// Write a bit of everything into `store`: sessions (a named one with file changes, a failed
/// and an undone turn; one compressed from it; an old import), keys (one revoked), usage rows
/// and responses (one naming a turn, one only pending).
async fn fill(store: &dyn Store) {
    let alice = store
        .create_key(&NewKey {
            rpm: Some(5),
            budget_tokens: Some(9_000),
            ..new_key("alice", 1)
        })
        .await
        .unwrap();
    store.create_key(&new_key("bob", 2)).await.unwrap();
    store.revoke_key("bob").await.unwrap();
    let main = NewSession {
        name: Some("main".into()),
        project_dir: Some("/src/app".into()),
        agent: Some("coder".into()),
        model: Some("m-1".into()),
        parent_id: None,
    };
    let main = store.create_session(&main).await.unwrap();
    let mut first = tool_turn(1, 5);
    first.file_changes = vec![
        change("src/a.rs", Some(b"fn a() {}\n"), Some("h1"), true),
        change("bin.dat", Some(&[0, 159, 146, 150]), None, true),
        change("huge.log", None, Some("h2"), false),
    ];
    let mut failed = tool_turn(2, 5);
    failed.status = TurnStatus::Failed;
    let mut turn_ids = Vec::new();
    for turn in [first, failed, tool_rounds_turn(3, 2, 5), tool_turn(4, 1)] {
        turn_ids.push(store.append_turn(&main, &turn).await.unwrap());
    }
    store.mark_undone(turn_ids[3]).await.unwrap();
    let compressed = NewSession {
        parent_id: Some(main.clone()),
        ..NewSession::default()
    };
    let compressed = store.create_session(&compressed).await.unwrap();
    store
        .append_turn(&compressed, &tool_turn(5, 1))
        .await
        .unwrap();
    let import = SessionImport {
        session: NewSession {
            name: Some("old".into()),
            ..NewSession::default()
        },
        title: Some("from before".into()),
        created_at: Some(UNIX_EPOCH + Duration::from_millis(1_500_000_000_007)),
        turns: vec![
            ImportTurn {
                record: tool_turn(6, 1),
                undone: true,
            },
            ImportTurn {
                record: tool_turn(7, 1),
                undone: false,
            },
        ],
    };
    store.import_session(&import).await.unwrap();
    store
        .record_usage(&[
            usage_row("2025-01-01", &alice.id, 10),
            usage_row("2025-01-02", &alice.id, 20),
            usage_row("2025-01-02", "", 30),
        ])
        .await
        .unwrap();
    for (id, turn) in [("resp_turn", Some(turn_ids[2])), ("resp_pending", None)] {
        let new = NewResponse {
            id,
            key_id: &alice.id,
            session_id: turn.map(|_| main.as_str()),
            turn_id: turn,
            pending: Some("[]"),
            object: "{\"id\":\"r\"}",
        };
        store.put_response(&new).await.unwrap();
    }
}

/// The responses of a store without their turn ids (which differ between stores).
async fn responses(store: &dyn Store) -> Vec<ResponseCopy> {
    let mut all = store.responses().await.unwrap();
    for copy in &mut all {
        copy.record.turn_id = None;
    }
    all
}

/// Everything `from` holds, `to` holds the same (turn ids apart).
async fn assert_same(from: &dyn Store, to: &dyn Store) {
    let listed = from.list_sessions(None).await.unwrap();
    assert_eq!(to.list_sessions(None).await.unwrap(), listed);
    assert_eq!(
        to.session_ids().await.unwrap(),
        from.session_ids().await.unwrap()
    );
    for info in &listed {
        let strip = |turns: Vec<qore_store::StoredTurn>| {
            (turns.into_iter())
                .map(|t| (t.seq, t.undone, t.record))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            strip(to.turns(&info.id).await.unwrap()),
            strip(from.turns(&info.id).await.unwrap()),
            "turns of {}",
            info.id
        );
        assert_eq!(
            to.history(&info.id).await.unwrap(),
            from.history(&info.id).await.unwrap()
        );
    }
    assert_eq!(to.keys().await.unwrap(), from.keys().await.unwrap());
    assert_eq!(
        to.usage(None, None).await.unwrap(),
        from.usage(None, None).await.unwrap()
    );
    assert_eq!(responses(to).await, responses(from).await);
}

pub async fn a_copied_session_keeps_ids_names_times_seqs_undone_and_changes(
    from: Arc<dyn Store>,
    to: Arc<dyn Store>,
) {
    fill(&*from).await;
    // In id order: the compressed session comes after its original.
    for id in from.session_ids().await.unwrap() {
        let copy = SessionCopy {
            info: from.session(&id).await.unwrap(),
            turns: from.turns(&id).await.unwrap(),
        };
        assert!(to.copy_session(&copy).await.unwrap(), "{id}");
        assert!(!to.copy_session(&copy).await.unwrap(), "{id} again");
        let copied = to.session(&id).await.unwrap();
        assert_eq!(copied, copy.info);
    }
    let listed = to.list_sessions(None).await.unwrap();
    assert_eq!(listed, from.list_sessions(None).await.unwrap());
    let main = to.session("main").await.unwrap();
    let turns = to.turns(&main.id).await.unwrap();
    let undone: Vec<(i64, bool)> = turns.iter().map(|t| (t.seq, t.undone)).collect();
    assert_eq!(undone, [(1, false), (2, false), (3, false), (4, true)]);
    assert_eq!(turns[0].record.file_changes.len(), 3);
    assert_eq!(turns[1].record.status, TurnStatus::Failed);
    let undoable = to.last_undoable_turn(&main.id).await.unwrap().unwrap();
    assert_eq!((undoable.id, undoable.seq), (turns[2].id, 3));
    // The copy goes on like the original: the next turn is the fifth.
    to.append_turn(&main.id, &tool_turn(8, 1)).await.unwrap();
    assert_eq!(to.turns(&main.id).await.unwrap()[4].seq, 5);
    let compressed = listed.iter().find(|s| s.parent_id.is_some()).unwrap();
    assert_eq!(compressed.parent_id.as_deref(), Some(main.id.as_str()));
}

pub async fn a_copied_key_keeps_its_revocation_and_usage_its_counts(
    from: Arc<dyn Store>,
    to: Arc<dyn Store>,
) {
    fill(&*from).await;
    let keys = from.keys().await.unwrap();
    assert_eq!(keys.iter().filter(|k| k.is_revoked()).count(), 1);
    for key in &keys {
        assert!(to.copy_key(key).await.unwrap(), "{}", key.name);
        assert!(!to.copy_key(key).await.unwrap(), "{} again", key.name);
    }
    assert_eq!(to.keys().await.unwrap(), keys);
    assert!(to.key("bob").await.unwrap().is_revoked());
    assert_eq!(
        to.key_by_hash(&keys[0].hash).await.unwrap().as_ref(),
        Some(&keys[0])
    );
    let rows = from.usage(None, None).await.unwrap();
    assert_eq!(rows.len(), 3);
    for row in &rows {
        assert!(to.copy_usage(row).await.unwrap(), "{row:?}");
        assert!(!to.copy_usage(row).await.unwrap(), "{row:?} again");
    }
    assert_eq!(to.usage(None, None).await.unwrap(), rows, "counted once");
    let alice = &keys[0].id;
    assert_eq!(
        to.tokens_used(alice).await.unwrap(),
        from.tokens_used(alice).await.unwrap()
    );
}

pub async fn a_copied_response_names_the_copied_turn(from: Arc<dyn Store>, to: Arc<dyn Store>) {
    fill(&*from).await;
    // The target already has turns of its own, so the copied turns get other ids.
    let own = to.create_session(&NewSession::default()).await.unwrap();
    for n in 1..=3 {
        to.append_turn(&own, &tool_turn(n, 1)).await.unwrap();
    }
    let main = from.session("main").await.unwrap();
    let copy = SessionCopy {
        info: main.clone(),
        turns: from.turns(&main.id).await.unwrap(),
    };
    assert!(to.copy_session(&copy).await.unwrap());
    let copied_turns = to.turn_ids(&main.id).await.unwrap();
    for response in from.responses().await.unwrap() {
        assert!(to.copy_response(&response).await.unwrap(), "{response:?}");
        assert!(!to.copy_response(&response).await.unwrap(), "again");
        let back = to.response(&response.record.id).await.unwrap().unwrap();
        let expected_turn = response.turn_seq.map(|seq| copied_turns[seq as usize - 1]);
        assert_eq!(back.turn_id, expected_turn, "{}", response.record.id);
        assert_eq!(
            (
                back.session_id,
                back.key_id,
                back.pending,
                back.object,
                back.created_at
            ),
            (
                response.record.session_id,
                response.record.key_id,
                response.record.pending,
                response.record.object,
                response.record.created_at
            )
        );
    }
    let named = to.response("resp_turn").await.unwrap().unwrap();
    assert_eq!(named.turn_id, Some(copied_turns[2]));
    assert_eq!(responses(&*to).await, responses(&*from).await);
}

pub async fn copy_store_copies_everything_once(from: Arc<dyn Store>, to: Arc<dyn Store>) {
    fill(&*from).await;
    let first = copy_store(&*from, &*to).await.unwrap();
    // (kind, copied the first time)
    let counts = [
        ("sessions", first.sessions, 3),
        ("turns", first.turns, 4 + 1 + 2),
        ("keys", first.keys, 2),
        ("usage rows", first.usage_rows, 3),
        ("responses", first.responses, 2),
    ];
    for (kind, counted, copied) in counts {
        assert_eq!(
            (counted.copied, counted.already_there),
            (copied, 0),
            "{kind}"
        );
    }
    assert!(
        first
            .to_string()
            .contains("sessions: 3 copied, 0 already there"),
        "{first}"
    );
    assert_same(&*from, &*to).await;

    let second = copy_store(&*from, &*to).await.unwrap();
    assert!(second.copied_nothing(), "{second}");
    assert_eq!(second.sessions.already_there, 3);
    assert_eq!(second.turns.already_there, 7);
    assert_eq!(second.keys.already_there, 2);
    assert_eq!(second.usage_rows.already_there, 3);
    assert_eq!(second.responses.already_there, 2);
    assert_same(&*from, &*to).await;
}
