//! Durable before acknowledged, on a real PostgreSQL: while requests of every dialect,
//! streaming and not, each asking the server to keep its turn (`store: true`,
//! `x-qore-session`), are in flight on two servers (the upstream drips its answer, so many
//! are mid-answer at any moment), PostgreSQL is stopped and started again, then frozen
//! (SIGSTOP) and thawed. Afterwards every id a client was given resolves with a GET, every
//! session a client was told about holds its turn, and every request that was not
//! acknowledged was told so (a 503 with `Retry-After`, or the dialect's error event). During
//! the outage a stored id is 503, never 404; once back, a missing one is 404 as OpenAI
//! words it. This binary has its own PostgreSQL server.

mod durable;
mod fleet;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use durable::{check_kept, one, Dialect, Kept, Told, CASES};
use fleet::{add_key, chat, Fleet};
use qore_testkit::chat::chat_answer;
use qore_testkit::postgres::TestPostgres;
use serde_json::json;

/// How many clients send requests at once.
const CLIENTS: usize = 8;

async fn blocking(
    what: &'static str,
    pg: &Arc<TestPostgres>,
    f: fn(&TestPostgres) -> Result<(), String>,
) {
    let pg = pg.clone();
    let done = tokio::task::spawn_blocking(move || f(&pg)).await;
    done.expect("the pg.sh call")
        .unwrap_or_else(|e| panic!("PostgreSQL {what}: {e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nothing_acknowledged_is_lost_when_postgres_stops_freezes_and_returns() {
    let pg = Arc::new(TestPostgres::start().unwrap_or_else(|e| panic!("PostgreSQL: {e}")));
    // Short store bounds, so a frozen database is a 503 within seconds, not 30.
    let url = pg.fresh_database().expect("a fresh database")
        + "?call_timeout=2&pool_timeout=2&connect_timeout=2";
    let answer = chat_answer("kept answer").with_pace(Duration::from_millis(150));
    let fleet = Arc::new(Fleet::start_with(&url, 2, answer, |_| {}).await);
    let key = add_key(&*fleet.stores[0], "ledger", |_| {}).await;

    // One stored before anything goes wrong, to look up during the outage.
    let before = one(&fleet, 0, &key, Dialect::Responses, false, "before").await;
    let Told::Acknowledged(Kept::Response(before)) = before else {
        panic!("the first request: {before:?}");
    };

    let running = Arc::new(AtomicBool::new(true));
    let mut clients = Vec::new();
    for c in 0..CLIENTS {
        let (fleet, key, running) = (fleet.clone(), key.clone(), running.clone());
        clients.push(tokio::spawn(async move {
            let mut ledger = Vec::new();
            let mut i = 0;
            while running.load(Ordering::Relaxed) {
                let (dialect, stream) = CASES[(c + i) % CASES.len()];
                let tag = format!("{c}-{i}");
                let told = one(&fleet, (c + i) % 2, &key, dialect, stream, &tag).await;
                if !matches!(told, Told::Acknowledged(_)) {
                    // As a client honouring `Retry-After` would, only sooner.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                ledger.push((dialect, stream, told));
                i += 1;
            }
            ledger
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;

    blocking("stops", &pg, TestPostgres::stop).await;
    // The stored id is not lost, only out of reach: 503, never 404; the same for a
    // conversation continued from it.
    let during = fleet
        .get(0, &format!("/v1/responses/{before}"), Some(&key))
        .await;
    assert_eq!(during.status, 503, "{during:?}");
    assert!(during.retry_after.is_some(), "{during:?}");
    let next = json!({"model": "up/m", "input": "and?", "previous_response_id": before});
    let during = fleet.post(1, "/v1/responses", &key, &next).await;
    assert_eq!(during.status, 503, "{during:?}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // Ready means ready: the moment /readyz turns 200 (polled while PostgreSQL starts), a
    // keyed request is answered (a load balancer sends it there as soon as the probe passes).
    let probe = {
        let (fleet, key) = (fleet.clone(), key.clone());
        tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + fleet::WITHIN;
            while fleet.get(0, "/readyz", None).await.status != 200 {
                assert!(tokio::time::Instant::now() < deadline, "never ready again");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            fleet
                .post(0, "/v1/chat/completions", &key, &chat("hi"))
                .await
        })
    };
    blocking("starts", &pg, TestPostgres::restart).await;
    let at_once = probe.await.expect("the probe");
    assert_eq!(at_once.status, 200, "{at_once:?}");
    tokio::time::sleep(Duration::from_millis(2000)).await;

    blocking("freezes", &pg, TestPostgres::freeze).await;
    tokio::time::sleep(Duration::from_millis(3000)).await;
    blocking("thaws", &pg, TestPostgres::thaw).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    running.store(false, Ordering::Relaxed);

    let mut ledger = Vec::new();
    for client in clients {
        ledger.extend(client.await.expect("a client"));
    }
    let (mut acknowledged, mut refused, mut at_commit) = (0, 0, 0);
    let mut problems = Vec::new();
    for (dialect, stream, told) in &ledger {
        match told {
            Told::Acknowledged(kept) => {
                acknowledged += 1;
                for n in 0..2 {
                    if let Err(why) = check_kept(&fleet, n, &key, kept).await {
                        problems.push(format!("{dialect:?} stream={stream}: LOST {why}"));
                    }
                }
            }
            Told::Refused { message, .. } => {
                refused += 1;
                if message.contains("storing a response") || message.contains("keeping a turn") {
                    at_commit += 1;
                }
            }
            Told::Other(why) => problems.push(format!("{dialect:?} stream={stream}: {why}")),
        }
    }
    eprintln!(
        "requests {}, acknowledged {acknowledged}, refused {refused} (at the commit \
         {at_commit}), problems {}",
        ledger.len(),
        problems.len()
    );
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(acknowledged > 0 && refused > 0, "{acknowledged} {refused}");
    assert!(
        at_commit > 0,
        "no request was caught between its answer and its commit"
    );

    // Back: the id from before resolves; a missing one is 404 in OpenAI's words.
    check_kept(&fleet, 1, &key, &Kept::Response(before))
        .await
        .expect("kept");
    let missing = fleet.get(0, "/v1/responses/resp_missing", Some(&key)).await;
    assert_eq!(missing.status, 404, "{missing:?}");
    let expected = json!({"error": {"message": "Response with id 'resp_missing' not found.",
        "type": "invalid_request_error", "param": null, "code": null}});
    assert_eq!(missing.body, expected);
    match Arc::try_unwrap(fleet) {
        Ok(fleet) => fleet.stop().await,
        Err(_) => panic!("a client still holds the fleet"),
    }
}
