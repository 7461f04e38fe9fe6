//! Requests crossing from one dialect to another wire: hints the target cannot carry are
//! dropped and named; a tool history and an image reach a Chat Completions upstream as its
//! own shapes; an OpenAI request reaches an Anthropic upstream and its answer comes back.

use serde_json::{json, Value};

use qore_testkit::chat::chat_answer;
use qore_testkit::{ReplayServer, Reply};

use crate::cli_serve_support::upstream::{anthropic_answer, text_of};
use crate::cli_serve_support::World;

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

#[tokio::test]
async fn hints_an_openai_upstream_cannot_carry_are_named_and_counted() {
    let w = World::new();
    let upstream = ReplayServer::start_repeating(chat_answer("ok"))
        .await
        .unwrap();
    w.chat_provider("p", &upstream);
    let server = w.serve(&[]).await;
    let cached = json!({"type": "ephemeral"});
    let hinted = |stream: bool| {
        json!({"model": "p/m", "max_tokens": 100, "stream": stream,
            "system": [{"type": "text", "text": "Be brief.", "cache_control": cached}],
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "Hi.", "cache_control": cached}]}]})
    };
    for stream in [false, true] {
        let answer = server.post("/v1/messages", &hinted(stream), &[]).await;
        assert_eq!(answer.status, 200, "{}", answer.text);
        assert_eq!(text_of("/v1/messages", &answer.text), "ok");
        let dropped = answer.header("x-qore-dropped").unwrap_or_default();
        let mut named: Vec<&str> = dropped.split(',').map(str::trim).collect();
        named.sort_unstable();
        assert_eq!(
            named,
            ["cache_control", "thinking"],
            "stream {stream}: {dropped:?}"
        );
    }
    let plain = json!({"model": "p/m", "max_tokens": 100,
        "messages": [{"role": "user", "content": "Hi."}]});
    let answer = server.post("/v1/messages", &plain, &[]).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(answer.header("x-qore-dropped"), None);
    for request in upstream.requests() {
        let body = String::from_utf8_lossy(&request.body).into_owned();
        assert!(
            !body.contains("cache_control") && !body.contains("thinking"),
            "{body}"
        );
    }
    let metrics = server.metrics().await;
    for hint in ["cache_control", "thinking"] {
        let line = format!("qore_dropped_hints_total{{endpoint=\"messages\",hint=\"{hint}\"}} 2");
        assert!(metrics.lines().any(|l| l == line), "{line}:\n{metrics}");
    }
}

#[tokio::test]
async fn an_anthropic_tool_history_and_image_reach_chat_completions_as_its_own() {
    let w = World::new();
    // An image makes the server ask the provider's listing whether the model reads images
    // (once); this one does not say.
    let listing = Reply::json(
        200,
        r#"{"object": "list", "data": [{"id": "m", "object": "model"}]}"#,
    );
    let upstream = ReplayServer::start(vec![listing, chat_answer("It is sunny.")])
        .await
        .unwrap();
    w.chat_provider("p", &upstream);
    let server = w.serve(&[]).await;
    let request = json!({"model": "p/m", "max_tokens": 100,
        "tools": [{"name": "get_weather", "description": "The weather in a city.",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "Weather here?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "sunny, 21 C"}]}]});
    let answer = server.post("/v1/messages", &request, &[]).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let reply = answer.json();
    assert_eq!(reply["model"], "p/m");
    assert_eq!(text_of("/v1/messages", &answer.text), "It is sunny.");

    let sent: Vec<_> = (upstream.requests().into_iter())
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0].path.ends_with("/v1/chat/completions"),
        "{}",
        sent[0].path
    );
    let body = sent[0].json().unwrap();
    let messages: Vec<&Value> = (body["messages"].as_array().unwrap().iter())
        .filter(|m| m["role"] != "system")
        .collect();
    assert_eq!(messages.len(), 3, "{body}");
    let (user, assistant, tool) = (messages[0], messages[1], messages[2]);
    assert_eq!(user["role"], "user", "{body}");
    let parts = user["content"].as_array().expect("content parts");
    assert!(
        parts
            .iter()
            .any(|p| p["type"] == "text" && p["text"] == "Weather here?"),
        "{user}"
    );
    let url = format!("data:image/png;base64,{PNG}");
    assert!(
        parts
            .iter()
            .any(|p| p["type"] == "image_url" && p["image_url"]["url"] == url),
        "{user}"
    );
    assert_eq!(assistant["role"], "assistant", "{body}");
    let content = match &assistant["content"] {
        Value::String(text) => text.clone(),
        parts => text_parts(parts),
    };
    assert_eq!(content, "Checking.", "{assistant}");
    let calls = assistant["tool_calls"].as_array().expect("tool_calls");
    assert_eq!(calls.len(), 1, "{assistant}");
    assert_eq!(calls[0]["id"], "toolu_01A");
    assert_eq!(calls[0]["type"], "function");
    assert_eq!(calls[0]["function"]["name"], "get_weather");
    let arguments: Value =
        serde_json::from_str(calls[0]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"city": "Paris"}));
    assert_eq!(tool["role"], "tool", "{body}");
    assert_eq!(tool["tool_call_id"], "toolu_01A");
    let result = match &tool["content"] {
        Value::String(text) => text.clone(),
        parts => text_parts(parts),
    };
    assert_eq!(result, "sunny, 21 C", "{tool}");
    assert_eq!(
        body["tools"][0]["function"]["name"], "get_weather",
        "{body}"
    );
    assert_eq!(body["model"], "m");
}

fn text_parts(parts: &Value) -> String {
    (parts.as_array().into_iter().flatten())
        .filter_map(|p| p["text"].as_str())
        .collect()
}

#[tokio::test]
async fn an_openai_request_reaches_an_anthropic_upstream_and_gets_its_text() {
    for stream in [false, true] {
        let w = World::new();
        let upstream = ReplayServer::start(vec![anthropic_answer("Bonjour.")])
            .await
            .unwrap();
        w.provider("claude", "anthropic", &upstream.url());
        let server = w.serve(&[]).await;
        let path = "/v1/chat/completions";
        let request = json!({"model": "claude/claude-x", "stream": stream, "max_tokens": 50,
            "messages": [{"role": "system", "content": "Answer in French."},
                         {"role": "user", "content": "Hello."}]});
        let answer = server.post(path, &request, &[]).await;
        assert_eq!(answer.status, 200, "stream {stream}: {}", answer.text);
        assert_eq!(text_of(path, &answer.text), "Bonjour.", "stream {stream}");
        let models: Vec<Value> = match stream {
            false => vec![answer.json()["model"].clone()],
            true => (crate::cli_serve_support::upstream::sse_data(&answer.text).iter())
                .map(|d| d["model"].clone())
                .collect(),
        };
        assert!(
            !models.is_empty() && models.iter().all(|m| m == "claude/claude-x"),
            "{models:?}"
        );

        let sent = upstream.requests();
        assert_eq!(sent.len(), 1, "stream {stream}");
        assert!(sent[0].path.ends_with("/v1/messages"), "{}", sent[0].path);
        let body = sent[0].json().unwrap();
        assert_eq!(body["model"], "claude-x");
        assert_eq!(body["max_tokens"], 50, "{body}");
        let system = match &body["system"] {
            Value::String(text) => text.clone(),
            parts => text_parts(parts),
        };
        assert!(system.contains("Answer in French."), "{body}");
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 1, "{body}");
        assert_eq!(messages[0]["role"], "user");
        let said = match &messages[0]["content"] {
            Value::String(text) => text.clone(),
            parts => text_parts(parts),
        };
        assert_eq!(said, "Hello.");
    }
}
