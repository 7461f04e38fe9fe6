//! Mistral fill-in-the-middle (`POST /v1/fim/completions`) against a loopback fake. The
//! answers are written from Mistral's documented shape (FIM answers are Chat Completions
//! chunks: `chat.completion.chunk` frames with `choices[0].delta.content`, the `p` padding
//! field Mistral adds, usage on the last chunk, then `[DONE]`) and its error envelopes as
//! recorded in the rig cassettes.

mod support;

use qore_client::{protocols, CancellationToken, Client, ClientConfig, FimRequest, RequestOptions};
use qore_core::{ErrorCategory, ResponseEvent, StopReason, StreamOutcome};
use qore_testkit::{ReplayServer, Reply, Slicing};
use serde_json::json;

fn client(server: &ReplayServer, key: &str) -> Client {
    let config = ClientConfig {
        api_key: Some(key.to_owned()),
        ..ClientConfig::new(format!("{}/v1", server.url()))
    };
    Client::new(
        protocols::by_name("codestral").expect("codestral alias"),
        config,
    )
    .unwrap()
}

/// The `data:` frames of a streamed FIM answer, `[DONE]` last.
fn fim_frames() -> Vec<String> {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        json!({"id": "5b1d2e0c8f9a4c33", "object": "chat.completion.chunk", "created": 1718000000,
               "model": "codestral-latest", "p": "abcdefgh",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut last = chunk(json!({"content": ""}), Some("stop"));
    last["usage"] = json!({"prompt_tokens": 21, "completion_tokens": 12, "total_tokens": 33});
    let frames = [
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"content": "\n    a, b = 0, 1"}), None),
        chunk(json!({"content": "\n    for _ in range(n):"}), None),
        chunk(json!({"content": "\n        a, b = b, a + b"}), None),
        last,
    ];
    let mut frames: Vec<String> = frames.iter().map(|f| format!("data: {f}\n\n")).collect();
    frames.push("data: [DONE]\n\n".to_owned());
    frames
}

fn fim_stream() -> String {
    fim_frames().concat()
}

async fn complete(
    client: &Client,
    options: &RequestOptions,
) -> (Vec<ResponseEvent>, StreamOutcome) {
    let request = FimRequest {
        model: "codestral-latest",
        prefix: "def fibonacci(n: int):",
        suffix: "\n    return a",
        extra: &[],
        options,
    };
    support::drain(client.complete_fim(&request, CancellationToken::new())).await
}

#[tokio::test]
async fn streams_a_fim_completion() {
    let reply = Reply::sse(fim_stream()).with_slicing(Slicing::Irregular { seed: 9, max: 5 });
    let server = ReplayServer::start(vec![reply]).await.unwrap();
    let options = RequestOptions {
        max_tokens: Some(64),
        temperature: Some(0.0),
        ..RequestOptions::default()
    };
    let (events, outcome) = complete(&client(&server, "sk-test"), &options).await;
    let (message, stop_reason, usage) = support::finished(outcome, &events);
    assert_eq!(
        message.text(),
        "\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b"
    );
    assert_eq!(support::text_deltas(&events).len(), 3);
    assert_eq!(stop_reason, Some(StopReason::EndTurn));
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(21), Some(12))
    );

    let request = support::only_request(&server, "POST", "/v1/fim/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(
        request.json().unwrap(),
        json!({"model": "codestral-latest", "prompt": "def fibonacci(n: int):",
               "suffix": "\n    return a", "stream": true, "max_tokens": 64, "temperature": 0.0})
    );
}

#[tokio::test]
async fn a_whole_fim_answer_decodes_the_same() {
    let body = json!({"id": "9f0e", "object": "chat.completion", "created": 1718000000,
        "model": "codestral-latest",
        "usage": {"prompt_tokens": 21, "completion_tokens": 4, "total_tokens": 25},
        "choices": [{"index": 0, "finish_reason": "length",
                     "message": {"role": "assistant", "content": "\n    a, b", "tool_calls": null, "prefix": false}}]});
    let server = ReplayServer::start(vec![Reply::json(200, body.to_string())])
        .await
        .unwrap();
    let options = RequestOptions {
        stream: false,
        max_tokens: Some(4),
        ..RequestOptions::default()
    };
    let (events, outcome) = complete(&client(&server, "k"), &options).await;
    let (message, stop_reason, _) = support::finished(outcome, &events);
    assert_eq!(message.text(), "\n    a, b");
    assert_eq!(stop_reason, Some(StopReason::MaxTokens));
    assert_eq!(server.requests()[0].json().unwrap()["stream"], false);
}

#[tokio::test]
async fn error_envelopes_keep_status_type_and_body() {
    let invalid = r#"{"code":"1500","message":"Invalid model: codestral-nope","object":"error","param":null,"raw_status_code":400,"type":"invalid_model"}"#;
    let unauthorized = r#"{"detail":"Invalid API Key"}"#;
    let server = ReplayServer::start(vec![
        Reply::json(400, invalid),
        Reply::json(401, unauthorized),
    ])
    .await
    .unwrap();
    let client = client(&server, "k");
    let (_, outcome) = complete(&client, &RequestOptions::default()).await;
    let StreamOutcome::Failed { error, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(error.category, ErrorCategory::Provider);
    assert_eq!(error.status(), Some(400));
    assert_eq!(error.message, "HTTP 400: Invalid model: codestral-nope");
    let detail = error.provider.unwrap();
    assert_eq!(detail.error_type.as_deref(), Some("invalid_model"));
    assert_eq!(detail.body.as_deref(), Some(invalid));

    let (_, outcome) = complete(&client, &RequestOptions::default()).await;
    let StreamOutcome::Failed { error, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(error.category, ErrorCategory::Auth);
    assert_eq!(error.message, "HTTP 401: Invalid API Key");
    assert_eq!(error.provider.unwrap().body.as_deref(), Some(unauthorized));
}

#[tokio::test]
async fn a_fim_stream_cut_before_its_end_is_a_network_error() {
    let cut = fim_frames()[..3].concat();
    let server = ReplayServer::start(vec![Reply::sse(cut)]).await.unwrap();
    let (_, outcome) = complete(&client(&server, "k"), &RequestOptions::default()).await;
    let StreamOutcome::Failed { error, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(error.category, ErrorCategory::Network);
}
