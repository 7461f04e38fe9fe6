//! The gate on a real store file: header forms and refusals, model patterns, limits, usage
//! rows, and keys changed by another handle on the same file.

use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use qore_core::Usage;
use qore_store::{NewKey, Store};

use super::*;

struct World {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    store: SharedStore,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("qore.db");
    let store = Arc::new(Mutex::new(Store::open(&path).unwrap()));
    World {
        _dir: dir,
        path,
        store,
    }
}

/// Store a key named `name` and return its text.
fn add_key(store: &SharedStore, name: &str, edit: impl FnOnce(&mut NewKey)) -> String {
    let key = new_key().unwrap();
    let mut new = NewKey {
        name: name.into(),
        hash: hash_key(&key),
        ..NewKey::default()
    };
    edit(&mut new);
    lock(store).create_key(&new).unwrap();
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

#[test]
fn a_key_is_taken_from_either_header_and_refusals_say_why() {
    let w = world();
    let good = add_key(&w.store, "good", |_| {});
    let gone = add_key(&w.store, "gone", |_| {});
    lock(&w.store).revoke_key("gone").unwrap();
    let gate = Gate::new(w.store.clone(), AuthMode::Keys);
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
        let result = gate.authenticate(&headers(pairs));
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
        .unwrap();
    let debug = format!("{caller:?}");
    assert!(debug.contains("good") && !debug.contains(&good), "{debug}");
}

#[test]
fn open_modes_let_anyone_through() {
    let w = world();
    let until = Gate::new(w.store.clone(), AuthMode::UntilKeys);
    let caller = until.authenticate(&HeaderMap::new()).unwrap();
    assert_eq!((caller.key_id, caller.key_name), (None, None));
    add_key(&w.store, "first", |_| {});
    let later = Instant::now() + CHECK_EVERY;
    let error = until.authenticate_at(&HeaderMap::new(), later).unwrap_err();
    assert_eq!(error.status, 401);
    let open = Gate::new(w.store.clone(), AuthMode::Open);
    for pairs in [&[][..], &[("x-api-key", "anything")][..]] {
        let caller = open.authenticate(&headers(pairs)).unwrap();
        assert!(caller.key_id.is_none());
        assert!(open.permits(&caller, "any/model"));
        assert!(open.admit(&caller, u64::MAX).is_ok());
    }
}

#[test]
fn keys_created_or_revoked_by_another_handle_take_effect_after_one_check() {
    let w = world();
    let start = Instant::now();
    let gate = Gate::new(w.store.clone(), AuthMode::Keys);
    let other = Store::open(&w.path).unwrap();
    let key = new_key().unwrap();
    (other.create_key(&NewKey {
        name: "late".into(),
        hash: hash_key(&key),
        ..NewKey::default()
    }))
    .unwrap();
    let sent = headers(&[("x-api-key", &key)]);
    // Within CHECK_EVERY of the load the copy is not checked again.
    assert!(gate.authenticate_at(&sent, start).is_err());
    let next = Instant::now() + CHECK_EVERY;
    assert!(gate.authenticate_at(&sent, next).is_ok());
    other.revoke_key("late").unwrap();
    let error = gate.authenticate_at(&sent, next + CHECK_EVERY).unwrap_err();
    assert!(error.message.contains("revoked"), "{}", error.message);
}

#[test]
fn model_patterns_decide_what_a_key_may_use() {
    let w = world();
    let key = add_key(&w.store, "narrow", |k| {
        k.models = vec!["claude-*".into(), "local/*".into()];
    });
    let all = add_key(&w.store, "wide", |_| {});
    let gate = Gate::new(w.store.clone(), AuthMode::Keys);
    let narrow = gate.authenticate(&headers(&[("x-api-key", &key)])).unwrap();
    let wide = gate.authenticate(&headers(&[("x-api-key", &all)])).unwrap();
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

#[test]
fn the_fourth_request_in_a_minute_past_rpm_3_is_429_with_retry_after() {
    let w = world();
    let key = add_key(&w.store, "slow", |k| k.rpm = Some(3));
    let gate = Gate::new(w.store.clone(), AuthMode::Keys);
    let caller = gate.authenticate(&headers(&[("x-api-key", &key)])).unwrap();
    let start = Instant::now();
    for n in 0..3u64 {
        let admitted = gate.admit_at(&caller, 10, start).unwrap();
        assert_eq!(admitted.requests, Some((3, 2 - n)));
    }
    let error = gate.admit_at(&caller, 10, start).unwrap_err();
    assert_eq!((error.kind, error.status), (ErrorKind::RateLimit, 429));
    assert_eq!(error.retry_after, Some(60));
    assert!(
        error.message.contains("3 requests per minute"),
        "{}",
        error.message
    );
    assert!(gate.admit_at(&caller, 10, start + limits::WINDOW).is_ok());
}

#[test]
fn tpm_counts_recorded_tokens() {
    let w = world();
    let key = add_key(&w.store, "tokens", |k| k.tpm = Some(100));
    let gate = Gate::new(w.store.clone(), AuthMode::Keys);
    let caller = gate.authenticate(&headers(&[("x-api-key", &key)])).unwrap();
    assert!(gate.admit(&caller, 50).is_ok());
    gate.record(&caller, "coder", Some("coder"), &usage(60, 30), false);
    let error = gate.admit(&caller, 20).unwrap_err();
    assert_eq!(error.status, 429);
    assert!(error.retry_after.is_some_and(|s| (59..=60).contains(&s)));
    assert!(gate.admit(&caller, 10).is_ok());
}

#[test]
fn a_passed_budget_is_429_counting_stored_and_new_usage() {
    let w = world();
    let key = add_key(&w.store, "budget", |k| k.budget_tokens = Some(1000));
    let id = lock(&w.store).key("budget").unwrap().id;
    let earlier = UsageRow {
        day: "2025-01-01".into(),
        key_id: id.clone(),
        model: "coder".into(),
        requests: 1,
        tokens_in: 900,
        ..UsageRow::default()
    };
    lock(&w.store).record_usage(&earlier).unwrap();
    let gate = Gate::new(w.store.clone(), AuthMode::Keys);
    let caller = gate.authenticate(&headers(&[("x-api-key", &key)])).unwrap();
    assert!(gate.admit(&caller, 50).is_ok());
    gate.record(&caller, "coder", None, &usage(40, 60), false);
    let error = gate.admit(&caller, 1).unwrap_err();
    assert_eq!((error.kind, error.status), (ErrorKind::RateLimit, 429));
    assert!(
        error.message.contains("budget of 1000 tokens"),
        "{}",
        error.message
    );
    assert!(gate.flush(Duration::from_secs(10)));
    assert_eq!(lock(&w.store).tokens_used(&id).unwrap(), 1000);
}

#[test]
fn recorded_usage_adds_up_per_key_model_and_agent() {
    let w = world();
    let key = add_key(&w.store, "user", |_| {});
    let gate = Gate::new(w.store.clone(), AuthMode::Keys);
    let caller = gate.authenticate(&headers(&[("x-api-key", &key)])).unwrap();
    gate.record(&caller, "coder", Some("coder"), &usage(10, 2), false);
    gate.record(&caller, "coder", Some("coder"), &Usage::default(), true);
    gate.record(&Caller::open(), "local/m", None, &usage(1, 1), false);
    assert!(gate.flush(Duration::from_secs(10)));
    let rows = lock(&w.store).usage(None, None).unwrap();
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
