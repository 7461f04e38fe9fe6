//! How `qore` fails: recorded provider errors, an unreachable server, bad usage. Every
//! failure exits 1 (2 for usage errors) with exactly one line on stderr.

mod common;

use common::{base_url, exchange, one_line, provider_message, qore, replay};

/// Recorded 4xx answers to a chat request, at `/v1/chat/completions` or `/chat/completions`.
const RECORDED_ERRORS: &[&str] = &[
    "openai/error_identity_edge/chat_completions_validation_error_carries_identity.yaml",
    "deepseek/wire_shape_matrix/chat_completion_rejects_an_unknown_model_with_the_provider_body.yaml",
    "deepseek/wire_shape_matrix/chat_completion_rejects_a_bogus_key_with_the_provider_body.yaml",
    "mistral/response_identity_edge/blocking_unauthorized_carries_the_correlation_id.yaml",
    "mistral/logprobs_rejection_matrix/streaming_mistral_small.yaml",
    "llamacpp/error_matrix/context_overflow_streaming.yaml",
];

#[tokio::test]
async fn a_recorded_provider_error_exits_1_with_the_providers_message() {
    for rel in RECORDED_ERRORS {
        let Some(ex) = exchange(rel) else { return };
        assert!((400..500).contains(&ex.status), "{rel}");
        let message = one_line(&provider_message(&ex.response_body));
        let category = if matches!(ex.status, 401 | 403) {
            "auth"
        } else {
            "provider"
        };

        // Text mode: nothing on stdout, one line on stderr.
        let server = replay(&ex).await;
        let url = base_url(&server, &ex, "/chat/completions");
        let run = qore(&["run", "--url", &url, "--model", "m", "hi"]).await;
        assert_eq!(run.code, Some(1), "{rel}: {run:?}");
        assert_eq!(run.stdout, "", "{rel}");
        let line = run.one_stderr_line();
        assert!(line.contains(&message), "{rel}: {line:?} lacks {message:?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{rel}: no retry");
        assert_eq!(requests[0].path, ex.path, "{rel}");

        // JSON mode: the last line is the error, with the recorded status.
        let server = replay(&ex).await;
        let url = base_url(&server, &ex, "/chat/completions");
        let run = qore(&["run", "--url", &url, "--model", "m", "--json", "hi"]).await;
        assert_eq!(run.code, Some(1), "{rel}: {run:?}");
        assert!(run.one_stderr_line().contains(&message), "{rel}");
        let last = run.last_json();
        assert_eq!(last["type"], "error", "{rel}: {last}");
        assert_eq!(last["category"], category, "{rel}: {last}");
        assert_eq!(last["status"], ex.status, "{rel}: {last}");
        let text = last["message"].as_str().expect("message");
        assert!(text.contains(&message), "{rel}: {text:?} lacks {message:?}");
    }
}

#[tokio::test]
async fn a_recorded_models_error_exits_1_with_the_providers_message() {
    let rel = "openai/models/list_models_rejected_key_reports_api_error_with_context.yaml";
    let Some(ex) = exchange(rel) else { return };
    let message = one_line(&provider_message(&ex.response_body));
    let server = replay(&ex).await;
    let url = base_url(&server, &ex, "/models");
    let run = qore(&["models", "--url", &url, "--json"]).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.one_stderr_line().contains(&message), "{run:?}");
    let last = run.last_json();
    assert_eq!(last["type"], "error");
    assert_eq!(last["status"], ex.status);
    assert_eq!(ex.status, 401);
    assert_eq!(last["category"], "auth", "{last}");
}

/// A port nothing listens on (1 is reserved and never bound on test machines).
const DEAD_URL: &str = "http://127.0.0.1:1/v1";

#[tokio::test]
async fn an_unreachable_server_is_a_network_error() {
    let run = qore(&["run", "--url", DEAD_URL, "--model", "m", "hi"]).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.stdout, "");
    run.one_stderr_line();

    let run = qore(&["run", "--url", DEAD_URL, "--model", "m", "--json", "hi"]).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    run.one_stderr_line();
    let last = run.last_json();
    assert_eq!(last["type"], "error", "{last}");
    assert_eq!(last["category"], "network", "{last}");
    assert!(last["status"].is_null(), "{last}");

    let run = qore(&["models", "--url", DEAD_URL, "--json"]).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    run.one_stderr_line();
    assert_eq!(run.last_json()["category"], "network");
}

#[tokio::test]
async fn an_unknown_protocol_is_a_usage_error_listing_the_known_ones() {
    let run = qore(&[
        "run",
        "--protocol",
        "nope",
        "--url",
        DEAD_URL,
        "--model",
        "m",
        "hi",
    ])
    .await;
    assert_eq!(run.code, Some(2), "{run:?}");
    let text = &run.stderr;
    assert!(text.contains("nope"), "{text}");
    assert!(!qore_client::protocols::NAMES.is_empty());
    for name in qore_client::protocols::NAMES {
        assert!(text.contains(name), "{text:?} does not list {name}");
    }
    assert_eq!(qore(&["models", "--protocol", "nope"]).await.code, Some(2));
}

#[tokio::test]
async fn bad_usage_exits_2() {
    // No prompt.
    let run = qore(&["run", "--url", DEAD_URL, "--model", "m"]).await;
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.contains("Usage"), "{run:?}");
    assert_eq!(run.stdout, "");
    // No command, an unknown flag.
    assert_eq!(qore(&[]).await.code, Some(2));
    assert_eq!(qore(&["run", "--bogus", "hi"]).await.code, Some(2));
}

#[tokio::test]
async fn a_bad_url_is_a_config_error() {
    let run = qore(&[
        "run",
        "--url",
        "ftp://example.invalid/v1",
        "--model",
        "m",
        "--json",
        "hi",
    ])
    .await;
    assert_eq!(run.code, Some(1), "{run:?}");
    run.one_stderr_line();
    assert_eq!(run.last_json()["category"], "config");
}
