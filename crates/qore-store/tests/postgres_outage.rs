//! A PostgreSQL server that goes away: every call is `Unavailable` with one line that names
//! the store without its password, no call hangs, and once the server is back the SAME
//! `PgStore` works again by itself. A server that keeps its connections open and answers
//! nothing (frozen) is the same: each call is `Unavailable` within `call_timeout`. This
//! binary stops and freezes its own servers, so it has them to itself.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use qore_store::{LimitCheck, NewSession, PgStore, Store, StoreError};
use qore_testkit::postgres::TestPostgres;

/// A test's guard against a hang (never a timing assertion: it only stops a stuck test).
async fn bounded<T>(what: &str, work: impl Future<Output = T>) -> T {
    match tokio::time::timeout(Duration::from_secs(60), work).await {
        Ok(done) => done,
        Err(_) => panic!("{what} hung"),
    }
}

type Call<'a> = Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>>;

/// One call of each kind: reads, one-statement writes, pipelined transactions.
fn calls<'a>(store: &'a PgStore, session: &'a str) -> Vec<(&'static str, Call<'a>)> {
    let check = LimitCheck {
        key_id: "k1".into(),
        rpm: Some(5),
        tpm: None,
        budget_tokens: None,
        estimate: 0,
    };
    let row = common::usage_row("2025-01-01", "k1", 3);
    vec![
        ("ping", Box::pin(store.ping())),
        (
            "session",
            Box::pin(async move { store.session(session).await.map(drop) }),
        ),
        (
            "turns",
            Box::pin(async move { store.turns(session).await.map(drop) }),
        ),
        (
            "create_session",
            Box::pin(async move { store.create_session(&NewSession::default()).await.map(drop) }),
        ),
        (
            "append_turn",
            Box::pin(async move {
                store
                    .append_turn(session, &common::tool_turn(2, 10))
                    .await
                    .map(drop)
            }),
        ),
        (
            "admit",
            Box::pin(async move { store.admit(&check).await.map(drop) }),
        ),
        (
            "record_usage",
            Box::pin(async move { store.record_usage(&[row]).await }),
        ),
    ]
}

/// A store on `server` (with a password, which no message may show, and `params`), its URL,
/// and a session of one turn.
async fn store_with_a_turn(server: &TestPostgres, params: &str) -> (PgStore, String, String) {
    let url = server.url().replacen("qore@", "qore:sekrit@", 1) + params;
    let store = PgStore::connect(&url).await.unwrap();
    let session = store.create_session(&NewSession::default()).await.unwrap();
    store
        .append_turn(&session, &common::tool_turn(1, 10))
        .await
        .unwrap();
    (store, url, session)
}

/// Every call works again, and the session has its two turns (the one before, and the one
/// `calls` appended now).
async fn every_call_works(store: &PgStore, session: &str, after: &str) {
    for (name, call) in calls(store, session) {
        bounded(name, call)
            .await
            .unwrap_or_else(|e| panic!("{name} after {after}: {e}"));
    }
    let turns = store.turns(session).await.unwrap();
    assert_eq!(turns.iter().map(|t| t.seq).collect::<Vec<_>>(), [1, 2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_server_is_unavailable_and_the_same_store_recovers_after_restart() {
    let server = TestPostgres::start().expect("a PostgreSQL server");
    let (store, url, session) =
        store_with_a_turn(&server, "?connect_timeout=2&pool_timeout=2").await;

    server.stop().unwrap();
    for (name, call) in calls(&store, &session) {
        match bounded(name, call).await {
            Err(StoreError::Unavailable(why)) => {
                assert!(!why.contains("sekrit"), "{name}: {why}");
                assert!(!why.contains('\n'), "{name}: {why}");
                assert!(why.contains("127.0.0.1"), "{name}: {why}");
            }
            other => panic!("{name} on a stopped server: {other:?}"),
        }
    }
    match bounded("connecting", PgStore::connect(&url)).await {
        Err(StoreError::Unavailable(_)) => {}
        other => panic!("connecting to a stopped server: {other:?}"),
    }

    server.restart().unwrap();
    every_call_works(&store, &session, "the restart").await;
}

/// Thaws the server when dropped, so a failing test never leaves it frozen.
struct Frozen<'a>(&'a TestPostgres);

impl Drop for Frozen<'_> {
    fn drop(&mut self) {
        let _ = self.0.thaw();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_is_unavailable_within_the_call_timeout_and_recovers() {
    let server = TestPostgres::start().expect("a PostgreSQL server");
    // Connecting gives up first (2 s), so a call that needs a new connection says why; a call
    // on an open connection can only be cut by call_timeout (3 s).
    let params = "?connect_timeout=2&pool_timeout=2&call_timeout=3";
    let (store, _, session) = store_with_a_turn(&server, params).await;
    store.ping().await.unwrap(); // opens the watch connection

    server.freeze().unwrap();
    let frozen = Frozen(&server);
    let mut unanswered = Vec::new();
    for (name, call) in calls(&store, &session) {
        match bounded(name, call).await {
            Err(StoreError::Unavailable(why)) => {
                assert!(!why.contains("sekrit"), "{name}: {why}");
                assert!(!why.contains('\n'), "{name}: {why}");
                if why.contains("no answer from the database within 3s") {
                    unanswered.push(name);
                }
            }
            other => panic!("{name} on a frozen server: {other:?}"),
        }
    }
    // The reads run on the connections opened before the freeze (the transactions after
    // them close theirs, and new ones are refused by the connect timeout).
    assert!(
        unanswered.starts_with(&["ping", "session", "turns"]),
        "{unanswered:?}"
    );
    drop(frozen);
    every_call_works(&store, &session, "the thaw").await;
}
