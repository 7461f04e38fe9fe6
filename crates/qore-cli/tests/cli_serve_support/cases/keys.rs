//! Who may call: without keys only loopback listens (or `--no-auth`, which warns); with
//! keys a request needs one (`x-api-key` or Bearer), a revoked key stops working while the
//! server runs, `--models` and `--rpm` limit a key; a refused request never reaches the
//! upstream; neither `/metrics` nor the log holds a key.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use qore_testkit::chat::chat_answer;
use qore_testkit::ReplayServer;

use crate::cli_serve_support::{error_of, eventually, World};

#[tokio::test]
async fn without_keys_another_address_needs_a_key_or_no_auth() {
    let w = World::new();
    let run = w.qore(&["serve", "--listen", "0.0.0.0:0"]).await;
    assert!(matches!(run.code, Some(code) if code != 0), "{run:?}");
    assert_eq!(run.stdout, "", "a listener was announced");
    for words in ["qore serve keys create", "--no-auth"] {
        assert!(run.stderr.contains(words), "{words}: {}", run.stderr);
    }

    let upstream = ReplayServer::start_repeating(chat_answer("ok"))
        .await
        .unwrap();
    w.chat_provider("p", &upstream);
    w.key("someone", &[]).await;
    let mut server = w.serve(&["--no-auth"]).await;
    eventually("the --no-auth warning", Duration::from_secs(5), || {
        server.stderr().contains("--no-auth")
    })
    .await;
    let request = json!({"model": "p/m", "messages": [{"role": "user", "content": "Hi."}]});
    let answer = server.post("/v1/chat/completions", &request, &[]).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(server.stop().await, Some(0));
}

fn chat(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "Hi."}]})
}

fn messages(model: &str) -> Value {
    json!({"model": model, "max_tokens": 10, "messages": [{"role": "user", "content": "Hi."}]})
}

#[tokio::test]
async fn keys_are_required_checked_limited_and_never_shown() {
    let w = World::new();
    let upstream = ReplayServer::start_repeating(chat_answer("ok"))
        .await
        .unwrap();
    w.chat_provider("p", &upstream);
    w.agent("claude-a", "p", "").agent("other", "p", "");
    let full = w.key("full", &[]).await;
    let claude = w.key("claude", &["--models", "claude-*"]).await;
    let slow = w.key("slow", &["--rpm", "2"]).await;
    let gone = w.key("gone", &[]).await;
    let mut server = w.serve(&[]).await;
    let bearer = |key: &str| format!("Bearer {key}");
    let (full_bearer, claude_bearer) = (bearer(&full), bearer(&claude));
    let wrong = bearer("qore-0000000000000000000000000000000000000000");

    // (path, header, model, status)
    type Case<'a> = (&'a str, Option<(&'a str, &'a str)>, &'a str, u16);
    let cases: Vec<Case> = vec![
        ("/v1/chat/completions", None, "other", 401),
        ("/v1/messages", None, "other", 401),
        (
            "/v1/chat/completions",
            Some(("authorization", &wrong)),
            "other",
            401,
        ),
        (
            "/v1/chat/completions",
            Some(("authorization", &full_bearer)),
            "other",
            200,
        ),
        ("/v1/messages", Some(("x-api-key", &full)), "other", 200),
        (
            "/v1/chat/completions",
            Some(("authorization", &claude_bearer)),
            "other",
            403,
        ),
        ("/v1/messages", Some(("x-api-key", &claude)), "other", 403),
        (
            "/v1/messages",
            Some(("x-api-key", &claude)),
            "claude-a",
            200,
        ),
    ];
    let mut answered = 0;
    for (path, header, model, status) in &cases {
        let body = match *path {
            "/v1/messages" => messages(model),
            _ => chat(model),
        };
        let headers: Vec<(&str, &str)> = header.iter().copied().collect();
        let answer = server.post(path, &body, &headers).await;
        assert_eq!(
            answer.status, *status,
            "{path} {header:?} {model}: {}",
            answer.text
        );
        if *status == 200 {
            answered += 1;
        } else {
            error_of(path, &answer);
        }
        assert_eq!(
            upstream.requests().len(),
            answered,
            "{path} {header:?} {model}"
        );
    }

    // /v1/models lists what the key may use.
    let listed = |key: String| {
        let server = &server;
        async move {
            let auth = format!("Bearer {key}");
            let answer = server.get("/v1/models", &[("authorization", &auth)]).await;
            assert_eq!(answer.status, 200, "{}", answer.text);
            let ids: Vec<String> = (answer.json()["data"].as_array().unwrap().iter())
                .map(|m| m["id"].as_str().unwrap().to_owned())
                .collect();
            ids
        }
    };
    let ids = listed(claude.clone()).await;
    assert!(
        ids.contains(&"claude-a".to_owned()) && !ids.contains(&"other".to_owned()),
        "{ids:?}"
    );
    let ids = listed(full.clone()).await;
    assert!(
        ids.contains(&"claude-a".to_owned()) && ids.contains(&"other".to_owned()),
        "{ids:?}"
    );

    // --rpm 2: the third request in the minute is 429 with Retry-After.
    for n in 1..=3 {
        let answer = server
            .post("/v1/messages", &messages("other"), &[("x-api-key", &slow)])
            .await;
        if n < 3 {
            assert_eq!(answer.status, 200, "{n}: {}", answer.text);
            answered += 1;
            continue;
        }
        assert_eq!(answer.status, 429, "{}", answer.text);
        assert_eq!(
            error_of("/v1/messages", &answer)["type"],
            "rate_limit_error"
        );
        let wait: u64 = (answer.header("retry-after").expect("Retry-After").parse()).unwrap();
        assert!((1..=61).contains(&wait), "{wait}");
    }
    assert_eq!(upstream.requests().len(), answered);

    // A key revoked while the server runs is refused within about a second.
    let gone_headers = [("x-api-key", gone.as_str())];
    let answer = server
        .post("/v1/messages", &messages("other"), &gone_headers)
        .await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    answered += 1;
    let revoked = w.qore(&["serve", "keys", "revoke", "gone"]).await;
    assert_eq!(revoked.code, Some(0), "{revoked:?}");
    let since = Instant::now();
    loop {
        let answer = server
            .post("/v1/messages", &messages("other"), &gone_headers)
            .await;
        if answer.status == 401 {
            error_of("/v1/messages", &answer);
            break;
        }
        assert_eq!(answer.status, 200, "{}", answer.text);
        answered += 1;
        assert!(
            since.elapsed() < Duration::from_secs(3),
            "a revoked key still works"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(upstream.requests().len(), answered);

    let metrics = server.metrics().await;
    assert!(metrics.contains("qore_requests_total"), "{metrics}");
    assert_eq!(server.stop().await, Some(0));
    let log = server.stderr();
    for key in [&full, &claude, &slow, &gone] {
        assert!(
            !metrics.contains(key.as_str()),
            "/metrics shows a key:\n{metrics}"
        );
        assert!(!log.contains(key.as_str()), "the log shows a key:\n{log}");
        let tail = &key[key.len() - 12..];
        assert!(
            !metrics.contains(tail) && !log.contains(tail),
            "a piece of a key is shown"
        );
    }
}
