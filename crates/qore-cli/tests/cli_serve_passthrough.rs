//! What only the caller's own vendor can take goes on to that vendor alone: an Anthropic
//! Messages request to an Anthropic upstream keeps its `anthropic-version` and
//! `anthropic-beta` headers and its signed thinking (nothing named as dropped); the same
//! request to a Chat Completions upstream sends neither, and names both. Real binary,
//! loopback upstreams.

mod cli_serve_support;
mod common;

use cli_serve_support::upstream::anthropic_answer;
use cli_serve_support::World;
use qore_testkit::chat::chat_answer;
use qore_testkit::ReplayServer;
use serde_json::{json, Value};

fn request() -> Value {
    json!({"model": "MODEL", "max_tokens": 64, "messages": [
        {"role": "user", "content": "add 2 and 2"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "2+2 is 4", "signature": "sig-abc"},
            {"type": "text", "text": "4"}]},
        {"role": "user", "content": "and 3 more?"}]})
}

#[tokio::test]
async fn vendor_headers_and_signed_thinking_reach_only_their_own_wire() {
    let anthropic = ReplayServer::start_repeating(anthropic_answer("7"))
        .await
        .unwrap();
    let chat = ReplayServer::start_repeating(chat_answer("7"))
        .await
        .unwrap();
    let w = World::new();
    w.provider("claude", "anthropic", &anthropic.url())
        .chat_provider("gpt", &chat);
    let mut server = w.serve(&[]).await;
    let headers = [
        ("anthropic-version", "2023-06-01"),
        ("anthropic-beta", "interleaved-thinking-2025-05-14"),
    ];
    // (model, upstream, headers and thinking passed on)
    let cases = [("claude/c", &anthropic, true), ("gpt/g", &chat, false)];
    for (model, upstream, passed) in cases {
        let mut body = request();
        body["model"] = json!(model);
        let answer = server.post("/v1/messages", &body, &headers).await;
        assert_eq!(answer.status, 200, "{model}: {}", answer.text);
        let dropped = answer.header("x-qore-dropped").unwrap_or("").to_owned();
        let sent = upstream.take_requests();
        assert_eq!(sent.len(), 1, "{model}");
        let beta = sent[0].header("anthropic-beta").map(str::to_owned);
        let upstream_body = sent[0].json().unwrap();
        let signed = upstream_body.to_string().contains("sig-abc");
        if passed {
            assert_eq!(
                beta.as_deref(),
                Some("interleaved-thinking-2025-05-14"),
                "{model}"
            );
            assert_eq!(sent[0].header("anthropic-version"), Some("2023-06-01"));
            assert!(signed, "{model}: {upstream_body}");
            assert!(!dropped.contains("anthropic-beta"), "{model}: {dropped}");
            assert!(!dropped.contains("thinking"), "{model}: {dropped}");
        } else {
            assert_eq!(beta, None, "{model}");
            assert!(!signed, "{model}: {upstream_body}");
            assert!(dropped.contains("anthropic-beta"), "{model}: {dropped:?}");
            assert!(dropped.contains("thinking"), "{model}: {dropped:?}");
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn a_provider_key_never_reaches_a_client_a_log_line_or_a_metric() {
    const SECRET: &str = "sk-live-7f3a9c2e51d04b8a";
    let echo = format!(
        "{{\"error\": {{\"message\": \"Incorrect API key provided: {SECRET}\", \"type\": \"invalid_request_error\"}}}}"
    );
    let upstream = ReplayServer::start_cycling(vec![
        qore_testkit::Reply::json(401, echo.clone()),
        qore_testkit::Reply::json(500, echo),
        chat_answer(&format!("the key was {SECRET}? no")),
    ])
    .await
    .unwrap();
    let w = World::new();
    let key_file = w.config.join("provider.key");
    std::fs::write(&key_file, SECRET).unwrap();
    let provider = format!(
        "name = \"vendor\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\napi_key_file = {:?}\n",
        upstream.url(),
        key_file.display().to_string()
    );
    std::fs::write(w.config.join("providers/vendor.toml"), provider).unwrap();
    let mut server = w.serve(&[]).await;
    let body = json!({"model": "vendor/m", "messages": [{"role": "user", "content": "hi"}]});
    let mut answers = Vec::new();
    for path in ["/v1/chat/completions", "/v1/messages"] {
        let mut body = body.clone();
        body["max_tokens"] = json!(16);
        let answer = server.post(path, &body, &[]).await;
        answers.push((answer.status, answer.text));
    }
    // The key was used: the upstream saw it.
    let sent = upstream.requests();
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
    // Errors reach the caller redacted; the model's own words are the model's.
    for (status, text) in &answers {
        assert!(*status >= 400, "{status} {text}");
        assert!(!text.contains(SECRET), "{text}");
    }
    // The provider's own message reaches the caller, less the key.
    assert!(
        answers[0].1.contains("Incorrect API key"),
        "{:?}",
        answers[0]
    );
    let metrics = server.metrics().await;
    assert!(
        !metrics.contains(SECRET) && !metrics.contains(&SECRET[8..]),
        "{metrics}"
    );
    server.stop().await;
    let log = server.stderr();
    assert!(!log.contains(&SECRET[8..]), "{log}");
}
