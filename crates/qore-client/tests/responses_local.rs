//! The Responses codec against a real server: llama.cpp's `/v1/responses` on loopback,
//! serving SmolLM2-135M (see `qore_client::local`; the first run installs it). The model is
//! tiny, so these tests assert the structure of what comes back, never the words — and
//! that the server accepts what the encoder replays (reasoning, calls, results).

use futures_util::StreamExt as _;
use qore_client::{
    local, protocols, CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions,
};
use qore_core::{
    ContentBlock, History, Message, ResponseEvent, Role, StopReason, ToolResultPart, ToolSpec,
    TurnOutcome,
};
use serde_json::json;

async fn client() -> Client {
    let url = local::ensure_running()
        .await
        .expect("the local model server starts");
    Client::new(
        protocols::by_name("openai-responses").unwrap(),
        ClientConfig::new(url),
    )
    .unwrap()
}

fn options(stream: bool) -> RequestOptions {
    RequestOptions {
        stream,
        max_tokens: Some(16),
        temperature: Some(0.0),
        ..RequestOptions::default()
    }
}

fn history() -> History {
    History::from(vec![
        Message::system("You are a helpful assistant. Answer briefly."),
        Message::user("Name one colour."),
    ])
}

#[tokio::test]
async fn streams_a_response_through_the_responses_codec() {
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
    match events.first() {
        Some(ResponseEvent::MessageStart { id: Some(id), .. }) => {
            assert!(id.starts_with("resp_"), "{id}")
        }
        other => panic!("no MessageStart with the response id: {other:?}"),
    }
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            ResponseEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(deltas.len() > 1, "the text was not streamed: {events:?}");
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
    assert_eq!(message.text(), deltas.concat());
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
async fn answers_a_whole_response_with_the_same_shape() {
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
    assert!(stop_reason.is_some());
    assert!(usage.output_tokens.unwrap_or(0) > 0);
}

/// A tool session as history: reasoning (unsigned, as llama.cpp's own reasoning comes
/// back), a call, its result, a later system message. The server must accept the replay.
#[tokio::test]
async fn accepts_a_replayed_tool_session() {
    let client = client().await;
    let history = History::from(vec![
        Message::system("You are a weather assistant. Answer briefly."),
        Message::user("What is the weather in Paris?"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: "I should call the weather tool.".into(),
                    signature: None,
                },
                ContentBlock::text("Let me check."),
                ContentBlock::ToolUse {
                    id: "call_paris".into(),
                    name: "get_weather".into(),
                    input: json!({"city": "Paris"}),
                    raw_input: None,
                    signature: None,
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_use_id: "call_paris".into(),
                content: vec![ToolResultPart::Text {
                    text: "sunny, 22 C".into(),
                }],
                is_error: false,
            }],
        ),
        Message::system("Mention the temperature."),
    ]);
    let tools = [ToolSpec {
        name: "get_weather".into(),
        description: "Current weather for a city".into(),
        input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}},
            "required": ["city"]}),
    }];
    let options = options(true);
    let request = ChatRequest {
        model: local::MODEL_ID,
        history: &history,
        tools: &tools,
        options: &options,
    };
    let outcome = client
        .stream(&request, CancellationToken::new())
        .finish()
        .await;
    let TurnOutcome::Finished { message, .. } = outcome else {
        panic!("the server refused the replayed session: {outcome:?}");
    };
    assert_eq!(message.role, Role::Assistant);
    assert!(!message.blocks.is_empty(), "{message:?}");
}

#[tokio::test]
async fn lists_the_local_model_with_the_responses_protocol() {
    let models = client().await.list_models().await.unwrap();
    assert!(models.iter().any(|m| m.id == local::MODEL_ID), "{models:?}");
}
