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
