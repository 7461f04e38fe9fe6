//! The admin API on a real `qore serve` (SQLite store, a loopback upstream), driven over
//! HTTP with real requests: who may call it (none/wrong → 401, an API key → 403, a revoked
//! credential → 401), keys created (the secret once) and revoked (a request with it is then
//! refused), the request log filtered and paged and one row in full, usage sums that equal
//! the store's own rows, health, and every bad parameter or body a 400 naming its field.

mod admin;

use std::time::{Duration, Instant};

use admin::Served;
use serde_json::{json, Value};

/// Ask the request log (`path`) until it holds `n` rows (the writer batches every 100 ms).
async fn logged(served: &Served, admin: &str, path: &str, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, page) = served.admin(Some(admin), "GET", path, None).await;
        let rows = page["requests"].as_array().cloned().unwrap_or_default();
        if rows.len() >= n || Instant::now() > deadline {
            return rows;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_manages_keys_and_reads_the_log_and_usage() {
    let served = Served::start().await;
    let (admin, _) = qore_serve::admin::auth::create(&*served.store, "ops")
        .await
        .unwrap();

    let (status, created) = served
        .admin(
            Some(&admin),
            "POST",
            "/keys",
            Some(json!({"name": "team", "models": ["up/*"]})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let key = created["key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("qore-"));
    let id = created["record"]["id"].as_str().unwrap().to_owned();
    // The secret is shown once: the listing has no secret and no hash.
    let (_, listed) = served
        .admin(Some(&admin), "GET", "/keys?search=TEA", None)
        .await;
    assert_eq!(listed["keys"].as_array().unwrap().len(), 1, "{listed}");
    assert!(!listed.to_string().contains(&key) && listed["keys"][0].get("hash").is_none());
    let (_, none) = served
        .admin(Some(&admin), "GET", "/keys?search=ops", None)
        .await;
    assert_eq!(none["keys"], json!([]), "admin credentials are not listed");

    // Who may call: (credential, status)
    let cases = [
        (None, 401),
        (Some("qore-wrong"), 401),
        (Some(key.as_str()), 403),
        (Some(admin.as_str()), 200),
    ];
    for (credential, wanted) in cases {
        let (status, body) = served.admin(credential, "GET", "/health", None).await;
        assert_eq!(status, wanted, "{credential:?}: {body}");
    }
    let (_, health) = served.admin(Some(&admin), "GET", "/health", None).await;
    assert_eq!(health["store"]["backend"], "sqlite");
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
    // Once the server's copy of the keys has them, the admin credential calls no model.
    let deadline = Instant::now() + Duration::from_secs(5);
    while served.chat("", "up/m").await != 401 {
        assert!(Instant::now() < deadline, "keys never required");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(served.chat(&admin, "up/m").await, 403);

    assert_eq!(served.chat(&key, "up/m").await, 200);
    assert_eq!(served.chat(&key, "up/m").await, 200);
    assert_eq!(served.chat(&key, "other/x").await, 403);
    let rows = logged(&served, &admin, &format!("/requests?key={id}"), 3).await;
    assert_eq!(rows.len(), 3, "{rows:#?}");
    let (_, failed) = served
        .admin(
            Some(&admin),
            "GET",
            &format!("/requests?key={id}&status=failed"),
            None,
        )
        .await;
    let failed = failed["requests"].as_array().unwrap().clone();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(
        (failed[0]["model"].as_str(), failed[0]["status"].as_u64()),
        (Some("other/x"), Some(403))
    );
    let one = failed[0]["id"].as_str().unwrap();
    let (status, full) = served
        .admin(Some(&admin), "GET", &format!("/requests/{one}"), None)
        .await;
    assert_eq!(
        (status, &full["error_kind"]),
        (200, &failed[0]["error_kind"])
    );
    let (status, _) = served
        .admin(
            Some(&admin),
            "GET",
            "/requests/01aaaaaaaaaaaaaaaaaaaaaaaa",
            None,
        )
        .await;
    assert_eq!(status, 404);
    // Pages of one, through the cursor: every row once, newest first.
    let mut seen = Vec::new();
    let mut path = format!("/requests?key={id}&limit=1");
    loop {
        let (_, page) = served.admin(Some(&admin), "GET", &path, None).await;
        seen.extend(
            page["requests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].clone()),
        );
        match page["next"].as_str() {
            Some(next) => path = format!("/requests?key={id}&limit=1&before={next}"),
            None => break,
        }
    }
    let mut sorted = seen.clone();
    sorted.sort_by(|a, b| b.as_str().cmp(&a.as_str()));
    assert_eq!((seen.len(), &seen), (3, &sorted));

    // Usage by key equals the store's own rows for the key.
    let stored = served.store.usage(Some(&id), None).await.unwrap();
    let (requests, errors): (u64, u64) = (
        stored.iter().map(|r| r.requests).sum(),
        stored.iter().map(|r| r.errors).sum(),
    );
    let (_, usage) = served
        .admin(Some(&admin), "GET", "/usage?by=key", None)
        .await;
    assert_eq!(usage["zone"], "UTC");
    let mine: Vec<&Value> = usage["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["key_id"] == id.as_str())
        .collect();
    assert_eq!(mine.len(), 1, "{usage}");
    assert_eq!(
        (mine[0]["requests"].as_u64(), mine[0]["errors"].as_u64()),
        (Some(requests), Some(errors))
    );
    assert_eq!(
        requests, 2,
        "the 403 before routing is not usage of a model"
    );

    // Revoked: a request with the key is refused.
    let (status, revoked) = served
        .admin(Some(&admin), "POST", &format!("/keys/{id}/revoke"), None)
        .await;
    assert_eq!(status, 200, "{revoked}");
    assert!(revoked["revoked_at_ms"].is_i64());
    let deadline = Instant::now() + Duration::from_secs(5);
    while served.chat(&key, "up/m").await != 401 {
        assert!(Instant::now() < deadline, "the revoked key is still served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A revoked admin credential is refused at once.
    served.store.revoke_key("admin:ops").await.unwrap();
    assert_eq!(
        served.admin(Some(&admin), "GET", "/health", None).await.0,
        401
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_parameters_and_bodies_are_400_naming_the_field() {
    let served = Served::start().await;
    let (admin, _) = qore_serve::admin::auth::create(&*served.store, "ops")
        .await
        .unwrap();
    // (method, path, body, the field named)
    let cases = [
        ("GET", "/requests?limit=0", None, "limit"),
        ("GET", "/requests?limit=many", None, "limit"),
        ("GET", "/requests?status=teapot", None, "status"),
        ("GET", "/requests?status=999", None, "status"),
        ("GET", "/requests?since=yesterday", None, "since"),
        ("GET", "/requests?before=x", None, "before"),
        ("GET", "/requests?colour=red", None, "colour"),
        ("GET", "/usage?by=week", None, "by"),
        ("GET", "/usage?since=2025-13-01", None, "since"),
        ("GET", "/usage?until=today", None, "until"),
        ("GET", "/keys?limit=100000", None, "limit"),
        ("POST", "/keys", Some(json!({"nam": "x"})), "nam"),
        ("POST", "/keys", Some(json!({"name": "admin:x"})), "name"),
        ("POST", "/keys", Some(json!({"name": " "})), "name"),
        (
            "POST",
            "/keys",
            Some(json!({"name": "k", "models": ["["]})),
            "models",
        ),
        (
            "POST",
            "/keys",
            Some(json!({"name": "k", "rpm": -1})),
            "rpm",
        ),
        (
            "POST",
            "/keys",
            Some(json!({"name": "k", "tpm": "many"})),
            "tpm",
        ),
        ("POST", "/keys", Some(json!(["k"])), "body"),
    ];
    for (method, path, body, field) in cases {
        let (status, answer) = served.admin(Some(&admin), method, path, body).await;
        assert_eq!(status, 400, "{method} {path}: {answer}");
        assert_eq!(answer["error"]["field"], field, "{method} {path}: {answer}");
    }
}
