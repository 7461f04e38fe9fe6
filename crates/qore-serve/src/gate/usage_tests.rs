//! The usage writer on a real store file: a full queue drops rows and counts them, rows not
//! written yet count per key, and a budget check counts them too.

use std::time::Duration;

use qore_store::{NewKey, SqliteStore};

use super::*;
use crate::gate::{hash_key, new_key, AuthMode, Gate};

fn row(key_id: &str, tokens_in: u64, tokens_out: u64) -> UsageRow {
    UsageRow {
        day: "2026-01-01".into(),
        key_id: key_id.into(),
        model: "m".into(),
        requests: 1,
        tokens_in,
        tokens_out,
        ..UsageRow::default()
    }
}

fn store() -> (tempfile::TempDir, Arc<dyn Store>) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path().join("q.db")).unwrap());
    (dir, store)
}

// One thread: the writer cannot run while the test records without awaiting, so a queue of
// `capacity` holds exactly that many rows.
#[tokio::test(flavor = "current_thread")]
async fn a_full_queue_drops_rows_and_counts_every_one() {
    // (queue capacity, rows recorded at once, rows written, rows dropped)
    let cases = [(1, 50, 1, 49), (10, 10, 10, 0), (4, 30, 4, 26)];
    for (capacity, sent, written, dropped) in cases {
        let (_dir, store) = store();
        let metrics = UsageMetrics::default();
        let queue = start_with(
            store.clone(),
            StoreErrors::default(),
            metrics.clone(),
            capacity,
        );
        for _ in 0..sent {
            queue.record(row("k", 1, 2));
        }
        assert_eq!(
            metrics.dropped_for("queue_full"),
            dropped,
            "{capacity}/{sent}"
        );
        assert_eq!(
            queue.unwritten.tokens("k"),
            3 * written,
            "{capacity}/{sent}"
        );
        assert!(queue.flush(Duration::from_secs(10)).await);
        let rows = store.usage(None, None).await.unwrap();
        let requests: u64 = rows.iter().map(|r| r.requests).sum();
        assert_eq!(requests, written, "{capacity}/{sent}: {rows:?}");
        assert_eq!(queue.unwritten.tokens("k"), 0, "{capacity}/{sent}");
        assert!(metrics.unwritten.get() == 0, "{capacity}/{sent}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn unwritten_tokens_count_per_key_until_written() {
    let (_dir, store) = store();
    let queue = start(store, StoreErrors::default(), UsageMetrics::default());
    queue.record(row("a", 10, 5));
    queue.record(row("a", 1, 1));
    queue.record(row("b", 7, 0));
    assert_eq!(
        [queue.unwritten.tokens("a"), queue.unwritten.tokens("b")],
        [17, 7]
    );
    assert_eq!(queue.unwritten.tokens("c"), 0);
    assert!(queue.flush(Duration::from_secs(10)).await);
    assert_eq!(
        [queue.unwritten.tokens("a"), queue.unwritten.tokens("b")],
        [0, 0]
    );
}

/// A budget is not passed by usage still in the batch: 900 of 1000 tokens used and not
/// written yet, a request of about 200 is refused at once (however soon it comes).
#[tokio::test(flavor = "current_thread")]
async fn a_budget_check_counts_usage_not_written_yet() {
    let (_dir, store) = store();
    let key = new_key().unwrap();
    let new = NewKey {
        name: "b".into(),
        hash: hash_key(&key),
        budget_tokens: Some(1000),
        ..NewKey::default()
    };
    store.create_key(&new).await.unwrap();
    let gate = Gate::start(store.clone(), AuthMode::Keys, StoreErrors::default()).await;
    let mut headers = axum::http::HeaderMap::new();
    headers.insert("x-api-key", key.parse().unwrap());
    let caller = gate.authenticate(&headers).await.unwrap();
    let used = qore_core::Usage {
        input_tokens: Some(600),
        output_tokens: Some(300),
        ..qore_core::Usage::default()
    };
    gate.record(&caller, "m", None, &used, false);
    let error = gate.admit(&caller, 200).await.unwrap_err();
    assert_eq!(error.status, 429, "{error:?}");
    assert!(error.message.contains("about 200"), "{}", error.message);
    assert!(gate.admit(&caller, 50).await.is_ok());
}
