//! What the tests against the real local model server (SmolLM2-135M under llama.cpp, see
//! `qore_client::local`) share: its URL and a client for it, the one short chat they send,
//! and the structural assertions on what comes back. The model is tiny, so nothing here
//! looks at the words.

use qore_client::{
    local, protocols, CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions,
};
use qore_core::{
    ContentBlock, History, Message, ResponseEvent, Role, StopReason, StreamOutcome, Usage,
};

/// The local server's usual base URL (ending in `/v1`), started when it is not running.
pub async fn url() -> String {
    local::ensure_running()
        .await
        .expect("the local model server starts")
}

/// A client speaking `protocol` to the local server at its usual base URL.
pub async fn client(protocol: &str) -> Client {
    Client::new(
        protocols::by_name(protocol).unwrap(),
        ClientConfig::new(url().await),
    )
    .unwrap()
}

/// A system prompt asking for brevity and a one-line question.
pub fn history() -> History {
    History::from(vec![
        Message::system("You are a helpful assistant. Answer briefly."),
        Message::user("Name one colour."),
    ])
}

/// At most [`MAX_TOKENS`] tokens, temperature 0, streamed or not.
pub fn options(stream: bool) -> RequestOptions {
    RequestOptions {
        stream,
        max_tokens: Some(MAX_TOKENS),
        temperature: Some(0.0),
        ..RequestOptions::default()
    }
}

/// The output bound [`options`] sets.
pub const MAX_TOKENS: u32 = 16;

/// `history` to the local model, no tools.
pub fn request<'a>(history: &'a History, options: &'a RequestOptions) -> ChatRequest<'a> {
    ChatRequest {
        model: local::MODEL_ID,
        history,
        tools: &[],
        options,
    }
}

/// The events and outcome of the short chat ([`history`], [`options`]) with `client`,
/// streamed or not.
pub async fn chat(client: &Client, stream: bool) -> (Vec<ResponseEvent>, StreamOutcome) {
    let (history, options) = (history(), options(stream));
    let stream = client.stream(&request(&history, &options), CancellationToken::new());
    super::drain(stream).await
}

/// The turn stopped by itself or at the token bound.
pub fn assert_natural_stop(stop_reason: &Option<StopReason>) {
    assert!(
        matches!(
            stop_reason,
            Some(StopReason::EndTurn | StopReason::MaxTokens)
        ),
        "{stop_reason:?}"
    );
}

/// Input tokens were counted, and between 1 and `max_output` output tokens.
pub fn assert_counted(usage: &Usage, max_output: u64) {
    assert!(usage.input_tokens.unwrap_or(0) > 0, "{usage:?}");
    let output = usage.output_tokens.unwrap_or(0);
    assert!(output > 0 && output <= max_output, "{usage:?}");
}

/// A streamed chat turn of the shape every protocol gives: it finished as an assistant
/// message with non-blank text equal to its text deltas, stopped naturally, and counted its
/// tokens within [`MAX_TOKENS`]. The message is returned for protocol-specific checks.
pub fn assert_streamed_turn(events: &[ResponseEvent], outcome: StreamOutcome) -> Message {
    let (message, stop_reason, usage) = super::finished(outcome, events);
    assert_eq!(message.role, Role::Assistant);
    assert!(!message.text().trim().is_empty(), "{message:?}");
    assert_eq!(message.text(), super::text_deltas(events).concat());
    assert_natural_stop(&stop_reason);
    assert_counted(&usage, u64::from(MAX_TOKENS));
    message
}

/// The message is one non-blank text block.
pub fn assert_one_text_block(message: &Message) {
    assert!(
        matches!(message.blocks.as_slice(), [ContentBlock::Text { text, .. }] if !text.trim().is_empty()),
        "{message:?}"
    );
}

/// The client's model listing names the local model.
pub async fn assert_lists_the_local_model(client: &Client) {
    let models = client.list_models().await.unwrap();
    assert!(models.iter().any(|m| m.id == local::MODEL_ID), "{models:?}");
}
