//! The Responses codec against a real server: llama.cpp's `/v1/responses` on loopback,
//! serving SmolLM2-135M (see `qore_client::local`; the first run installs it). The model is
//! tiny, so these tests assert the structure of what comes back, never the words — and
//! that the server accepts what the encoder replays (reasoning, calls, results).

mod support;

use qore_client::{local, CancellationToken, ChatRequest, Client};
use qore_core::{
    ContentBlock, History, Message, ResponseEvent, Role, StreamOutcome, ToolResultPart, ToolSpec,
};
use serde_json::json;

use support::local::options;

async fn client() -> Client {
    support::local::client("openai-responses").await
}

#[tokio::test]
async fn streams_a_response_through_the_responses_codec() {
    let client = client().await;
    let (events, outcome) = support::local::chat(&client, true).await;
    match events.first() {
        Some(ResponseEvent::MessageStart { id: Some(id), .. }) => {
            assert!(id.starts_with("resp_"), "{id}")
        }
        other => panic!("no MessageStart with the response id: {other:?}"),
    }
    let deltas = support::text_deltas(&events);
    assert!(deltas.len() > 1, "the text was not streamed: {events:?}");
    support::local::assert_streamed_turn(&events, outcome);
}

#[tokio::test]
async fn answers_a_whole_response_with_the_same_shape() {
    let client = client().await;
    let (events, outcome) = support::local::chat(&client, false).await;
    let (message, stop_reason, usage) = support::finished(outcome, &events);
    support::local::assert_one_text_block(&message);
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
    let StreamOutcome::Finished { message, .. } = outcome else {
        panic!("the server refused the replayed session: {outcome:?}");
    };
    assert_eq!(message.role, Role::Assistant);
    assert!(!message.blocks.is_empty(), "{message:?}");
}

#[tokio::test]
async fn lists_the_local_model_with_the_responses_protocol() {
    support::local::assert_lists_the_local_model(&client().await).await;
}
