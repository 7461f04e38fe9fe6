//! The gate on a real store file: header forms and refusals, model patterns, limits decided
//! by the store, usage rows, keys changed through another handle on the same file, and a store
//! that cannot be read (fail closed).

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use qore_core::Usage;
use qore_store::{NewKey, SqliteStore, Store};

use super::*;

struct World {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    store: Arc<dyn Store>,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qore.db");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&path).unwrap());
    World {
        _dir: dir,
        path,
        store,
    }
}

async fn gate(w: &World, auth: AuthMode) -> Gate {
    Gate::start(w.store.clone(), auth, StoreErrors::default()).await
}

/// Store a key named `name` and return its text.
async fn add_key(store: &dyn Store, name: &str, edit: impl FnOnce(&mut NewKey)) -> String {
    let key = new_key().unwrap();
    let mut new = NewKey {
        name: name.into(),
        hash: hash_key(&key),
        ..NewKey::default()
    };
    edit(&mut new);
    store.create_key(&new).await.unwrap();
    key
}

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let name = HeaderName::from_bytes(name.as_bytes()).unwrap();
        map.append(name, HeaderValue::from_str(value).unwrap());
    }
    map
}

fn usage(tokens_in: u64, tokens_out: u64) -> Usage {
    Usage {
        input_tokens: Some(tokens_in),
        output_tokens: Some(tokens_out),
        ..Usage::default()
    }
}

#[tokio::test]
async fn a_key_is_taken_from_either_header_and_refusals_say_why() {
    let w = world();
    let good = add_key(&*w.store, "good", |_| {}).await;
    let gone = add_key(&*w.store, "gone", |_| {}).await;
    w.store.revoke_key("gone").await.unwrap();
    let gate = gate(&w, AuthMode::Keys).await;
    let bearer = format!("Bearer {good}");
    // (headers, the key name let through, or the 401's words)
    type Pairs<'a> = &'a [(&'a str, &'a str)];
    let cases: &[(Pairs, Result<&str, &str>)] = &[
        (&[("authorization", &bearer)], Ok("good")),
        (&[("x-api-key", &good)], Ok("good")),
        (
            &[("authorization", "Bearer nope"), ("x-api-key", &good)],
            Ok("good"),
        ),
        (&[], Err("no API key")),
        (
            &[("authorization", "Basic Zm9vOmJhcg==")],
            Err("no API key"),
        ),
        (&[("x-api-key", "qore-unknown")], Err("invalid API key")),
        (&[("x-api-key", &gone)], Err("revoked")),
    ];
    for (pairs, expected) in cases {
        let result = gate.authenticate(&headers(pairs)).await;
        match (result, expected) {
            (Ok(caller), Ok(name)) => assert_eq!(caller.key_name.as_deref(), Some(*name)),
            (Err(e), Err(words)) => {
                assert_eq!((e.kind, e.status), (ErrorKind::Authentication, 401));
                assert!(e.message.contains(words), "{pairs:?}: {}", e.message);
                assert!(!e.message.contains("qore-"), "{}", e.message);
            }
            (result, _) => panic!("{pairs:?}: {result:?}"),
        }
    }
    let caller = gate
        .authenticate(&headers(&[("x-api-key", &good)]))
        .await
        .unwrap();
    let debug = format!("{caller:?}");
    assert!(debug.contains("good") && !debug.contains(&good), "{debug}");
}

#[tokio::test]
async fn open_modes_let_anyone_through() {
    let w = world();
    let until = gate(&w, AuthMode::UntilKeys).await;
    let caller = until.authenticate(&HeaderMap::new()).await.unwrap();
    assert_eq!((caller.key_id, caller.key_name), (None, None));
    add_key(&*w.store, "first", |_| {}).await;
    until.keys.refresh(&*w.store).await.unwrap();
    let error = until.authenticate(&HeaderMap::new()).await.unwrap_err();
    assert_eq!(error.status, 401);
    let open = gate(&w, AuthMode::Open).await;
    for pairs in [&[][..], &[("x-api-key", "anything")][..]] {
        let caller = open.authenticate(&headers(pairs)).await.unwrap();
        assert!(caller.key_id.is_none());
        assert!(open.permits(&caller, "any/model"));
        assert!(open.admit(&caller, u64::MAX).await.is_ok());
    }
}

#[tokio::test]
async fn a_key_made_through_another_handle_works_at_once_and_its_revocation_after_a_check() {
    let w = world();
    let gate = gate(&w, AuthMode::Keys).await;
    let other = SqliteStore::open(&w.path).unwrap();
    let key = add_key(&other, "late", |_| {}).await;
    let sent = headers(&[("x-api-key", &key)]);
    // Unknown to the copy: looked up in the store before the 401.
    let caller = gate.authenticate(&sent).await.unwrap();
    assert_eq!(caller.key_name.as_deref(), Some("late"));
    other.revoke_key("late").await.unwrap();
    gate.keys.refresh(&*w.store).await.unwrap();
    let error = gate.authenticate(&sent).await.unwrap_err();
    assert!(error.message.contains("revoked"), "{}", error.message);
}

#[tokio::test]
async fn a_store_that_cannot_be_read_fails_keyed_requests_closed_with_503() {
    let w = world();
    let key = add_key(&*w.store, "k", |_| {}).await;
    let gate = gate(&w, AuthMode::Keys).await;
    let sent = headers(&[("x-api-key", &key)]);
    assert!(gate.authenticate(&sent).await.is_ok());
    // The keys' table is gone under the server (a broken store): checks fail.
    let other = rusqlite::Connection::open(&w.path).unwrap();
    other.execute_batch("DROP TABLE api_keys;").unwrap();
    assert!(gate.keys.refresh(&*w.store).await.is_err());
    // The copy stays usable until it is over STALE_AFTER unconfirmed.
    let later = Instant::now() + STALE_AFTER + Duration::from_millis(1);
    assert!(gate.keys.current(Instant::now()).is_ok());
    assert!(gate.keys.current(later).is_err());
}

#[tokio::test]
async fn model_patterns_decide_what_a_key_may_use() {
    let w = world();
    let key = add_key(&*w.store, "narrow", |k| {
        k.models = vec!["claude-*".into(), "local/*".into()];
    })
    .await;
    let all = add_key(&*w.store, "wide", |_| {}).await;
    let gate = gate(&w, AuthMode::Keys).await;
    let narrow = (gate.authenticate(&headers(&[("x-api-key", &key)])).await).unwrap();
    let wide = (gate.authenticate(&headers(&[("x-api-key", &all)])).await).unwrap();
    // (model, permitted to the narrow key)
    for (model, permitted) in [
        ("claude-sonnet-4", true),
        ("local/smollm2", true),
        ("openai/gpt-4o", false),
        ("coder", false),
        ("anthropic/claude-sonnet-4", false),
    ] {
        assert_eq!(gate.permits(&narrow, model), permitted, "{model}");
        assert!(gate.permits(&wide, model), "{model}");
    }
}

#[tokio::test]
async fn the_fourth_request_in_a_minute_past_rpm_3_is_429_with_retry_after() {
    let w = world();
    let key = add_key(&*w.store, "slow", |k| k.rpm = Some(3)).await;
    let gate = gate(&w, AuthMode::Keys).await;
    let caller = (gate.authenticate(&headers(&[("x-api-key", &key)])).await).unwrap();
    for n in 0..3u64 {
        let admitted = gate.admit(&caller, 10).await.unwrap();
        assert_eq!(admitted.requests, Some((3, 2 - n)));
    }
    let error = gate.admit(&caller, 10).await.unwrap_err();
    assert_eq!((error.kind, error.status), (ErrorKind::RateLimit, 429));
    assert!(error.retry_after.is_some_and(|s| (1..=61).contains(&s)));
    assert!(
        error.message.contains("3 requests per minute"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn tpm_counts_recorded_tokens() {
    let w = world();
    let key = add_key(&*w.store, "tokens", |k| k.tpm = Some(100)).await;
    let gate = gate(&w, AuthMode::Keys).await;
    let caller = (gate.authenticate(&headers(&[("x-api-key", &key)])).await).unwrap();
    assert!(gate.admit(&caller, 50).await.is_ok());
    gate.record(&caller, "coder", Some("coder"), &usage(60, 30), false);
    assert!(gate.flush(Duration::from_secs(10)).await);
    let error = gate.admit(&caller, 20).await.unwrap_err();
    assert_eq!(error.status, 429);
    assert!(error.retry_after.is_some_and(|s| (1..=61).contains(&s)));
    assert!(gate.admit(&caller, 10).await.is_ok());
}

#[tokio::test]
async fn a_passed_budget_is_429_counting_stored_usage() {
    let w = world();
    let key = add_key(&*w.store, "budget", |k| k.budget_tokens = Some(1000)).await;
    let id = w.store.key("budget").await.unwrap().id;
    let earlier = UsageRow {
        day: "2025-01-01".into(),
        key_id: id.clone(),
        model: "coder".into(),
        requests: 1,
        tokens_in: 900,
        ..UsageRow::default()
    };
    w.store.record_usage(&[earlier]).await.unwrap();
    let gate = gate(&w, AuthMode::Keys).await;
    let caller = (gate.authenticate(&headers(&[("x-api-key", &key)])).await).unwrap();
    assert!(gate.admit(&caller, 50).await.is_ok());
    gate.record(&caller, "coder", None, &usage(40, 60), false);
    assert!(gate.flush(Duration::from_secs(10)).await);
    let error = gate.admit(&caller, 1).await.unwrap_err();
    assert_eq!(
        (error.kind, error.status, error.retry_after),
        (ErrorKind::RateLimit, 429, None)
    );
    assert!(
        error.message.contains("budget of 1000 tokens"),
        "{}",
        error.message
    );
    assert_eq!(w.store.tokens_used(&id).await.unwrap(), 1000);
}

#[tokio::test]
async fn recorded_usage_adds_up_per_key_model_and_agent() {
    let w = world();
    let key = add_key(&*w.store, "user", |_| {}).await;
    let gate = gate(&w, AuthMode::Keys).await;
    let caller = (gate.authenticate(&headers(&[("x-api-key", &key)])).await).unwrap();
    gate.record(&caller, "coder", Some("coder"), &usage(10, 2), false);
    gate.record(&caller, "coder", Some("coder"), &Usage::default(), true);
    gate.record(&Caller::open(), "local/m", None, &usage(1, 1), false);
    assert!(gate.flush(Duration::from_secs(10)).await);
    let rows = w.store.usage(None, None).await.unwrap();
    let summary: Vec<_> = (rows.iter())
        .map(|r| {
            let who = if r.key_id.is_empty() { "-" } else { "key" };
            (
                who,
                r.model.as_str(),
                r.agent.as_str(),
                r.requests,
                r.errors,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [("-", "local/m", "", 1, 0), ("key", "coder", "coder", 2, 1)]
    );
    assert_eq!((rows[1].tokens_in, rows[1].tokens_out), (10, 2));
    assert_eq!(rows[1].day, utc_day(SystemTime::now()));
}
