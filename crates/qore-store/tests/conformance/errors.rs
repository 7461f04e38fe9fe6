//! Failures keep their kinds on every backend: the same call gives the same [`StoreError`]
//! variant (with the same key in it), and none of them is "unavailable".

use std::sync::Arc;

use qore_store::{NewKey, NewResponse, NewSession, SessionImport, Store, StoreError, TurnId};

use crate::common::{hash, new_key, tool_turn, usage_row};

type Kind = fn(&StoreError) -> bool;

pub async fn every_error_keeps_its_kind(store: Arc<dyn Store>) {
    let named = |name: &str| NewSession {
        name: Some(name.into()),
        ..NewSession::default()
    };
    let a = store.create_session(&named("taken")).await.unwrap();
    let b = store.create_session(&NewSession::default()).await.unwrap();
    let turn = store.append_turn(&a, &tool_turn(1, 1)).await.unwrap();
    store.create_key(&new_key("k1", 1)).await.unwrap();
    store.create_key(&new_key("k2", 2)).await.unwrap();
    let response = |id: &'static str, turn: TurnId| NewResponse {
        id,
        key_id: "",
        session_id: None,
        turn_id: Some(turn),
        pending: None,
        object: "{}",
    };
    store
        .put_response(&NewResponse {
            session_id: Some(&a),
            ..response("resp_1", turn)
        })
        .await
        .unwrap();
    let mut malformed = tool_turn(2, 1);
    malformed.replies.truncate(1);
    let import = SessionImport {
        session: named("taken"),
        title: None,
        created_at: None,
        turns: Vec::new(),
    };
    let common: String = (a.chars().zip(b.chars()))
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect();

    // (what was done, what it gave, the kind it must be)
    let cases: Vec<(&str, Result<(), StoreError>, Kind)> = vec![
        (
            "session",
            store.session("zzz").await.map(drop),
            |e| matches!(e, StoreError::NotFound(k) if k == "zzz"),
        ),
        (
            "history",
            store.history("zzz").await.map(drop),
            |e| matches!(e, StoreError::NotFound(k) if k == "zzz"),
        ),
        ("turns", store.turns("zzz").await.map(drop), |e| {
            matches!(e, StoreError::NotFound(_))
        }),
        (
            "append to none",
            store.append_turn("zzz", &tool_turn(1, 1)).await.map(drop),
            |e| matches!(e, StoreError::NotFound(k) if k == "zzz"),
        ),
        ("rename none", store.rename("zzz", "x").await, |e| {
            matches!(e, StoreError::NotFound(_))
        }),
        ("remove none", store.remove("zzz").await, |e| {
            matches!(e, StoreError::NotFound(_))
        }),
        (
            "undoable of none",
            store.last_undoable_turn("zzz").await.map(drop),
            |e| matches!(e, StoreError::NotFound(_)),
        ),
        (
            "ambiguous session",
            store.session(&common).await.map(drop),
            |e| matches!(e, StoreError::Ambiguous { candidates, .. } if candidates.len() == 2),
        ),
        (
            "name taken",
            store.rename(&b, "taken").await,
            |e| matches!(e, StoreError::NameTaken(n) if n == "taken"),
        ),
        (
            "name taken on create",
            store.create_session(&named("taken")).await.map(drop),
            |e| matches!(e, StoreError::NameTaken(n) if n == "taken"),
        ),
        (
            "name taken on import",
            store.import_session(&import).await.map(drop),
            |e| matches!(e, StoreError::NameTaken(n) if n == "taken"),
        ),
        ("empty name", store.rename(&b, " ").await, |e| {
            matches!(e, StoreError::EmptyName)
        }),
        (
            "empty name on create",
            store.create_session(&named("")).await.map(drop),
            |e| matches!(e, StoreError::EmptyName),
        ),
        (
            "undo no turn",
            store.mark_undone(TurnId(123_456)).await,
            |e| matches!(e, StoreError::NoSuchTurn(123_456)),
        ),
        (
            "malformed",
            store.append_turn(&b, &malformed).await.map(drop),
            |e| matches!(e, StoreError::MalformedTurn(_)),
        ),
        (
            "key name taken",
            store.create_key(&new_key("k1", 3)).await.map(drop),
            |e| matches!(e, StoreError::KeyNameTaken(n) if n == "k1"),
        ),
        (
            "invalid key",
            (store.create_key(&NewKey {
                hash: "xyz".into(),
                ..new_key("k3", 3)
            }))
            .await
            .map(drop),
            |e| matches!(e, StoreError::InvalidKey(_)),
        ),
        (
            "same hash",
            store.create_key(&new_key("k4", 1)).await.map(drop),
            |e| matches!(e, StoreError::InvalidKey(_)),
        ),
        (
            "no such key",
            store.key("nope").await.map(drop),
            |e| matches!(e, StoreError::NoSuchKey(k) if k == "nope"),
        ),
        (
            "revoke none",
            store.revoke_key("nope").await.map(drop),
            |e| matches!(e, StoreError::NoSuchKey(_)),
        ),
        (
            "ambiguous key",
            store.key("0").await.map(drop),
            |e| matches!(e, StoreError::Ambiguous { candidates, .. } if candidates.len() == 2),
        ),
        (
            "bad day",
            store
                .record_usage(&[usage_row("2025-02-30x", "k", 1)])
                .await,
            |e| matches!(e, StoreError::BadDay(d) if d == "2025-02-30x"),
        ),
        (
            "bad since",
            store.usage(None, Some("today")).await.map(drop),
            |e| matches!(e, StoreError::BadDay(_)),
        ),
        (
            "response taken",
            (store.put_response(&NewResponse {
                session_id: Some(&a),
                ..response("resp_1", turn)
            }))
            .await
            .map(drop),
            |e| matches!(e, StoreError::ResponseTaken(r) if r == "resp_1"),
        ),
        (
            "response of another session's turn",
            (store.put_response(&NewResponse {
                session_id: Some(&b),
                ..response("resp_2", turn)
            }))
            .await
            .map(drop),
            |e| matches!(e, StoreError::NoSuchTurn(_)),
        ),
    ];
    for (what, result, kind) in cases {
        match result {
            Err(e) => {
                assert!(kind(&e), "{what}: the wrong kind: {e:?}");
                assert!(!e.is_unavailable(), "{what}: {e}");
                assert!(!e.to_string().is_empty());
            }
            Ok(()) => panic!("{what}: expected an error"),
        }
    }
    // Nothing of the refused calls was written.
    assert_eq!(store.session_ids().await.unwrap().len(), 2);
    assert_eq!(store.keys().await.unwrap().len(), 2);
    assert!(store.key_by_hash(&hash(3)).await.unwrap().is_none());
    assert!(store.usage(None, None).await.unwrap().is_empty());
}
