//! The Anthropic Messages codec against a real server: llama.cpp's `/v1/messages`, serving
//! SmolLM2-135M on loopback (see `qore_client::local`). The model is tiny, so these tests
//! assert the structure of what comes back, never the words.

mod support;

use qore_client::{protocols, Client, ClientConfig};
use qore_core::ResponseEvent;

use support::local;

/// A client speaking Anthropic Messages to the local server. Its base URL is the host
/// alone: the codec's paths start with `v1/`.
async fn client() -> Client {
    let url = local::url().await;
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

#[tokio::test]
async fn streams_a_message_from_the_local_model() {
    let client = client().await;
    let (events, outcome) = local::chat(&client, true).await;
    assert!(
        matches!(
            events.first(),
            Some(ResponseEvent::MessageStart { id: Some(_), .. })
        ),
        "{events:?}"
    );
    local::assert_streamed_turn(&events, outcome);
}

#[tokio::test]
async fn answers_a_whole_message_with_the_same_shape() {
    let client = client().await;
    let (events, outcome) = local::chat(&client, false).await;
    let (message, stop_reason, usage) = support::finished(outcome, &events);
    local::assert_one_text_block(&message);
    local::assert_natural_stop(&stop_reason);
    assert!(usage.output_tokens.unwrap_or(0) > 0, "{usage:?}");
}

#[tokio::test]
async fn lists_the_local_model() {
    local::assert_lists_the_local_model(&client().await).await;
}
