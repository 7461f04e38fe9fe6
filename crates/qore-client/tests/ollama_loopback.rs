//! Ollama's native chat against a loopback fake: hand-written answers in the NDJSON shape
//! Ollama documents (`/api/chat` lines with `message`, `done`, `done_reason`, counts), cut
//! into awkward slices (single bytes, splits inside multi-byte characters), plus the
//! `/api/tags` listing. No Ollama server runs here; these bodies stand in for it.

mod support;

use qore_client::{
    protocols, CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions,
};
use qore_core::{
    ContentBlock, ErrorCategory, History, Message, ResponseEvent, Role, StopReason, StreamOutcome,
    ToolResultPart, ToolSpec,
};
use qore_testkit::{RecordedRequest, ReplayServer, Reply, Slicing};
use serde_json::{json, Value};

const NDJSON: &str = "application/x-ndjson";

fn ndjson(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn line(message: Value) -> Value {
    json!({"model": "qwen3:4b", "created_at": "2025-10-17T23:14:07.414671Z", "message": message, "done": false})
}

fn done(reason: &str) -> Value {
    json!({"model": "qwen3:4b", "created_at": "2025-10-17T23:14:08Z",
           "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": reason,
           "total_duration": 174560334, "load_duration": 101397084, "prompt_eval_count": 11,
           "prompt_eval_duration": 13074791, "eval_count": 18, "eval_duration": 52479709})
}

fn client(server: &ReplayServer) -> Client {
    Client::new(
        protocols::by_name("ollama").expect("ollama is registered"),
        ClientConfig::new(server.url()),
    )
    .expect("client")
}

async fn run(
    client: &Client,
    history: &History,
    tools: &[ToolSpec],
    options: &RequestOptions,
) -> (Vec<ResponseEvent>, StreamOutcome) {
    let request = ChatRequest {
        model: "qwen3:4b",
        history,
        tools,
        options,
    };
    support::drain(client.stream(&request, CancellationToken::new())).await
}

/// The one request of a single-turn test: a `POST /api/chat`.
fn only_request(server: &ReplayServer) -> RecordedRequest {
    support::only_request(server, "POST", "/api/chat")
}

#[tokio::test]
async fn streams_thinking_then_text_cut_into_single_bytes() {
    let body = ndjson(&[
        line(json!({"role": "assistant", "content": "", "thinking": "The user greets; "})),
        line(json!({"role": "assistant", "content": "", "thinking": "answer in kind ☺."})),
        line(json!({"role": "assistant", "content": "Bonjour, "})),
        line(json!({"role": "assistant", "content": "ça va? 😀"})),
        done("stop"),
    ]);
    for slicing in [Slicing::Fixed(1), Slicing::Irregular { seed: 7, max: 5 }] {
        let reply = Reply::new(200, body.clone())
            .with_header("content-type", NDJSON)
            .with_slicing(slicing);
        let server = ReplayServer::start(vec![reply]).await.unwrap();
        let mut extra = serde_json::Map::new();
        extra.insert("think".into(), json!(true));
        let options = RequestOptions {
            max_tokens: Some(64),
            extra,
            ..RequestOptions::default()
        };
        let history = History::from(vec![Message::system("be kind"), Message::user("salut")]);
        let (events, outcome) = run(&client(&server), &history, &[], &options).await;
        let (message, stop_reason, usage) = support::finished(outcome, &events);
        assert_eq!(
            message.blocks,
            vec![
                ContentBlock::Thinking {
                    text: "The user greets; answer in kind ☺.".into(),
                    signature: None
                },
                ContentBlock::text("Bonjour, ça va? 😀"),
            ]
        );
        assert_eq!(stop_reason, Some(StopReason::EndTurn));
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (Some(11), Some(18))
        );
        assert!(matches!(
            events.first(),
            Some(ResponseEvent::MessageStart { model: Some(m), .. }) if m == "qwen3:4b"
        ));
        let sent = only_request(&server).json().expect("a JSON request");
        assert_eq!(sent["stream"], true);
        assert_eq!(sent["think"], true);
        assert_eq!(sent["options"]["num_predict"], 64);
        assert_eq!(
            sent["messages"][0],
            json!({"role": "system", "content": "be kind"})
        );
    }
}

#[tokio::test]
async fn tool_calls_fold_and_the_continuation_carries_calls_and_results() {
    let first = ndjson(&[
        line(json!({"role": "assistant", "content": "", "thinking": "Two lookups."})),
        line(json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_w", "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Tokyo"}}}]})),
        line(json!({"role": "assistant", "content": "", "tool_calls": [
            {"function": {"index": 1, "name": "get_time", "arguments": {"zone": "Asia/Tokyo", "h24": true}}}]})),
        done("stop"),
    ]);
    let second = ndjson(&[
        line(json!({"role": "assistant", "content": "Sunny, 14:00."})),
        done("stop"),
    ]);
    let server = ReplayServer::start(vec![
        Reply::new(200, first)
            .with_header("content-type", NDJSON)
            .with_slicing(Slicing::Irregular { seed: 3, max: 4 }),
        Reply::new(200, second).with_header("content-type", NDJSON),
    ])
    .await
    .unwrap();
    let client = client(&server);
    let tools = [ToolSpec {
        name: "get_weather".into(),
        description: "weather by city".into(),
        input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    }];
    let options = RequestOptions::default();
    let mut history = History::from(vec![Message::user("weather and time in Tokyo?")]);
    let (events, outcome) = run(&client, &history, &tools, &options).await;
    let (message, stop_reason, _) = support::finished(outcome, &events);
    assert_eq!(stop_reason, Some(StopReason::ToolUse));
    let calls: Vec<(String, String, Value)> = message
        .blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse {
                id, name, input, ..
            } => Some((id.clone(), name.clone(), input.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2, "{message:?}");
    assert_eq!(calls[0].0, "call_w");
    assert_eq!(calls[0].2, json!({"city": "Tokyo"}));
    assert!(calls[1].0.starts_with("call_") && calls[1].0 != "call_w");
    assert_eq!(calls[1].2, json!({"zone": "Asia/Tokyo", "h24": true}));

    history.push(message);
    history.push(Message::new(
        Role::User,
        calls
            .iter()
            .zip(["sunny", "14:00"])
            .map(|((id, _, _), text)| ContentBlock::ToolResult {
                tool_use_id: id.clone(),
                content: vec![ToolResultPart::Text { text: text.into() }],
                is_error: false,
            })
            .collect(),
    ));
    let (_, outcome) = run(&client, &history, &tools, &options).await;
    assert!(
        matches!(outcome, StreamOutcome::Finished { ref message, .. } if message.text() == "Sunny, 14:00.")
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let sent = requests[1].json().expect("a JSON request");
    assert_eq!(sent["tools"][0]["function"]["name"], "get_weather");
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["thinking"], "Two lookups.");
    assert_eq!(
        messages[1]["tool_calls"],
        json!([
            {"id": "call_w", "function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}},
            {"id": calls[1].0, "function": {"name": "get_time", "arguments": {"zone": "Asia/Tokyo", "h24": true}}},
        ])
    );
    assert_eq!(
        messages[2],
        json!({"role": "tool", "content": "sunny", "tool_name": "get_weather", "tool_call_id": "call_w"})
    );
    assert_eq!(messages[3]["tool_name"], "get_time");
    assert_eq!(messages[3]["tool_call_id"], calls[1].0.as_str());
}

#[tokio::test]
async fn an_error_line_in_a_200_stream_fails_the_turn() {
    let error_line =
        json!({"error": "an error was encountered while running the model: CUDA error"});
    let body = ndjson(&[
        line(json!({"role": "assistant", "content": "Part"})),
        error_line.clone(),
    ]);
    let server = ReplayServer::start(vec![Reply::new(200, body)
        .with_header("content-type", NDJSON)
        .with_slicing(Slicing::Fixed(3))])
    .await
    .unwrap();
    let history = History::from(vec![Message::user("hi")]);
    let (_, outcome) = run(&client(&server), &history, &[], &RequestOptions::default()).await;
    let StreamOutcome::Failed { error, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(error.category, ErrorCategory::Provider);
    assert_eq!(
        error.message,
        "an error was encountered while running the model: CUDA error"
    );
    let line = error_line.to_string();
    assert_eq!(
        error.provider.and_then(|p| p.body).as_deref(),
        Some(line.as_str())
    );
}

#[tokio::test]
async fn a_stream_cut_before_its_done_line_is_a_network_error() {
    let body = ndjson(&[
        line(json!({"role": "assistant", "content": "It was the best"})),
        line(json!({"role": "assistant", "content": " of times"})),
    ]);
    // The last line even lacks its newline: the framer still hands it over.
    let body = body.trim_end().to_owned();
    let server = ReplayServer::start(vec![Reply::new(200, body)
        .with_header("content-type", NDJSON)
        .with_slicing(Slicing::Irregular { seed: 11, max: 6 })])
    .await
    .unwrap();
    let history = History::from(vec![Message::user("quote")]);
    let (events, outcome) = run(&client(&server), &history, &[], &RequestOptions::default()).await;
    assert!(events
        .iter()
        .any(|e| matches!(e, ResponseEvent::TextDelta { text } if text == " of times")));
    let StreamOutcome::Failed { error, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(error.category, ErrorCategory::Network);
    assert!(error.message.contains("ended before"), "{}", error.message);
}

#[tokio::test]
async fn an_http_error_keeps_status_and_body() {
    let body = r#"{"error":"model \"qwen9:99b\" not found, try pulling it first"}"#;
    let server = ReplayServer::start(vec![Reply::json(404, body)])
        .await
        .unwrap();
    let history = History::from(vec![Message::user("hi")]);
    let (_, outcome) = run(&client(&server), &history, &[], &RequestOptions::default()).await;
    let StreamOutcome::Failed { error, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(error.category, ErrorCategory::Provider);
    assert_eq!(error.status(), Some(404));
    assert_eq!(
        error.message,
        "HTTP 404: model \"qwen9:99b\" not found, try pulling it first"
    );
    assert_eq!(error.provider.and_then(|p| p.body).as_deref(), Some(body));
}

#[tokio::test]
async fn a_whole_answer_decodes_like_a_stream() {
    let body = json!({"model": "qwen3:4b", "created_at": "2025-10-17T23:14:07Z",
        "message": {"role": "assistant", "content": "Short.", "thinking": "Be brief."},
        "done": true, "done_reason": "length", "prompt_eval_count": 5, "eval_count": 2});
    let server = ReplayServer::start(vec![Reply::json(200, body.to_string())])
        .await
        .unwrap();
    let options = RequestOptions {
        stream: false,
        max_tokens: Some(2),
        ..RequestOptions::default()
    };
    let history = History::from(vec![Message::user("hi")]);
    let (events, outcome) = run(&client(&server), &history, &[], &options).await;
    let (message, stop_reason, usage) = support::finished(outcome, &events);
    assert_eq!(message.text(), "Short.");
    assert_eq!(stop_reason, Some(StopReason::MaxTokens));
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(5), Some(2))
    );
    assert_eq!(only_request(&server).json().unwrap()["stream"], false);
}

#[tokio::test]
async fn lists_models_from_api_tags() {
    let body = json!({"models": [
        {"name": "qwen3:4b", "model": "qwen3:4b", "size": 2497293931u64, "digest": "359d",
         "details": {"family": "qwen3", "families": ["qwen3"], "format": "gguf",
                     "parameter_size": "4.0B", "quantization_level": "Q4_K_M"}},
        {"name": "llava:latest", "model": "llava:latest",
         "details": {"family": "llama", "families": ["llama", "clip"], "parameter_size": "7B",
                     "quantization_level": "Q4_0"}}]});
    let server = ReplayServer::start(vec![
        Reply::json(200, body.to_string()).with_slicing(Slicing::Fixed(9))
    ])
    .await
    .unwrap();
    let models = client(&server).list_models().await.unwrap();
    support::only_request(&server, "GET", "/api/tags");
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["qwen3:4b", "llava:latest"]);
    assert_eq!(
        models[0].display_name.as_deref(),
        Some("qwen3:4b (qwen3, 4.0B, Q4_K_M)")
    );
    assert_eq!(models[1].capabilities.images, Some(true));
}
