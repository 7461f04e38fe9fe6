//! PostgreSQL stopped under requests: every request of a key with limits is answered (never a
//! hang) with 503 and `Retry-After` in the caller's dialect, `/readyz` is 503, store errors
//! are counted; once PostgreSQL is back the same servers answer 200 again by themselves. This
//! binary has its own PostgreSQL server (it is stopped), shared with no other test.

mod fleet;

use std::time::Duration;

use fleet::{add_key, chat, messages, Fleet};
use qore_testkit::postgres::TestPostgres;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_store_is_503_in_each_dialect_and_the_servers_recover_by_themselves() {
    let pg = TestPostgres::start().unwrap_or_else(|e| panic!("PostgreSQL: {e}"));
    let url = pg.fresh_database().expect("a fresh database");
    let fleet = Fleet::start(&url, 3).await;
    let key = add_key(&*fleet.stores[0], "limited", |k| k.rpm = Some(1000)).await;
    let responses = json!({"model": "up/m", "input": "hi", "store": false});
    for n in 0..3 {
        let answer = fleet
            .post(n, "/v1/chat/completions", &key, &chat("hi"))
            .await;
        assert_eq!(answer.status, 200, "server {n}: {answer:?}");
        assert_eq!(fleet.get(n, "/readyz", None).await.status, 200);
    }
    pg.stop().expect("PostgreSQL stops");
    // (path, body, the error's type: OpenAI's envelope, or Anthropic's on /v1/messages)
    let cases = [
        ("/v1/chat/completions", chat("hi"), "server_error"),
        ("/v1/messages", messages("hi"), "overloaded_error"),
        ("/v1/responses", responses.clone(), "server_error"),
    ];
    for n in 0..3 {
        for (path, body, kind) in &cases {
            let answer = fleet.post(n, path, &key, body).await;
            assert_eq!(answer.status, 503, "server {n} {path}: {answer:?}");
            let seconds: u64 = (answer.retry_after.as_deref())
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("server {n} {path}: no Retry-After: {answer:?}"));
            assert!((1..=5).contains(&seconds), "{answer:?}");
            assert_eq!(
                answer.body["error"]["type"], *kind,
                "server {n} {path}: {answer:?}"
            );
            if *path == "/v1/messages" {
                assert_eq!(answer.body["type"], "error", "{answer:?}");
            }
            let message = answer.body["error"]["message"].as_str().unwrap_or_default();
            assert!(!message.contains("postgres://"), "{message}");
        }
        let ready = fleet.get(n, "/readyz", None).await;
        assert_eq!(ready.status, 503, "server {n}: {ready:?}");
    }
    let metrics = fleet.metrics(0).await;
    let counted = (metrics.lines())
        .find_map(|l| l.strip_prefix("qore_store_errors_total{kind=\"unavailable\"} "))
        .and_then(|n| n.trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    assert!(counted >= 1.0, "{metrics}");
    assert!(
        metrics.contains("qore_store_statements_total "),
        "{metrics}"
    );
    assert!(
        metrics.contains("qore_store_transactions_total "),
        "{metrics}"
    );
    pg.restart().expect("PostgreSQL starts again");
    for n in 0..3 {
        let deadline = tokio::time::Instant::now() + fleet::WITHIN;
        loop {
            let ready = fleet.get(n, "/readyz", None).await;
            let answer = fleet
                .post(n, "/v1/chat/completions", &key, &chat("hi"))
                .await;
            if ready.status == 200 && answer.status == 200 {
                break;
            }
            assert!(
                [200, 503].contains(&answer.status) && [200, 503].contains(&ready.status),
                "server {n}: {ready:?} {answer:?}"
            );
            assert!(
                tokio::time::Instant::now() < deadline,
                "server {n} never recovered: {ready:?} {answer:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    fleet.stop().await;
}
