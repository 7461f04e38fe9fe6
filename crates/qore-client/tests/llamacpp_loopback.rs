//! llama.cpp's native endpoints against a loopback fake: a successful `/infill` stream in
//! the shape llama.cpp sends (SSE `data:` chunks, the last with `stop: true`, `stop_type`,
//! counts and timings), sliced awkwardly; the recorded `/props` answers (200 and 401) from
//! the rig cassettes; `/health` while loading; and where the URLs land for a `/v1` base,
//! a bare root and a path prefix.

mod support;

use qore_client::protocols::llamacpp::{self, LlamaCpp, LlamaFim};
use qore_client::{CancellationToken, Client, ClientConfig, FimRequest, RequestOptions};
use qore_core::{ErrorCategory, ResponseEvent, StopReason, StreamOutcome};
use qore_testkit::{reply_from_exchange, ReplayServer, Reply, Slicing};
use serde_json::{json, Value};
use std::sync::Arc;

fn client(base_url: String, fim: LlamaFim) -> Client {
    Client::new(
        Arc::new(LlamaCpp::with_fim(fim)),
        ClientConfig::new(base_url),
    )
    .expect("client")
}

fn infill_stream() -> String {
    let chunk = |content: &str, predicted: u64| {
        json!({"index": 0, "content": content, "tokens": [1], "stop": false, "id_slot": -1,
               "tokens_predicted": predicted, "tokens_evaluated": 24})
    };
    let last = json!({"index": 0, "content": "", "tokens": [], "id_slot": 0, "stop": true,
        "model": "qwen2.5-coder", "tokens_predicted": 3, "tokens_evaluated": 24,
        "generation_settings": {"n_predict": 16, "stop": [], "samplers": ["top_k", "temperature"]},
        "prompt": "<|fim_prefix|>def add(a, b):\n    return <|fim_suffix|>\n<|fim_middle|>",
        "has_new_line": false, "truncated": false, "stop_type": "eos", "stopping_word": "",
        "tokens_cached": 26, "timings": {"cache_n": 20, "prompt_n": 4, "prompt_ms": 8.1,
        "predicted_n": 3, "predicted_ms": 30.2}});
    [chunk("a", 1), chunk(" + ", 2), chunk("b ✓", 3), last]
        .iter()
        .map(|c| format!("data: {c}\n\n"))
        .collect()
}

async fn collect(client: &Client, options: &RequestOptions) -> (Vec<ResponseEvent>, StreamOutcome) {
    let request = FimRequest {
        model: "qwen2.5-coder",
        prefix: "def add(a, b):\n    return ",
        suffix: "\n",
        extra: &[],
        options,
    };
    support::drain(client.complete_fim(&request, CancellationToken::new())).await
}

#[tokio::test]
async fn streams_a_successful_infill() {
    let reply = Reply::sse(infill_stream()).with_slicing(Slicing::Irregular { seed: 5, max: 6 });
    let server = ReplayServer::start(vec![reply]).await.unwrap();
    let options = RequestOptions {
        max_tokens: Some(16),
        temperature: Some(0.2),
        ..RequestOptions::default()
    };
    let client = client(format!("{}/v1", server.url()), LlamaFim::Infill);
    let (events, outcome) = collect(&client, &options).await;
    let (message, stop_reason, usage) = support::finished(outcome, &events);
    assert_eq!(message.text(), "a + b ✓");
    assert_eq!(support::text_deltas(&events), ["a", " + ", "b ✓"]);
    assert_eq!(stop_reason, Some(StopReason::EndTurn));
    assert_eq!(usage.input_tokens, Some(24));
    assert_eq!(usage.output_tokens, Some(3));
    assert_eq!(usage.cached_input_tokens, Some(20));

    let request = support::only_request(&server, "POST", "/infill");
    assert_eq!(
        request.json().unwrap(),
        json!({"input_prefix": "def add(a, b):\n    return ", "input_suffix": "\n",
               "model": "qwen2.5-coder", "stream": true, "n_predict": 16, "temperature": 0.2})
    );
}

#[tokio::test]
async fn completion_mode_posts_the_prompt_to_completion() {
    let whole = json!({"index": 0, "content": "a + b", "stop": true, "tokens_predicted": 2,
        "tokens_evaluated": 9, "stop_type": "word", "stopping_word": "\n"});
    let server = ReplayServer::start(vec![Reply::json(200, whole.to_string())])
        .await
        .unwrap();
    let options = RequestOptions {
        stream: false,
        ..RequestOptions::default()
    };
    let fim = LlamaFim::Completion {
        template: Some("<PRE> {prefix} <SUF>{suffix} <MID>".into()),
    };
    let (events, outcome) = collect(&client(server.url(), fim), &options).await;
    let (message, stop_reason, _) = support::finished(outcome, &events);
    assert_eq!(message.text(), "a + b");
    assert_eq!(stop_reason, Some(StopReason::StopSequence));
    let requests = server.requests();
    assert_eq!(requests[0].path, "/completion");
    let sent = requests[0].json().unwrap();
    assert_eq!(
        sent["prompt"],
        "<PRE> def add(a, b):\n    return  <SUF>\n <MID>"
    );
    assert_eq!(sent["stream"], false);
}

#[tokio::test]
async fn native_endpoints_keep_a_path_prefix() {
    let server = ReplayServer::start(vec![Reply::sse(infill_stream())])
        .await
        .unwrap();
    let client = client(format!("{}/llama/v1/", server.url()), LlamaFim::Infill);
    let (_, outcome) = collect(&client, &RequestOptions::default()).await;
    assert!(
        matches!(outcome, StreamOutcome::Finished { .. }),
        "{outcome:?}"
    );
    assert_eq!(server.requests()[0].path, "/llama/infill");
    assert_eq!(
        client.chat_url("m", true),
        format!("{}/llama/v1/chat/completions", server.url())
    );
}

#[tokio::test]
async fn a_501_from_infill_keeps_status_and_body() {
    let body = r#"{"error":{"code":501,"message":"Infill is not supported by this model: prefix token is missing. suffix token is missing. middle token is missing. ","type":"not_supported_error"}}"#;
    let server = ReplayServer::start(vec![Reply::json(501, body)])
        .await
        .unwrap();
    let client = client(format!("{}/v1", server.url()), LlamaFim::Infill);
    let (_, outcome) = collect(&client, &RequestOptions::default()).await;
    let StreamOutcome::Failed { error, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(error.category, ErrorCategory::Provider);
    assert_eq!(error.status(), Some(501));
    let detail = error.provider.unwrap();
    assert_eq!(detail.error_type.as_deref(), Some("not_supported_error"));
    assert_eq!(detail.body.as_deref(), Some(body));
}

/// The recorded `/props` exchanges of the rig cassettes.
fn recorded_props() -> Vec<qore_testkit::Exchange> {
    let Some(dir) = qore_testkit::fixtures_dir() else {
        return Vec::new();
    };
    let root = dir.join("rig-cassettes");
    [
        "llamacpp/unmapped_surface/props.yaml",
        "llamacpp/error_matrix/verify_accepts_the_key.yaml",
        "llamacpp/error_matrix/verify_rejects_a_missing_key.yaml",
    ]
    .iter()
    .flat_map(|path| {
        qore_testkit::load_cassette_file(&root, &root.join(path))
            .expect("a readable cassette")
            .exchanges
    })
    .filter(|ex| ex.path == "/props")
    .collect()
}

#[tokio::test]
async fn reads_recorded_props_answers() {
    let exchanges = recorded_props();
    if exchanges.is_empty() {
        eprintln!("no fixtures directory: recorded /props answers not replayed");
        return;
    }
    assert_eq!(exchanges.len(), 3);
    for (i, ex) in exchanges.iter().enumerate() {
        let reply = reply_from_exchange(
            ex,
            Slicing::Irregular {
                seed: i as u64 + 1,
                max: 7,
            },
        );
        let server = ReplayServer::start(vec![reply]).await.unwrap();
        let client = client(format!("{}/v1", server.url()), LlamaFim::Infill);
        let result = llamacpp::props(&client).await;
        assert_eq!(server.requests()[0].path, "/props");
        let wire: Value = serde_json::from_str(&ex.response_body).unwrap();
        if ex.status == 200 {
            let props = result.unwrap();
            assert_eq!(props.model_path.as_deref(), wire["model_path"].as_str());
            assert_eq!(props.model_alias.as_deref(), wire["model_alias"].as_str());
            assert_eq!(
                props.n_ctx,
                wire["default_generation_settings"]["n_ctx"].as_u64()
            );
            assert!(props.n_ctx.is_some());
            assert_eq!(props.total_slots, wire["total_slots"].as_u64());
            assert_eq!(
                props.tools,
                wire["chat_template_caps"]["supports_tools"].as_bool()
            );
            assert_eq!(props.vision, wire["modalities"]["vision"].as_bool());
            assert_eq!(props.raw, wire);
        } else {
            let error = result.unwrap_err();
            assert_eq!(error.category, ErrorCategory::Auth);
            assert_eq!(error.status(), Some(ex.status));
            assert!(error
                .message
                .contains(wire["error"]["message"].as_str().unwrap()));
            assert_eq!(
                error.provider.unwrap().body.as_deref(),
                Some(ex.response_body.as_str())
            );
        }
    }
}

#[tokio::test]
async fn health_reports_ready_and_loading() {
    let loading = r#"{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}"#;
    let server = ReplayServer::start(vec![
        Reply::json(503, loading),
        Reply::json(200, r#"{"status":"ok"}"#),
        Reply::json(
            401,
            r#"{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}"#,
        ),
    ])
    .await
    .unwrap();
    let client = client(server.url(), LlamaFim::Infill);
    let first = llamacpp::health(&client).await.unwrap();
    assert!(!first.ready);
    assert_eq!(first.status, 503);
    assert_eq!(first.message.as_deref(), Some("HTTP 503: Loading model"));
    let second = llamacpp::health(&client).await.unwrap();
    assert!(second.ready);
    assert_eq!(second.message.as_deref(), Some("ok"));
    let third = llamacpp::health(&client).await.unwrap_err();
    assert_eq!(third.category, ErrorCategory::Auth);
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/health", "/health", "/health"]);
}
