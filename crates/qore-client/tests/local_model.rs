//! A real model on loopback: SmolLM2-135M served by llama.cpp (see `qore_client::local`).
//! The first run installs the server into a venv under the cache dir. The model is tiny, so
//! these tests assert the structure of what comes back, never the words.

use futures_util::StreamExt as _;
use qore_client::{
    local, protocols, CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions,
};
use qore_core::{ContentBlock, History, Message, ResponseEvent, Role, StopReason, TurnOutcome};

async fn client() -> Client {
    let url = local::ensure_running()
        .await
        .expect("the local model server starts");
    Client::new(
        protocols::by_name("openai-chat").unwrap(),
        ClientConfig::new(url),
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
async fn streams_a_chat_completion_from_the_local_model() {
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
        matches!(events.first(), Some(ResponseEvent::MessageStart { .. })),
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
    assert!(!message.text().trim().is_empty());
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
async fn answers_a_non_streamed_request_with_the_same_shape() {
    let client = client().await;
    let history = history();
    let options = options(false);
    let request = ChatRequest {
        model: local::MODEL_ID,
        history: &history,
        tools: &[],
        options: &options,
    };
    let TurnOutcome::Finished {
        message,
        stop_reason,
        usage,
    } = client
        .stream(&request, CancellationToken::new())
        .finish()
        .await
    else {
        panic!("the turn did not finish");
    };
    assert!(
        matches!(message.blocks.as_slice(), [ContentBlock::Text { text, .. }] if !text.trim().is_empty())
    );
    assert!(stop_reason.is_some());
    assert!(usage.output_tokens.unwrap_or(0) > 0);
}

#[tokio::test]
async fn lists_the_local_model() {
    let models = client().await.list_models().await.unwrap();
    assert!(models.iter().any(|m| m.id == local::MODEL_ID), "{models:?}");
}

#[tokio::test]
async fn cancelling_mid_stream_ends_cancelled_with_nothing_to_append() {
    let client = client().await;
    let history = history();
    let options = RequestOptions {
        max_tokens: Some(200),
        ..options(true)
    };
    let request = ChatRequest {
        model: local::MODEL_ID,
        history: &history,
        tools: &[],
        options: &options,
    };
    let cancel = CancellationToken::new();
    let mut stream = client.stream(&request, cancel.clone());
    while let Some(event) = stream.next().await {
        if matches!(event, ResponseEvent::TextDelta { .. }) {
            cancel.cancel();
        }
    }
    assert!(
        matches!(stream.outcome(), Some(TurnOutcome::Cancelled { .. })),
        "{:?}",
        stream.outcome()
    );
}
