//! Stored responses: an id names a turn of its session until it is deleted or the session is
//! removed; an id is stored once; a turn of another session (or none) is refused; a response
//! before any whole turn keeps its pending messages.

use std::sync::Arc;

use qore_store::{NewResponse, NewSession, Store, StoreError, TurnId};

use crate::common::tool_turn;

fn new<'a>(id: &'a str, session: Option<&'a str>, turn: Option<TurnId>) -> NewResponse<'a> {
    NewResponse {
        id,
        key_id: "k1",
        session_id: session,
        turn_id: turn,
        pending: None,
        object: "{\"id\":1}",
    }
}

pub async fn a_response_names_a_turn_until_deleted_or_its_session_is_removed(
    store: Arc<dyn Store>,
) {
    let session = store.create_session(&NewSession::default()).await.unwrap();
    let other = store.create_session(&NewSession::default()).await.unwrap();
    let turn_id = store.append_turn(&session, &tool_turn(1, 1)).await.unwrap();
    let put = store
        .put_response(&new("resp_1", Some(&session), Some(turn_id)))
        .await
        .unwrap();
    assert_eq!(
        (put.session_id.as_deref(), put.turn_id, put.key_id.as_str()),
        (Some(session.as_str()), Some(turn_id), "k1")
    );
    assert_eq!(store.response("resp_1").await.unwrap(), Some(put));
    assert_eq!(store.response("resp_none").await.unwrap(), None);
    // (id, session, turn, the error's words)
    let refused = [
        ("resp_1", session.as_str(), turn_id, "already exists"),
        ("resp_2", other.as_str(), turn_id, "no turn"),
        ("resp_3", session.as_str(), TurnId(999_999), "no turn"),
    ];
    for (id, session, turn, words) in refused {
        let why = store
            .put_response(&new(id, Some(session), Some(turn)))
            .await
            .unwrap_err();
        assert!(why.to_string().contains(words), "{id}: {why}");
        let kind_ok = match words {
            "already exists" => matches!(why, StoreError::ResponseTaken(ref r) if r == id),
            _ => matches!(why, StoreError::NoSuchTurn(_)),
        };
        assert!(kind_ok, "{id}: {why:?}");
    }
    assert_eq!(store.response("resp_2").await.unwrap(), None);
    assert!(store.delete_response("resp_1").await.unwrap());
    assert!(!store.delete_response("resp_1").await.unwrap());
    assert_eq!(store.response("resp_1").await.unwrap(), None);
    store
        .put_response(&new("resp_4", Some(&session), Some(turn_id)))
        .await
        .unwrap();
    store.remove(&session).await.unwrap();
    assert_eq!(store.response("resp_4").await.unwrap(), None);
    assert!(store.responses().await.unwrap().is_empty());
}

pub async fn a_response_before_any_whole_turn_keeps_its_pending_messages(store: Arc<dyn Store>) {
    let pending = "[{\"role\":\"user\",\"blocks\":[]}]";
    let put = store
        .put_response(&NewResponse {
            pending: Some(pending),
            ..new("resp_p", None, None)
        })
        .await
        .unwrap();
    let back = store.response("resp_p").await.unwrap().unwrap();
    assert_eq!(back, put);
    assert_eq!(back.pending.as_deref(), Some(pending));
    assert_eq!(back.session_id, None);
    assert_eq!(back.object, "{\"id\":1}");
}
