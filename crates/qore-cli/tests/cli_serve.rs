//! `qore serve` as a user meets it: the real binary on a config and data dir of each test's
//! own, loopback replay servers as its providers, requests over loopback. Lifecycle and
//! faults here (a client going away, SIGTERM's drain, body limits, bad requests,
//! fallbacks); hints, cross-dialect fidelity, keys, usage and stored responses in
//! `cli_serve_support/cases/`.

mod cli_serve_support;
mod common;

#[path = "cli_serve_support/cases/crossing.rs"]
mod crossing;
#[path = "cli_serve_support/cases/keys.rs"]
mod keys;
#[path = "cli_serve_support/cases/records.rs"]
mod records;

use std::time::{Duration, Instant};

use cli_serve_support::upstream::{drip, drip_text, fails_after, finished, text_of};
use cli_serve_support::{dialects, error_of, eventually, read_until, World};
use qore_testkit::chat::chat_answer;
use qore_testkit::{ReplayServer, Reply};
use serde_json::json;

/// The rest of `response` (to its end or its break), when it ended, and whether it ended
/// cleanly (the HTTP body closed, not a connection broken off).
async fn read_rest(mut response: reqwest::Response, mut seen: String) -> (String, Instant, bool) {
    loop {
        match response.chunk().await {
            Ok(Some(bytes)) => seen.push_str(&String::from_utf8_lossy(&bytes)),
            Ok(None) => return (seen, Instant::now(), true),
            Err(_) => return (seen, Instant::now(), false),
        }
    }
}

#[tokio::test]
async fn a_client_that_goes_away_closes_the_upstream_request() {
    let w = World::new();
    let mut upstreams = Vec::new();
    for (i, _) in dialects().iter().enumerate() {
        let server = ReplayServer::start(vec![drip(60, Duration::from_millis(100))])
            .await
            .unwrap();
        w.chat_provider(&format!("d{i}"), &server);
        upstreams.push(server);
    }
    let server = w.serve(&[]).await;
    for (i, (path, body)) in dialects().into_iter().enumerate() {
        let upstream = &upstreams[i];
        let request = body(&format!("d{i}/m"), "Talk.", true);
        let mut response = server.send(path, &request, &[]).await;
        assert_eq!(response.status(), 200, "{path}");
        read_until(&mut response, "w1").await;
        server
            .metric_becomes("qore_streams_in_flight 1", Duration::from_secs(2))
            .await;
        drop(response);
        eventually(
            &format!("{path}: the upstream sees its client go"),
            Duration::from_secs(5),
            || upstream.disconnects() == 1,
        )
        .await;
        server
            .metric_becomes("qore_streams_in_flight 0", Duration::from_secs(5))
            .await;
        assert_eq!(upstream.requests().len(), 1, "{path}");
    }
}

#[tokio::test]
async fn a_client_that_goes_away_before_the_first_byte_closes_the_upstream_request() {
    let w = World::new();
    // The upstream answers its head, then nothing.
    let silent = drip(3, Duration::from_millis(10)).stall_after(0);
    let upstream = ReplayServer::start_repeating(silent).await.unwrap();
    w.chat_provider("p", &upstream);
    let server = w.serve(&[]).await;
    for (n, stream) in [(1, true), (2, false)] {
        let request = dialects()[1].1("p/m", "Talk.", stream);
        let waiting = server.send("/v1/messages", &request, &[]);
        let gave_up = tokio::time::timeout(Duration::from_secs(1), waiting).await;
        assert!(
            gave_up.is_err(),
            "stream {stream}: answered without an upstream answer"
        );
        eventually(
            &format!("stream {stream}: the upstream sees its client go"),
            Duration::from_secs(5),
            || upstream.disconnects() == n,
        )
        .await;
    }
    server
        .metric_becomes("qore_streams_in_flight 0", Duration::from_secs(2))
        .await;
}

#[tokio::test]
async fn sigterm_drains_short_streams_cuts_long_ones_and_exits_zero() {
    const DRAIN: u64 = 2;
    let w = World::new();
    let short = ReplayServer::start(vec![drip(5, Duration::from_millis(200))])
        .await
        .unwrap();
    w.chat_provider("short", &short);
    // A long stream in each dialect.
    let mut longs = Vec::new();
    for (i, _) in dialects().iter().enumerate() {
        let long = ReplayServer::start(vec![drip(200, Duration::from_millis(100))])
            .await
            .unwrap();
        w.chat_provider(&format!("long{i}"), &long);
        longs.push(long);
    }
    let mut server = w.serve(&["--drain-timeout", &DRAIN.to_string()]).await;
    let addr = server.url.trim_start_matches("http://").to_owned();
    let mut long_answers = Vec::new();
    for (i, (path, ask)) in dialects().into_iter().enumerate() {
        let mut answer = server
            .send(path, &ask(&format!("long{i}/m"), "Talk.", true), &[])
            .await;
        let seen = read_until(&mut answer, "w0").await;
        long_answers.push((path, answer, seen));
    }
    let path = "/v1/chat/completions";
    let ask = dialects()[0].1("short/m", "Talk.", true);
    let mut short_answer = server.send(path, &ask, &[]).await;
    let short_seen = read_until(&mut short_answer, "w0").await;
    server.sigterm();
    let sent = Instant::now();
    let long_tasks: Vec<_> = (long_answers.into_iter())
        .map(|(path, answer, seen)| (path, tokio::spawn(read_rest(answer, seen))))
        .collect();
    let short_task = tokio::spawn(read_rest(short_answer, short_seen));

    // New connections are refused once it is stopping (well before the drain is over).
    let mut refused = false;
    while sent.elapsed() < Duration::from_secs(DRAIN) && !refused {
        refused = tokio::net::TcpStream::connect(&addr).await.is_err();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(refused, "connections still accepted after SIGTERM");

    let (short_body, _, clean) = short_task.await.unwrap();
    assert!(clean, "{short_body}");
    assert_eq!(text_of(path, &short_body), drip_text(5), "{short_body}");
    assert!(finished(path, &short_body), "{short_body}");
    for (path, task) in long_tasks {
        // Cut by the server after the drain (a clean end), not by the process going away.
        let (long_body, ended, clean) = task.await.unwrap();
        assert!(clean, "{path}: the long stream broke off: {long_body}");
        assert!(!finished(path, &long_body), "{path}: {long_body}");
        let said = text_of(path, &long_body);
        let whole = drip_text(200);
        assert!(
            said.starts_with("w0 w1 ") && said.len() < whole.len(),
            "{path}: {said}"
        );
        let took = ended - sent;
        assert!(
            took >= Duration::from_millis(DRAIN * 1000 - 200)
                && took < Duration::from_secs(DRAIN + 3),
            "{path}: the long stream ended {took:?} after SIGTERM"
        );
    }
    let code = server.exit_within(Duration::from_secs(DRAIN + 5)).await;
    assert_eq!(code, Some(0), "{}", server.stderr());
    eventually(
        "the long upstream requests are closed",
        Duration::from_secs(3),
        || longs.iter().all(|long| long.disconnects() == 1),
    )
    .await;
    assert_eq!(short.disconnects(), 0);
}

#[tokio::test]
async fn a_body_over_the_limit_is_413_in_each_dialect() {
    let w = World::new();
    let upstream = ReplayServer::start_repeating(chat_answer("no"))
        .await
        .unwrap();
    w.chat_provider("p", &upstream);
    let server = w.serve(&["--body-limit", "1000"]).await;
    for (path, body) in dialects() {
        let mut request = body("p/m", &"x".repeat(4900), false);
        let bytes = request.to_string().into_bytes();
        assert!(bytes.len() >= 4900 && bytes.len() < 5100, "{}", bytes.len());
        let answer = cli_serve_support::Answer::of(server.send_raw(path, bytes, &[]).await).await;
        assert_eq!(answer.status, 413, "{path}: {}", answer.text);
        let error = error_of(path, &answer);
        assert!(
            error["message"].as_str().unwrap().contains("1000"),
            "{path}: {error}"
        );
        if path == "/v1/messages" {
            assert_eq!(error["type"], "request_too_large", "{error}");
        }
        // Under the limit the same request is answered.
        request = body("p/m", "short", false);
        let answer = server.post(path, &request, &[]).await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.text);
    }
    assert_eq!(upstream.requests().len(), 3);
}

#[tokio::test]
async fn malformed_json_and_a_wrong_typed_field_are_400_naming_it() {
    let w = World::new();
    let upstream = ReplayServer::start_repeating(chat_answer("no"))
        .await
        .unwrap();
    w.chat_provider("p", &upstream);
    let server = w.serve(&[]).await;
    let user = json!([{"role": "user", "content": "hi"}]);
    // (path, body, a word the error must name)
    let cases: Vec<(&str, String, &str)> =
        vec![
        ("/v1/chat/completions", r#"{"model": "p/m", "messages": ["#.into(), ""),
        ("/v1/messages", r#"{"model": "p/m", "#.into(), ""),
        ("/v1/responses", "not json".into(), ""),
        (
            "/v1/chat/completions",
            json!({"model": "p/m", "messages": "hi"}).to_string(),
            "messages",
        ),
        (
            "/v1/chat/completions",
            json!({"model": "p/m", "messages": user, "temperature": "warm"}).to_string(),
            "temperature",
        ),
        (
            "/v1/messages",
            json!({"model": "p/m", "messages": user, "max_tokens": "lots"}).to_string(),
            "max_tokens",
        ),
        (
            "/v1/messages",
            json!({"model": "p/m", "max_tokens": 10, "messages": [{"role": "user", "content": 7}]})
                .to_string(),
            "messages[0].content",
        ),
        ("/v1/responses", json!({"model": "p/m", "input": 5}).to_string(), "input"),
    ];
    for (path, body, field) in cases {
        let answer = cli_serve_support::Answer::of(
            server.send_raw(path, body.clone().into_bytes(), &[]).await,
        )
        .await;
        assert_eq!(answer.status, 400, "{path} {body}: {}", answer.text);
        let error = error_of(path, &answer);
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(field), "{path} {body}: {error}");
        if path != "/v1/messages" && !field.is_empty() {
            assert_eq!(error["param"], field, "{path} {body}: {error}");
        }
    }
    assert!(upstream.requests().is_empty());
}

/// `http://127.0.0.1:PORT` where nothing listens (a port just freed).
async fn closed_port() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

#[tokio::test]
async fn fallbacks_answer_before_the_first_byte_and_never_after() {
    let limited = || {
        Reply::json(
            429,
            r#"{"error": {"message": "slow down", "type": "rate_limit"}}"#,
        )
        .with_header("retry-after", "7")
    };
    for (path, body) in dialects().into_iter().take(2) {
        let w = World::new();
        let p1 = ReplayServer::start(vec![limited(), limited(), fails_after("half ")])
            .await
            .unwrap();
        let p2 = ReplayServer::start_repeating(chat_answer("from p2"))
            .await
            .unwrap();
        let p3 = ReplayServer::start(vec![Reply::hang_up()]).await.unwrap();
        w.chat_provider("p1", &p1)
            .chat_provider("p2", &p2)
            .chat_provider("p3", &p3);
        // Nothing listens there: the connection is refused.
        w.provider("p4", "openai-chat", &format!("{}/v1", closed_port().await));
        w.agent("a", "p1", "fallbacks = [\"p2/m\"]")
            .agent("b", "p1", "")
            .agent("c", "p3", "fallbacks = [\"p2/m\"]")
            .agent("d", "p4", "fallbacks = [\"p2/m\"]");
        let server = w.serve(&[]).await;

        let answer = server.post(path, &body("a", "Hi.", false), &[]).await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.text);
        assert_eq!(text_of(path, &answer.text), "from p2", "{path}");
        assert_eq!((p1.requests().len(), p2.requests().len()), (1, 1), "{path}");

        // A connection that breaks before the head, and one refused, fall back too.
        let answer = server.post(path, &body("c", "Hi.", true), &[]).await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.text);
        assert_eq!(text_of(path, &answer.text), "from p2", "{path}");
        let answer = server.post(path, &body("d", "Hi.", false), &[]).await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.text);
        assert_eq!(text_of(path, &answer.text), "from p2", "{path}");
        assert_eq!((p3.requests().len(), p2.requests().len()), (1, 3), "{path}");

        let answer = server.post(path, &body("b", "Hi.", false), &[]).await;
        assert_eq!(answer.status, 429, "{path}: {}", answer.text);
        assert_eq!(answer.header("retry-after"), Some("7"), "{path}");
        error_of(path, &answer);
        assert_eq!((p1.requests().len(), p2.requests().len()), (2, 3), "{path}");

        // After the first byte a failure is the dialect's in-stream error, not a switch.
        let answer = server.post(path, &body("a", "Hi.", true), &[]).await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.text);
        assert_eq!(
            text_of(path, &answer.text),
            "half ",
            "{path}: {}",
            answer.text
        );
        assert!(!finished(path, &answer.text), "{path}: {}", answer.text);
        let error = match path {
            "/v1/messages" => answer.text.split("event: error\ndata: ").nth(1),
            _ => answer.text.split("data: {\"error\"").nth(1),
        };
        assert!(
            error.is_some_and(|e| e.contains("upstream broke")),
            "{path}: {}",
            answer.text
        );
        assert_eq!((p1.requests().len(), p2.requests().len()), (3, 3), "{path}");
    }
}
