//! A real model on loopback: SmolLM2-135M served by llama.cpp (see `qore_client::local`).
//! The first run installs the server into a venv under the cache dir. The model is tiny, so
//! these tests assert the structure of what comes back, never the words.

mod support;

use futures_util::StreamExt as _;
use qore_client::{CancellationToken, Client, RequestOptions};
use qore_core::{ResponseEvent, StreamOutcome};

use support::local::{self, history, options, request};

async fn client() -> Client {
    local::client("openai-chat").await
}

#[tokio::test]
async fn streams_a_chat_completion_from_the_local_model() {
    let client = client().await;
    let (events, outcome) = local::chat(&client, true).await;
    assert!(
        matches!(events.first(), Some(ResponseEvent::MessageStart { .. })),
        "{events:?}"
    );
    local::assert_streamed_turn(&events, outcome);
}

#[tokio::test]
async fn answers_a_non_streamed_request_with_the_same_shape() {
    let client = client().await;
    let (events, outcome) = local::chat(&client, false).await;
    let (message, stop_reason, usage) = support::finished(outcome, &events);
    local::assert_one_text_block(&message);
    assert!(stop_reason.is_some());
    assert!(usage.output_tokens.unwrap_or(0) > 0);
}

#[tokio::test]
async fn lists_the_local_model() {
    local::assert_lists_the_local_model(&client().await).await;
}

#[tokio::test]
async fn cancelling_mid_stream_ends_cancelled_with_nothing_to_append() {
    let client = client().await;
    let history = history();
    let options = RequestOptions {
        max_tokens: Some(200),
        ..options(true)
    };
    let cancel = CancellationToken::new();
    let mut stream = client.stream(&request(&history, &options), cancel.clone());
    while let Some(event) = stream.next().await {
        if matches!(event, ResponseEvent::TextDelta { .. }) {
            cancel.cancel();
        }
    }
    assert!(
        matches!(stream.outcome(), Some(StreamOutcome::Cancelled { .. })),
        "{:?}",
        stream.outcome()
    );
}
