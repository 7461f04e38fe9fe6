//! Sessions: a multi-turn session round trips through a second handle, listings are newest
//! write first (per project too) with strictly increasing `updated_at`, renaming refuses a
//! taken or empty name, removing deletes the session with everything of it, a compressed
//! session links to its original until that is removed, and the store answers a ping.

use std::path::Path;
use std::sync::Arc;

use qore_core::Message;
use qore_store::{NewSession, SessionInfo, Store, StoreError};

use crate::common::{stored_messages, tool_turn};

fn ids(list: Vec<SessionInfo>) -> Vec<String> {
    list.into_iter().map(|s| s.id).collect()
}

fn in_dir(dir: &str) -> NewSession {
    NewSession {
        project_dir: Some(dir.into()),
        ..NewSession::default()
    }
}

pub async fn a_multi_turn_session_with_tools_round_trips(store: Arc<dyn Store>) {
    let new = NewSession {
        project_dir: Some("/src/app".into()),
        agent: Some("coder".into()),
        model: Some("m-1".into()),
        ..NewSession::default()
    };
    let id = store.create_session(&new).await.unwrap();
    assert_eq!(id, id.to_lowercase(), "ids are lowercase");
    assert_eq!(id.len(), 26, "a ULID");
    let turns: Vec<_> = (1..=3).map(|n| tool_turn(n, 10)).collect();
    for turn in &turns {
        store.append_turn(&id, turn).await.unwrap();
    }
    // Another handle on the same store reads what this one wrote.
    let other = crate::conformance::open(&store.location()).await;
    let expected: Vec<Message> = turns.iter().flat_map(stored_messages).collect();
    assert_eq!(other.history(&id).await.unwrap().messages(), &expected[..]);
    let info = other.session(&id).await.unwrap();
    assert_eq!(info.title.as_deref(), Some("question 1"));
    assert_eq!(info.project_dir.as_deref(), Some("/src/app"));
    assert_eq!(
        (info.agent.as_deref(), info.model.as_deref()),
        (Some("coder"), Some("m-1"))
    );
    assert_eq!((info.turn_count, info.message_count), (3, 12));
    assert_eq!(info.last_usage, Some(turns[2].usage));
    assert!(info.created_at <= info.updated_at);
    assert_eq!(other.turn_ids(&id).await.unwrap().len(), 3);
}

pub async fn sessions_list_newest_write_first_per_project(store: Arc<dyn Store>) {
    let a = store.create_session(&in_dir("/p")).await.unwrap();
    let b = store.create_session(&in_dir("/q")).await.unwrap();
    let c = store.create_session(&in_dir("/p")).await.unwrap();
    store.append_turn(&a, &tool_turn(1, 1)).await.unwrap();
    assert_eq!(
        ids(store.list_sessions(None).await.unwrap()),
        [a.clone(), c.clone(), b.clone()]
    );
    assert_eq!(
        ids(store.list_sessions(Some(Path::new("/p"))).await.unwrap()),
        [a.clone(), c.clone()]
    );
    let latest = store.latest_for_project(Path::new("/q")).await.unwrap();
    assert_eq!(latest.map(|s| s.id), Some(b.clone()));
    let latest = store.latest_for_project(Path::new("/p")).await.unwrap();
    assert_eq!(latest.map(|s| s.id), Some(a.clone()));
    assert!(store
        .latest_for_project(Path::new("/r"))
        .await
        .unwrap()
        .is_none());
    let listed = store.list_sessions(None).await.unwrap();
    assert_eq!((listed[0].turn_count, listed[1].turn_count), (1, 0));
    assert_eq!(listed[1].last_usage, None);
    let mut all = vec![a, b, c];
    all.sort();
    assert_eq!(store.session_ids().await.unwrap(), all, "in id order");
}

pub async fn updated_at_strictly_increases_across_the_store(store: Arc<dyn Store>) {
    // Many writes within the same milliseconds, from two handles: still a total order.
    let other = crate::conformance::open(&store.location()).await;
    let mut sessions = Vec::new();
    for n in 0..6 {
        let writer = if n % 2 == 0 { &store } else { &other };
        sessions.push(writer.create_session(&in_dir("/p")).await.unwrap());
    }
    for (n, id) in sessions.iter().enumerate().rev() {
        let writer = if n % 2 == 0 { &store } else { &other };
        writer.append_turn(id, &tool_turn(1, 1)).await.unwrap();
    }
    let listed = store.list_sessions(None).await.unwrap();
    let times: Vec<i64> = listed.iter().map(|s| s.updated_at).collect();
    assert!(
        times.windows(2).all(|w| w[0] > w[1]),
        "strictly decreasing newest first: {times:?}"
    );
    // Appended last to first, so the first session lists first.
    assert_eq!(ids(listed), sessions);
}

pub async fn rename_refuses_a_taken_name_and_remove_deletes_everything(store: Arc<dyn Store>) {
    let a = store.create_session(&NewSession::default()).await.unwrap();
    let b = store.create_session(&NewSession::default()).await.unwrap();
    let turn = store.append_turn(&a, &tool_turn(1, 1)).await.unwrap();
    store.rename(&a, " first ").await.unwrap();
    assert_eq!(
        store.session(&a).await.unwrap().name.as_deref(),
        Some("first")
    );
    assert!(
        matches!(store.rename(&b, "first").await, Err(StoreError::NameTaken(n)) if n == "first")
    );
    assert!(matches!(
        store.rename(&b, "  ").await,
        Err(StoreError::EmptyName)
    ));
    store.rename("first", "renamed").await.unwrap();
    assert_eq!(store.session("renamed").await.unwrap().id, a);
    store.remove("renamed").await.unwrap();
    assert!(matches!(
        store.session(&a).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.history(&a).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.turns(&a).await,
        Err(StoreError::NotFound(_))
    ));
    assert_eq!(store.turn_ids(&a).await.unwrap(), Vec::new());
    // Its turn went with it.
    assert!(matches!(
        store.mark_undone(turn).await,
        Err(StoreError::NoSuchTurn(_))
    ));
    assert!(matches!(
        store.remove(&a).await,
        Err(StoreError::NotFound(_))
    ));
    assert_eq!(ids(store.list_sessions(None).await.unwrap()), [b]);
}

pub async fn a_compressed_session_links_to_its_original_until_that_is_removed(
    store: Arc<dyn Store>,
) {
    let named = |name: &str| NewSession {
        name: Some(name.into()),
        ..NewSession::default()
    };
    let original = store.create_session(&named("long")).await.unwrap();
    let summary = NewSession {
        parent_id: Some(original.clone()),
        ..NewSession::default()
    };
    let compressed = store.create_session(&summary).await.unwrap();
    assert_eq!(
        store.session(&compressed).await.unwrap().parent_id,
        Some(original.clone())
    );
    let orphan = NewSession {
        parent_id: Some("gone".into()),
        ..NewSession::default()
    };
    assert!(
        matches!(store.create_session(&orphan).await, Err(StoreError::NotFound(p)) if p == "gone")
    );
    assert!(matches!(
        store.create_session(&named("long")).await,
        Err(StoreError::NameTaken(_))
    ));
    store.remove(&original).await.unwrap();
    assert_eq!(store.session(&compressed).await.unwrap().parent_id, None);
}

pub async fn ping_answers(store: Arc<dyn Store>) {
    store.ping().await.unwrap();
    assert!(!store.location().is_empty());
    let other = crate::conformance::open(&store.location()).await;
    other.ping().await.unwrap();
}
