//! The admin API's keys endpoints beyond create and revoke, on a real `qore serve` (a
//! loopback upstream, real HTTP): a key's globs and limits changed with `PATCH` (the very
//! next request with it meets the change; bad bodies a 400 naming the field; an unknown id
//! or an admin credential 404; an API key 403), and keys paged by the store.

mod admin_more;

use std::time::Duration;

use admin_more::Gateway;
use qore_testkit::chat::chat_answer;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_key_meets_its_next_request_with_the_change() {
    let gateway = Gateway::start(None, vec![chat_answer("hi back")]).await;
    let (status, created) = gateway
        .admin(
            "POST",
            "/keys",
            Some(json!({"name": "team", "models": ["up/*"]})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let key = created["key"].as_str().unwrap().to_owned();
    let id = created["record"]["id"].as_str().unwrap().to_owned();
    assert_eq!(gateway.chat(&key, "up/m").await, 200);

    // (body, the key's answer, the status of the next request with the key) — each the
    // very next request, no waiting.
    let patch = format!("/keys/{id}");
    let cases = [
        (
            json!({"models": ["other/*"]}),
            json!({"models": ["other/*"]}),
            403,
        ),
        (json!({"models": null}), json!({"models": []}), 200),
        (
            json!({"budget_tokens": 1, "tpm": 5000}),
            json!({"budget_tokens": 1, "tpm": 5000, "rpm": null}),
            429,
        ),
        (
            json!({"budget_tokens": null}),
            json!({"budget_tokens": null}),
            200,
        ),
    ];
    for (body, shown, next) in cases {
        let (status, answer) = gateway.admin("PATCH", &patch, Some(body.clone())).await;
        assert_eq!(status, 200, "{body} -> {answer}");
        for (field, value) in shown.as_object().unwrap() {
            assert_eq!(&answer[field], value, "{body} -> {answer}");
        }
        assert_eq!(answer["id"], json!(id));
        assert!(answer.get("hash").is_none());
        assert_eq!(gateway.chat(&key, "up/m").await, next, "after {body}");
    }
    // The listing shows what the last change left.
    let (_, listed) = gateway.admin("GET", "/keys?search=team", None).await;
    assert_eq!(listed["keys"][0]["tpm"], json!(5000), "{listed}");

    // Refused: (method, path, body, credential, status, field named)
    let admin = gateway.admin.clone();
    type Refusal<'a> = (
        &'a str,
        &'a str,
        &'a str,
        Option<&'a str>,
        u16,
        Option<&'a str>,
    );
    let cases: [Refusal; 13] = [
        (
            "PATCH",
            &patch,
            r#"{"rpm": 0}"#,
            Some(&admin),
            400,
            Some("rpm"),
        ),
        (
            "PATCH",
            &patch,
            r#"{"tpm": "9"}"#,
            Some(&admin),
            400,
            Some("tpm"),
        ),
        (
            "PATCH",
            &patch,
            r#"{"budget_tokens": -1}"#,
            Some(&admin),
            400,
            Some("budget_tokens"),
        ),
        (
            "PATCH",
            &patch,
            r#"{"models": [1]}"#,
            Some(&admin),
            400,
            Some("models"),
        ),
        (
            "PATCH",
            &patch,
            r#"{"models": "up/*"}"#,
            Some(&admin),
            400,
            Some("models"),
        ),
        (
            "PATCH",
            &patch,
            r#"{"name": "x"}"#,
            Some(&admin),
            400,
            Some("name"),
        ),
        ("PATCH", &patch, "not json", Some(&admin), 400, Some("body")),
        ("PATCH", "/keys/nobody", "{}", Some(&admin), 404, None),
        ("PATCH", "/keys/admin:ops", "{}", Some(&admin), 404, None),
        ("PATCH", &patch, "{}", Some(&key), 403, None),
        // No credential and not from the console's origin: the CSRF check answers first.
        ("PATCH", &patch, "{}", None, 403, None),
        ("GET", "/keys?limit=0", "", Some(&admin), 400, Some("limit")),
        (
            "GET",
            "/keys?colour=red",
            "",
            Some(&admin),
            400,
            Some("colour"),
        ),
    ];
    for (method, path, body, credential, status, field) in cases {
        let body = (!body.is_empty()).then(|| body.to_owned());
        let path = format!("/admin/v1{path}");
        let (got, answer) = gateway.call(credential, method, &path, body, &[]).await;
        assert_eq!(got, status, "{method} {path} -> {answer}");
        if let Some(field) = field {
            assert_eq!(answer["error"]["field"], json!(field), "{path}: {answer}");
        }
    }
    // The refused changes left the key as it was.
    assert_eq!(gateway.store.key(&id).await.unwrap().tpm, Some(5000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_paged_by_the_store() {
    let gateway = Gateway::start(None, vec![chat_answer("hi back")]).await;
    let mut made = Vec::new();
    for name in ["k-one", "k-two", "k-three", "other"] {
        let (_, created) = gateway
            .admin("POST", "/keys", Some(json!({"name": name})))
            .await;
        made.push(created["record"]["id"].as_str().unwrap().to_owned());
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // Walk the pages of `search=k-` two at a time.
    let mut names = Vec::new();
    let mut path = "/keys?search=K-&limit=2".to_owned();
    let mut pages = 0;
    loop {
        let (status, page) = gateway.admin("GET", &path, None).await;
        assert_eq!(status, 200, "{page}");
        pages += 1;
        for key in page["keys"].as_array().unwrap() {
            names.push(key["name"].as_str().unwrap().to_owned());
        }
        match page["next"].as_str() {
            Some(next) => path = format!("/keys?search=K-&limit=2&after={next}"),
            None => break,
        }
    }
    assert_eq!(names, ["k-one", "k-two", "k-three"]);
    assert_eq!(pages, 2);
    let (_, all) = gateway.admin("GET", "/keys", None).await;
    let ids: Vec<&str> = (all["keys"].as_array().unwrap().iter())
        .map(|k| k["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, made, "creation order, no admin credential");
}
