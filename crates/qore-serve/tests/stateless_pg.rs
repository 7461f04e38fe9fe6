//! Three servers on one PostgreSQL database, each with its own pool (as three processes
//! behind a load balancer): a key created on one works on all at once and its revocation
//! reaches all; `rpm` is one window; a stored conversation continues on another server; an
//! exhausted pool is a 503 with `Retry-After`, never a hang. One PostgreSQL server for this
//! binary, a fresh database per test.

mod fleet;

use std::sync::OnceLock;
use std::time::Duration;

use fleet::{add_key, chat, Fleet};
use qore_testkit::postgres::TestPostgres;

fn postgres() -> &'static TestPostgres {
    static PG: OnceLock<TestPostgres> = OnceLock::new();
    PG.get_or_init(|| TestPostgres::start().unwrap_or_else(|e| panic!("PostgreSQL: {e}")))
}

fn fresh() -> String {
    postgres().fresh_database().expect("a fresh database")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_shared_at_once_and_revocations_reach_every_server() {
    fleet::keys_are_shared_at_once_and_revocations_reach_every_server(&fresh()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpm_is_one_window_across_servers() {
    fleet::rpm_is_one_window_across_servers(&fresh()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_continue_on_another_server() {
    fleet::conversations_continue_on_another_server(&fresh()).await;
}

/// With one connection in the pool, held by a request blocked on a lock, the other requests
/// wait at most the pool's timeout and are 503 with `Retry-After`; once the lock goes,
/// requests are answered again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exhausted_pool_is_503_with_retry_after_never_a_hang() {
    let url = fresh();
    let database = url.rsplit('/').next().expect("a database name").to_owned();
    let fleet = Fleet::start(&format!("{url}?pool_max_size=1&pool_timeout=1"), 1).await;
    let key = add_key(&*fleet.stores[0], "limited", |k| k.rpm = Some(1000)).await;
    let warm = fleet
        .post(0, "/v1/chat/completions", &key, &chat("hi"))
        .await;
    assert_eq!(warm.status, 200, "{warm:?}");
    // Hold every table the limits touch for a while, from another session.
    let holder = {
        let database = database.clone();
        std::thread::spawn(move || {
            postgres().psql_in(
                &database,
                "BEGIN; LOCK TABLE rate_events, api_keys, usage IN ACCESS EXCLUSIVE MODE; \
                 SELECT pg_sleep(6); COMMIT;",
            )
        })
    };
    let deadline = tokio::time::Instant::now() + fleet::WITHIN;
    loop {
        let held = postgres()
            .psql_in(
                &database,
                "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
                 WHERE c.relname = 'rate_events' AND l.mode = 'AccessExclusiveLock' AND l.granted",
            )
            .expect("pg_locks");
        if held.trim() == "1" {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lock was never taken"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let body = chat("hi");
    let asks = (0..4).map(|_| fleet.post(0, "/v1/chat/completions", &key, &body));
    let answers = futures_util::future::join_all(asks).await;
    let unavailable = (answers.iter())
        .filter(|a| a.status == 503 && a.retry_after.is_some())
        .count();
    assert!(unavailable >= 3, "{answers:#?}");
    for answer in answers.iter().filter(|a| a.status == 503) {
        assert_eq!(answer.body["error"]["type"], "server_error", "{answer:?}");
    }
    holder
        .join()
        .expect("the holder ends")
        .expect("the lock was held");
    let deadline = tokio::time::Instant::now() + fleet::WITHIN;
    loop {
        let answer = fleet
            .post(0, "/v1/chat/completions", &key, &chat("hi"))
            .await;
        if answer.status == 200 {
            break;
        }
        assert_eq!(answer.status, 503, "{answer:?}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "never answered again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    fleet.stop().await;
}
