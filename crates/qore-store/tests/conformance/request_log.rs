//! The request log: a batch round-trips (bodies only from one entry, never in a listing);
//! pages go newest first through the cursor and every filter holds; a batch repeating an id
//! keeps the first; pruning deletes by start time; usage sums are grouped by the database
//! over every row, not a page.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use qore_store::{log_id, LogQuery, RequestLogRow, Store, UsageGroup, UsageQuery, UsageRow};

use crate::common::usage_row;

/// A new row `n` (started at `n` seconds, its id random past the time): key `k{n % 3}`, model `m{n % 2}`, status 500 when `n`
/// is a multiple of 5, else 200.
fn row(n: u64) -> RequestLogRow {
    let at = UNIX_EPOCH + Duration::from_secs(1_700_000_000 + n);
    RequestLogRow {
        id: log_id(at),
        at_ms: i64::try_from(at.duration_since(UNIX_EPOCH).unwrap().as_millis()).unwrap(),
        key_id: format!("k{}", n % 3),
        dialect: "chat".into(),
        model: format!("m{}", n % 2),
        agent: if n.is_multiple_of(4) {
            "coder".into()
        } else {
            String::new()
        },
        upstream: "local/m".into(),
        status: if n.is_multiple_of(5) { 500 } else { 200 },
        error_kind: if n.is_multiple_of(5) {
            "upstream".into()
        } else {
            String::new()
        },
        tokens_in: n,
        tokens_out: 2 * n,
        cost_micros: n
            .is_multiple_of(2)
            .then_some(i64::try_from(n).unwrap() * 10),
        ttfb_ms: Some(n + 1),
        duration_ms: n + 7,
        session_id: format!("s{n}"),
        response_id: format!("chatcmpl-{n}"),
        request_body: Some(format!("{{\"n\":{n}}}")),
        response_body: Some(format!("answer <script>{n}</script>")),
    }
}

fn numbers(rows: &[RequestLogRow]) -> Vec<u64> {
    rows.iter().map(|r| r.tokens_in).collect()
}

pub async fn a_batch_round_trips_and_pages_newest_first(store: Arc<dyn Store>) {
    let rows: Vec<RequestLogRow> = (1..=25).map(row).collect();
    store.record_requests(&rows[..10]).await.unwrap();
    store.record_requests(&rows[10..]).await.unwrap();
    // A repeated id keeps the first row.
    let again = RequestLogRow {
        status: 299,
        ..rows[2].clone()
    };
    store.record_requests(&[again]).await.unwrap();

    let entry = store.request_entry(&rows[2].id).await.unwrap().unwrap();
    assert_eq!(entry, rows[2]);
    assert_eq!(store.request_entry("nope").await.unwrap(), None);

    let mut seen = Vec::new();
    let mut query = LogQuery {
        limit: 10,
        ..Default::default()
    };
    loop {
        let page = store.request_log(&query).await.unwrap();
        assert!(page.len() <= 10);
        assert!(page
            .iter()
            .all(|r| r.request_body.is_none() && r.response_body.is_none()));
        let Some(last) = page.last() else { break };
        query.before = Some(last.id.clone());
        seen.extend(numbers(&page));
    }
    assert_eq!(seen, (1..=25).rev().collect::<Vec<_>>());
    let listed = &store
        .request_log(&LogQuery {
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    let without_bodies = RequestLogRow {
        request_body: None,
        response_body: None,
        ..rows[24].clone()
    };
    assert_eq!(listed[0], without_bodies);
}

pub async fn every_filter_of_the_log_holds(store: Arc<dyn Store>) {
    let rows: Vec<RequestLogRow> = (1..=30).map(row).collect();
    store.record_requests(&rows).await.unwrap();
    let at = |n: u64| row(n).at_ms;
    let all = || LogQuery {
        limit: 1000,
        ..Default::default()
    };
    let expect =
        |keep: &dyn Fn(u64) -> bool| -> Vec<u64> { (1..=30).rev().filter(|n| keep(*n)).collect() };
    // (query, which rows it keeps)
    let cases: Vec<(LogQuery, Vec<u64>)> = vec![
        (
            LogQuery {
                key_id: Some("k1".into()),
                ..all()
            },
            expect(&|n| n % 3 == 1),
        ),
        (
            LogQuery {
                model: Some("m0".into()),
                ..all()
            },
            expect(&|n| n % 2 == 0),
        ),
        (
            LogQuery {
                agent: Some("coder".into()),
                ..all()
            },
            expect(&|n| n % 4 == 0),
        ),
        (
            LogQuery {
                agent: Some(String::new()),
                ..all()
            },
            expect(&|n| n % 4 != 0),
        ),
        (
            LogQuery {
                status_min: Some(400),
                ..all()
            },
            expect(&|n| n % 5 == 0),
        ),
        (
            LogQuery {
                status_max: Some(399),
                ..all()
            },
            expect(&|n| n % 5 != 0),
        ),
        (
            LogQuery {
                status_min: Some(500),
                status_max: Some(500),
                key_id: Some("k0".into()),
                ..all()
            },
            expect(&|n| n % 15 == 0),
        ),
        (
            LogQuery {
                since_ms: Some(at(10)),
                until_ms: Some(at(20)),
                ..all()
            },
            expect(&|n| (10..20).contains(&n)),
        ),
        (
            LogQuery {
                before: Some(rows[4].id.clone()),
                ..all()
            },
            expect(&|n| n < 5),
        ),
        (LogQuery { limit: 3, ..all() }, vec![30, 29, 28]),
        (LogQuery { limit: 0, ..all() }, vec![30]),
        (
            LogQuery {
                key_id: Some("nobody".into()),
                ..all()
            },
            vec![],
        ),
    ];
    for (query, kept) in cases {
        let page = store.request_log(&query).await.unwrap();
        assert_eq!(numbers(&page), kept, "{query:?}");
    }
}

pub async fn pruning_deletes_what_started_before(store: Arc<dyn Store>) {
    let rows: Vec<RequestLogRow> = (1..=10).map(row).collect();
    store.record_requests(&rows).await.unwrap();
    assert_eq!(store.prune_request_log(row(4).at_ms).await.unwrap(), 3);
    assert_eq!(store.prune_request_log(row(4).at_ms).await.unwrap(), 0);
    let left = store
        .request_log(&LogQuery {
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(numbers(&left), (4..=10).rev().collect::<Vec<_>>());
    assert_eq!(store.request_entry(&rows[0].id).await.unwrap(), None);
}

pub async fn usage_sums_are_grouped_by_the_database(store: Arc<dyn Store>) {
    let with =
        |day: &str, key: &str, model: &str, agent: &str, tokens: u64, errors: u64| UsageRow {
            model: model.into(),
            agent: agent.into(),
            errors,
            ..usage_row(day, key, tokens)
        };
    store
        .record_usage(&[
            with("2025-01-01", "k1", "a", "", 10, 0),
            with("2025-01-01", "k2", "b", "coder", 20, 1),
            with("2025-01-02", "k1", "b", "coder", 30, 0),
            with("2025-01-03", "", "a", "", 40, 1),
        ])
        .await
        .unwrap();
    let sums = |rows: Vec<UsageRow>| -> Vec<(String, u64, u64, u64, u64)> {
        rows.into_iter()
            .map(|r| {
                let name = [r.day, r.key_id, r.model, r.agent].concat();
                (name, r.requests, r.errors, r.tokens_in, r.tokens_out)
            })
            .collect()
    };
    let s = |name: &str, requests, errors, tokens_in, tokens_out| {
        (name.to_owned(), requests, errors, tokens_in, tokens_out)
    };
    // (group, key, since, until, expected sums)
    let cases = [
        (
            UsageGroup::Total,
            None,
            None,
            None,
            vec![s("", 4, 2, 100, 8)],
        ),
        (
            UsageGroup::Day,
            None,
            None,
            None,
            vec![
                s("2025-01-01", 2, 1, 30, 4),
                s("2025-01-02", 1, 0, 30, 2),
                s("2025-01-03", 1, 1, 40, 2),
            ],
        ),
        (
            UsageGroup::Key,
            None,
            None,
            None,
            vec![
                s("", 1, 1, 40, 2),
                s("k1", 2, 0, 40, 4),
                s("k2", 1, 1, 20, 2),
            ],
        ),
        (
            UsageGroup::Model,
            None,
            None,
            None,
            vec![s("a", 2, 1, 50, 4), s("b", 2, 1, 50, 4)],
        ),
        (
            UsageGroup::Agent,
            None,
            None,
            None,
            vec![s("", 2, 1, 50, 4), s("coder", 2, 1, 50, 4)],
        ),
        (
            UsageGroup::Total,
            Some("k1"),
            None,
            None,
            vec![s("", 2, 0, 40, 4)],
        ),
        (
            UsageGroup::Day,
            None,
            Some("2025-01-02"),
            Some("2025-01-02"),
            vec![s("2025-01-02", 1, 0, 30, 2)],
        ),
        (
            UsageGroup::Total,
            None,
            Some("2030-01-01"),
            None,
            vec![s("", 0, 0, 0, 0)],
        ),
        (UsageGroup::Day, Some("nobody"), None, None, vec![]),
    ];
    for (by, key, since, until, expected) in cases {
        let query = UsageQuery {
            key_id: key.map(str::to_owned),
            since: since.map(str::to_owned),
            until: until.map(str::to_owned),
            ..UsageQuery::by(by)
        };
        let got = store.usage_sums(&query).await.unwrap();
        assert_eq!(sums(got), expected, "{by:?} {key:?} {since:?} {until:?}");
    }
    let bad = store
        .usage_sums(&UsageQuery {
            since: Some("yesterday".into()),
            ..UsageQuery::by(UsageGroup::Day)
        })
        .await;
    assert!(
        matches!(bad, Err(qore_store::StoreError::BadDay(_))),
        "{bad:?}"
    );
}
