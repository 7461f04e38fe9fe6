//! The Anthropic Messages codec against a real server: llama.cpp's `/v1/messages`, serving
//! SmolLM2-135M on loopback (see `qore_client::local`). The model is tiny, so these tests
//! assert the structure of what comes back, never the words.

use futures_util::StreamExt as _;
use qore_client::{
    local, protocols, CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions,
};
use qore_core::{ContentBlock, History, Message, ResponseEvent, Role, StopReason, TurnOutcome};

/// A client speaking Anthropic Messages to the local server. Its base URL is the host
/// alone: the codec's paths start with `v1/`.
async fn client() -> Client {
    let url = local::ensure_running()
        .await
        .expect("the local model server starts");
    let base = url.trim_end_matches('/').trim_end_matches("/v1").to_owned();
    Client::new(
        protocols::by_name("anthropic").unwrap(),
        ClientConfig {
            api_key: Some("unused-by-llama.cpp".into()),
            ..ClientConfig::new(base)
        },
    )
    .unwrap()
}

fn history() -> History {
    History::from(vec![
        Message::system("You are a helpful assistant. Answer briefly."),
        Message::user("Name one colour."),
    ])
}

fn options(stream: bool) -> RequestOptions {
    RequestOptions {
        stream,
        max_tokens: Some(16),
        temperature: Some(0.0),
        ..RequestOptions::default()
    }
}

#[tokio::test]
async fn streams_a_message_from_the_local_model() {
    let client = client().await;
    let history = history();
    let options = options(true);
    let request = ChatRequest {
        model: local::MODEL_ID,
        history: &history,
        tools: &[],
        options: &options,
    };
    let mut stream = client.stream(&request, CancellationToken::new());
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
    assert!(
        matches!(
            events.first(),
            Some(ResponseEvent::MessageStart { id: Some(_), .. })
        ),
        "{events:?}"
    );
    let deltas: String = events
        .iter()
        .filter_map(|e| match e {
            ResponseEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let TurnOutcome::Finished {
        message,
        stop_reason,
        usage,
    } = stream.finish().await
    else {
        panic!("the turn did not finish: {events:?}");
    };
    assert_eq!(message.role, Role::Assistant);
    assert!(!message.text().trim().is_empty(), "{message:?}");
    assert_eq!(message.text(), deltas);
    assert!(
        matches!(
            stop_reason,
            Some(StopReason::EndTurn | StopReason::MaxTokens)
        ),
        "{stop_reason:?}"
    );
    assert!(usage.input_tokens.unwrap_or(0) > 0, "{usage:?}");
    let output = usage.output_tokens.unwrap_or(0);
    assert!(output > 0 && output <= 16, "{usage:?}");
}

#[tokio::test]
async fn answers_a_whole_message_with_the_same_shape() {
    let client = client().await;
    let history = history();
    let options = options(false);
    let request = ChatRequest {
        model: local::MODEL_ID,
        history: &history,
        tools: &[],
        options: &options,
    };
    let outcome = client
        .stream(&request, CancellationToken::new())
        .finish()
        .await;
    let TurnOutcome::Finished {
        message,
        stop_reason,
        usage,
    } = outcome
    else {
        panic!("the turn did not finish: {outcome:?}");
    };
    assert!(
        matches!(message.blocks.as_slice(), [ContentBlock::Text { text, .. }] if !text.trim().is_empty()),
        "{message:?}"
    );
    assert!(
        matches!(
            stop_reason,
            Some(StopReason::EndTurn | StopReason::MaxTokens)
        ),
        "{stop_reason:?}"
    );
    assert!(usage.output_tokens.unwrap_or(0) > 0, "{usage:?}");
}

#[tokio::test]
async fn lists_the_local_model() {
    let models = client().await.list_models().await.unwrap();
    assert!(models.iter().any(|m| m.id == local::MODEL_ID), "{models:?}");
}
