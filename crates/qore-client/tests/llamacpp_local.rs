//! llama.cpp's native endpoints on the real local server (SmolLM2-135M under xllamacpp, see
//! `qore_client::local`; started like `local_model.rs` does when it is not running, never
//! stopped). The model is tiny and has no FIM tokens: `/infill` must come out as a 501
//! provider error, `/completion` must stream a real fill-in-the-middle answer. Assertions are
//! about structure, never about the words.

use std::sync::Arc;

mod support;

use qore_client::protocols::llamacpp::{self, LlamaCpp, LlamaFim};
use qore_client::{local, CancellationToken, Client, ClientConfig, FimRequest, RequestOptions};
use qore_core::{ErrorCategory, ResponseEvent, StreamOutcome};

/// A client for the local server; `root` drops the `/v1` of the usual base URL (both must
/// reach the native endpoints).
async fn client(fim: LlamaFim, root: bool) -> Client {
    let url = support::local::url().await;
    let url = if root {
        url.trim_end_matches("/v1").to_owned()
    } else {
        url
    };
    Client::new(Arc::new(LlamaCpp::with_fim(fim)), ClientConfig::new(url)).unwrap()
}

fn request(options: &RequestOptions) -> FimRequest<'_> {
    FimRequest {
        model: local::MODEL_ID,
        prefix: "def add(a, b):\n    return ",
        suffix: "\n\nprint(add(1, 2))\n",
        extra: &[],
        options,
    }
}

fn options(stream: bool, max_tokens: u32) -> RequestOptions {
    RequestOptions {
        stream,
        max_tokens: Some(max_tokens),
        temperature: Some(0.0),
        ..RequestOptions::default()
    }
}

#[tokio::test]
async fn infill_on_a_model_without_fim_tokens_is_a_501_that_keeps_the_body() {
    let client = client(LlamaFim::Infill, false).await;
    let options = options(true, 8);
    let outcome = client
        .complete_fim(&request(&options), CancellationToken::new())
        .finish()
        .await;
    let StreamOutcome::Failed { error, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(error.category, ErrorCategory::Provider);
    assert_eq!(error.status(), Some(501));
    let detail = error.provider.as_ref().unwrap();
    let body: serde_json::Value =
        serde_json::from_str(detail.body.as_deref().expect("the body is kept")).unwrap();
    assert_eq!(body["error"]["code"], 501);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(error.message.contains(message), "{}", error.message);
    assert_eq!(detail.error_type.as_deref(), body["error"]["type"].as_str());
}

#[tokio::test]
async fn completion_mode_streams_a_real_fill_in_the_middle_answer() {
    let client = client(LlamaFim::Completion { template: None }, false).await;
    let options = options(true, 8);
    let stream = client.complete_fim(&request(&options), CancellationToken::new());
    let (events, outcome) = support::drain(stream).await;
    assert!(
        matches!(events.first(), Some(ResponseEvent::MessageStart { .. })),
        "{events:?}"
    );
    let deltas = support::text_deltas(&events);
    assert!(
        deltas.len() > 1,
        "expected several streamed deltas: {events:?}"
    );
    let (message, stop_reason, usage) = support::finished(outcome, &events);
    assert_eq!(message.text(), deltas.concat());
    support::local::assert_natural_stop(&stop_reason);
    support::local::assert_counted(&usage, 8);
    assert!(
        matches!(events.last(), Some(ResponseEvent::Stop { .. })),
        "{events:?}"
    );
}

#[tokio::test]
async fn completion_mode_answers_whole_bodies_from_the_server_root() {
    let client = client(LlamaFim::Completion { template: None }, true).await;
    let options = options(false, 4);
    let outcome = client
        .complete_fim(&request(&options), CancellationToken::new())
        .finish()
        .await;
    let StreamOutcome::Finished {
        stop_reason, usage, ..
    } = outcome
    else {
        panic!("{outcome:?}");
    };
    assert!(stop_reason.is_some());
    assert!(usage.output_tokens.unwrap_or(0) > 0, "{usage:?}");
}

#[tokio::test]
async fn health_and_props_describe_the_local_server() {
    for root in [false, true] {
        let client = client(LlamaFim::Infill, root).await;
        let health = llamacpp::health(&client).await.unwrap();
        assert!(health.ready, "{health:?}");
        assert_eq!(health.status, 200);
        let props = llamacpp::props(&client).await.unwrap();
        assert_eq!(props.model_alias.as_deref(), Some(local::MODEL_ID));
        assert!(props.n_ctx.unwrap_or(0) > 0, "{props:?}");
        assert!(
            props
                .model_path
                .as_deref()
                .is_some_and(|p| p.ends_with(".gguf")),
            "{:?}",
            props.model_path
        );
        assert_eq!(props.vision, Some(false));
    }
}

#[tokio::test]
async fn chat_and_listing_go_through_chat_completions() {
    let client = client(LlamaFim::Infill, false).await;
    support::local::assert_lists_the_local_model(&client).await;
}
