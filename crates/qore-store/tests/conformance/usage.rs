//! Usage: rows add up per (day, key, model, agent), within one batch and across calls; a bad
//! day is refused and its whole batch writes nothing; rows are read by key and from a day on;
//! two handles adding at once from many tasks lose nothing.

use std::sync::Arc;

use qore_store::{Store, StoreError, UsageRow};

use crate::common::usage_row;

fn summary(rows: &[UsageRow]) -> Vec<(&str, &str, u64, u64, u64)> {
    (rows.iter())
        .map(|r| {
            let key = r.key_id.as_str();
            (r.day.as_str(), key, r.requests, r.tokens_in, r.tokens_out)
        })
        .collect()
}

pub async fn rows_add_up_per_day_key_model_and_agent(store: Arc<dyn Store>) {
    let row = usage_row;
    store
        .record_usage(&[row("2025-01-01", "k1", 10)])
        .await
        .unwrap();
    store
        .record_usage(&[row("2025-01-01", "k1", 5)])
        .await
        .unwrap();
    store
        .record_usage(&[row("2025-01-02", "k1", 1)])
        .await
        .unwrap();
    store
        .record_usage(&[row("2025-01-02", "", 7)])
        .await
        .unwrap();
    let other_model = UsageRow {
        model: "local/other".into(),
        agent: "coder".into(),
        errors: 1,
        ..row("2025-01-01", "k1", 3)
    };
    store
        .record_usage(std::slice::from_ref(&other_model))
        .await
        .unwrap();
    let k1 = store.usage(Some("k1"), None).await.unwrap();
    // By key, model, agent, then day.
    assert_eq!(
        summary(&k1),
        [
            ("2025-01-01", "k1", 2, 15, 4),
            ("2025-01-02", "k1", 1, 1, 2),
            ("2025-01-01", "k1", 1, 3, 2),
        ]
    );
    assert_eq!(k1[2], other_model);
    assert_eq!(
        summary(&store.usage(Some(""), None).await.unwrap()),
        [("2025-01-02", "", 1, 7, 2)]
    );
    assert_eq!(
        store.usage(None, Some("2025-01-02")).await.unwrap().len(),
        2
    );
    assert_eq!(store.usage(None, None).await.unwrap().len(), 4);
    assert_eq!(
        store.tokens_used("k1").await.unwrap(),
        15 + 4 + 3 + 2 + 1 + 2
    );
    assert_eq!(store.tokens_used("none").await.unwrap(), 0);
    assert!(matches!(
        store.usage(None, Some("yesterday")).await,
        Err(StoreError::BadDay(_))
    ));
    assert!(matches!(
        store.record_usage(&[row("1/1/2025", "k1", 1)]).await,
        Err(StoreError::BadDay(_))
    ));
}

pub async fn a_batch_adds_up_in_one_call(store: Arc<dyn Store>) {
    let row = usage_row;
    let batch = [
        row("2025-01-01", "k1", 10),
        row("2025-01-01", "k1", 5),
        row("2025-01-02", "k1", 1),
        row("2025-01-02", "", 7),
    ];
    store.record_usage(&batch).await.unwrap();
    store.record_usage(&[]).await.unwrap();
    assert_eq!(
        summary(&store.usage(None, None).await.unwrap()),
        [
            ("2025-01-02", "", 1, 7, 2),
            ("2025-01-01", "k1", 2, 15, 4),
            ("2025-01-02", "k1", 1, 1, 2),
        ]
    );
    // One bad day refuses the whole batch: nothing of it is added.
    let bad = [row("2025-01-01", "k1", 100), row("2025-13-01", "k1", 1)];
    assert!(matches!(
        store.record_usage(&bad).await,
        Err(StoreError::BadDay(day)) if day == "2025-13-01"
    ));
    assert_eq!(store.tokens_used("k1").await.unwrap(), 15 + 4 + 1 + 2);
}

pub async fn two_handles_adding_at_once_lose_nothing(store: Arc<dyn Store>) {
    let other = crate::conformance::open(&store.location()).await;
    let (tasks, calls) = (8, 5);
    let mut running = Vec::new();
    for task in 0..tasks {
        let handle = Arc::clone(if task % 2 == 0 { &store } else { &other });
        running.push(tokio::spawn(async move {
            for _ in 0..calls {
                let batch = [
                    usage_row("2025-06-01", "shared", 10),
                    usage_row("2025-06-01", "", 1),
                ];
                handle.record_usage(&batch).await.unwrap();
            }
        }));
    }
    for task in running {
        task.await.unwrap();
    }
    let n = tasks * calls;
    assert_eq!(
        summary(&other.usage(None, None).await.unwrap()),
        [
            ("2025-06-01", "", n, n, 2 * n),
            ("2025-06-01", "shared", n, 10 * n, 2 * n),
        ]
    );
    assert_eq!(store.tokens_used("shared").await.unwrap(), 12 * n);
}
