//! Limits decided in the store ([`Store::admit`]): with `rpm = 10`, 30 requests at once from
//! several tasks on three handles admit exactly 10 (each seeing a different count left) and
//! refuse 20 with a retry time within the window; `tpm` counts the tokens `record_usage`
//! recorded for that key only; the budget is the key's lifetime usage; a key without limits
//! is always admitted.

use std::sync::Arc;

use qore_store::{LimitCheck, LimitVerdict, NewKey, Store};

use crate::common::{new_key, usage_row};

fn check(key_id: &str, key: &NewKey, estimate: u64) -> LimitCheck {
    LimitCheck {
        key_id: key_id.to_owned(),
        rpm: key.rpm,
        tpm: key.tpm,
        budget_tokens: key.budget_tokens,
        estimate,
    }
}

fn is_retry_in_window(verdict: &LimitVerdict) -> bool {
    match verdict {
        LimitVerdict::Requests { retry_after_ms } | LimitVerdict::Tokens { retry_after_ms } => {
            (1..=61_000).contains(retry_after_ms)
        }
        _ => false,
    }
}

pub async fn rpm_admits_exactly_the_limit_under_concurrency(store: Arc<dyn Store>) {
    let limits = NewKey {
        rpm: Some(10),
        tpm: None,
        ..new_key("busy", 1)
    };
    let key = store.create_key(&limits).await.unwrap();
    let handles = [
        Arc::clone(&store),
        crate::conformance::open(&store.location()).await,
        crate::conformance::open(&store.location()).await,
    ];
    let mut asking = Vec::new();
    for n in 0..30 {
        let handle = Arc::clone(&handles[n % handles.len()]);
        let check = check(&key.id, &limits, 0);
        asking.push(tokio::spawn(async move { handle.admit(&check).await }));
    }
    let mut verdicts = Vec::new();
    for task in asking {
        verdicts.push(task.await.unwrap().unwrap());
    }
    let mut left: Vec<u64> = (verdicts.iter())
        .filter_map(|v| match v {
            LimitVerdict::Admitted {
                requests_left: Some(left),
                tokens_left: None,
            } => Some(*left),
            _ => None,
        })
        .collect();
    left.sort_unstable();
    assert_eq!(left, (0..10).collect::<Vec<u64>>(), "{verdicts:?}");
    let refused: Vec<_> = (verdicts.iter())
        .filter(|v| !matches!(v, LimitVerdict::Admitted { .. }))
        .collect();
    assert_eq!(refused.len(), 20);
    for verdict in refused {
        assert!(
            matches!(verdict, LimitVerdict::Requests { .. }) && is_retry_in_window(verdict),
            "{verdict:?}"
        );
    }
    // Still full for this key; another key has its own window.
    let again = handles[1].admit(&check(&key.id, &limits, 0)).await.unwrap();
    assert!(matches!(again, LimitVerdict::Requests { .. }), "{again:?}");
    let other = store
        .create_key(&NewKey {
            rpm: Some(10),
            ..new_key("calm", 2)
        })
        .await
        .unwrap();
    let verdict = store.admit(&check(&other.id, &limits, 0)).await.unwrap();
    assert_eq!(
        verdict,
        LimitVerdict::Admitted {
            requests_left: Some(9),
            tokens_left: None
        }
    );
}

pub async fn tpm_counts_the_tokens_recorded_for_the_key(store: Arc<dyn Store>) {
    let limits = NewKey {
        tpm: Some(100),
        ..new_key("tokens", 1)
    };
    let key = store.create_key(&limits).await.unwrap();
    let other = store.create_key(&new_key("other", 2)).await.unwrap();
    // With no tokens in the window any one request passes, even one larger than the limit.
    assert_eq!(
        store.admit(&check(&key.id, &limits, 500)).await.unwrap(),
        LimitVerdict::Admitted {
            requests_left: None,
            tokens_left: Some(100)
        }
    );
    // 90 tokens of this key, recorded by another handle; other keys' and keyless tokens,
    // which must not count against it.
    let writer = crate::conformance::open(&store.location()).await;
    writer
        .record_usage(&[usage_row("2025-06-01", &key.id, 88)])
        .await
        .unwrap();
    store
        .record_usage(&[
            usage_row("2025-06-01", &other.id, 1_000),
            usage_row("2025-06-01", "", 1_000),
        ])
        .await
        .unwrap();
    // (estimate, admitted with this many tokens left, else refused for tokens)
    let cases = [(20, None), (11, None), (10, Some(10)), (0, Some(10))];
    for (estimate, admitted) in cases {
        let verdict = store
            .admit(&check(&key.id, &limits, estimate))
            .await
            .unwrap();
        match admitted {
            Some(left) => assert_eq!(
                verdict,
                LimitVerdict::Admitted {
                    requests_left: None,
                    tokens_left: Some(left)
                },
                "estimate {estimate}"
            ),
            None => assert!(
                matches!(verdict, LimitVerdict::Tokens { .. }) && is_retry_in_window(&verdict),
                "estimate {estimate}: {verdict:?}"
            ),
        }
    }
}

pub async fn the_budget_is_the_keys_lifetime_usage(store: Arc<dyn Store>) {
    let limits = NewKey {
        tpm: None,
        budget_tokens: Some(1_000),
        ..new_key("budget", 1)
    };
    let key = store.create_key(&limits).await.unwrap();
    // 900 tokens over two days long ago: a budget is for the key's whole life.
    store
        .record_usage(&[
            usage_row("2020-01-01", &key.id, 448),
            usage_row("2020-01-02", &key.id, 448),
        ])
        .await
        .unwrap();
    // (estimate, the verdict)
    let cases = [
        (200, LimitVerdict::Budget { spent: 900 }),
        (
            100,
            LimitVerdict::Admitted {
                requests_left: None,
                tokens_left: None,
            },
        ),
    ];
    for (estimate, verdict) in cases {
        let got = store
            .admit(&check(&key.id, &limits, estimate))
            .await
            .unwrap();
        assert_eq!(got, verdict, "estimate {estimate}");
    }
    store
        .record_usage(&[usage_row("2020-01-03", &key.id, 98)])
        .await
        .unwrap();
    assert_eq!(store.tokens_used(&key.id).await.unwrap(), 1_000);
    let spent = store.admit(&check(&key.id, &limits, 0)).await.unwrap();
    assert_eq!(spent, LimitVerdict::Budget { spent: 1_000 });
}

pub async fn a_key_without_limits_is_always_admitted(store: Arc<dyn Store>) {
    let limits = NewKey {
        tpm: None,
        ..new_key("free", 1)
    };
    let key = store.create_key(&limits).await.unwrap();
    store
        .record_usage(&[usage_row("2025-06-01", &key.id, 1_000_000)])
        .await
        .unwrap();
    for estimate in [0, 1, 1_000_000] {
        for _ in 0..20 {
            let verdict = store
                .admit(&check(&key.id, &limits, estimate))
                .await
                .unwrap();
            assert_eq!(
                verdict,
                LimitVerdict::Admitted {
                    requests_left: None,
                    tokens_left: None
                }
            );
        }
    }
}
