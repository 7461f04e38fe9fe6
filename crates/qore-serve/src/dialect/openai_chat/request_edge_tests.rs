//! Refusals, shapes the client never writes, and the recorded traffic.

use qore_client::protocols::openai_chat::OpenAiChat as ClientChat;
use qore_client::{ChatRequest, Protocol, RequestOptions};
use qore_core::{ContentBlock, History, ImageData, ImageSource, Message, Role, ToolResultPart};
use serde_json::{json, Value};

use super::tests::{decoded, with};
use super::*;

#[test]
fn refusals_name_the_field() {
    let user =
        |content: Value| json!({"model": "m", "messages": [{"role": "user", "content": content}]});
    let cases: Vec<(Value, Option<&str>)> = vec![
        (json!([]), None),
        (json!({"model": "m"}), Some("messages")),
        (
            json!({"messages": [{"role": "user", "content": "x"}]}),
            Some("model"),
        ),
        (
            json!({"model": 3, "messages": [{"role": "user", "content": "x"}]}),
            Some("model"),
        ),
        (json!({"model": "m", "messages": []}), Some("messages")),
        (json!({"model": "m", "messages": {}}), Some("messages")),
        (with(json!({"n": 2})), Some("n")),
        (with(json!({"n": "1"})), Some("n")),
        (
            with(json!({"modalities": ["text", "audio"]})),
            Some("modalities"),
        ),
        (with(json!({"functions": []})), Some("functions")),
        (with(json!({"stream": "yes"})), Some("stream")),
        (with(json!({"max_tokens": -1})), Some("max_tokens")),
        (
            with(json!({"max_completion_tokens": 1.5})),
            Some("max_completion_tokens"),
        ),
        (with(json!({"temperature": "hot"})), Some("temperature")),
        (with(json!({"stop": [1]})), Some("stop[0]")),
        (
            with(json!({"stream_options": true})),
            Some("stream_options"),
        ),
        (with(json!({"tool_choice": "maybe"})), Some("tool_choice")),
        (
            with(json!({"tool_choice": {"type": "function"}})),
            Some("tool_choice.function"),
        ),
        (
            with(json!({"response_format": {"type": "xml"}})),
            Some("response_format.type"),
        ),
        (
            with(json!({"tools": [{"type": "web_search"}]})),
            Some("tools[0].type"),
        ),
        (
            with(json!({"tools": [{"type": "function", "function": {"description": "d"}}]})),
            Some("tools[0].function.name"),
        ),
        (user(json!(3)), Some("messages[0].content")),
        (
            user(json!([{"type": "input_audio", "input_audio": {}}])),
            Some("messages[0].content[0].type"),
        ),
        (
            user(json!([{"type": "text", "text": "a"}, {"type": "file", "file": {}}])),
            Some("messages[0].content[1].type"),
        ),
        (
            user(json!([{"type": "text"}])),
            Some("messages[0].content[0].text"),
        ),
        (
            user(json!([{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@"}}])),
            Some("messages[0].content[0].image_url.url"),
        ),
        (user(json!(["plain"])), Some("messages[0].content[0]")),
        (
            json!({"model": "m", "messages": [{"content": "x"}]}),
            Some("messages[0].role"),
        ),
        (
            json!({"model": "m", "messages": [{"role": "robot", "content": "x"}]}),
            Some("messages[0].role"),
        ),
        (
            json!({"model": "m", "messages": [{"role": "tool", "content": "x"}]}),
            Some("messages[0].tool_call_id"),
        ),
        (
            json!({"model": "m", "messages": [{"role": "assistant",
            "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}]}),
            Some("messages[0].tool_calls[0].function.name"),
        ),
        (
            json!({"model": "m", "messages": [{"role": "assistant",
            "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": 3}}]}]}),
            Some("messages[0].tool_calls[0].function.arguments"),
        ),
    ];
    for (body, param) in cases {
        let err = decode(&serde_json::to_vec(&body).unwrap()).expect_err(&body.to_string());
        assert_eq!(err.status, 400, "{body}");
        assert_eq!(err.param.as_deref(), param, "{body}: {}", err.message);
    }
    for body in [&b"{\"model\": "[..], b"not json", b"\xff\xfe"] {
        assert_eq!(decode(body).unwrap_err().status, 400);
    }
}

#[test]
fn wire_shapes_beyond_the_clients_decode() {
    let inbound = decoded(json!({"model": "m", "messages": [
        {"role": "developer", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "user", "content": [{"type": "image_url", "image_url": "data:image/jpeg;base64,AAE="}]},
        {"role": "assistant", "content": null, "reasoning": "hmm",
            "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "f", "arguments": {"a": 1}}},
                {"id": "c2", "function": {"name": "g"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "one"},
            {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": ""},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]},
    ]}));
    let url_image = ImageSource {
        media_type: None,
        data: ImageData::Url("https://x/y.png".into()),
    };
    let expected = History::from(vec![
        Message::new(
            Role::System,
            vec![ContentBlock::text("a"), ContentBlock::text("b")],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::Image(ImageSource {
                media_type: Some("image/jpeg".into()),
                data: ImageData::Bytes(vec![0, 1]),
            })],
        ),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: "hmm".into(),
                    signature: None,
                },
                ContentBlock::tool_use("c1", "f", json!({"a": 1})),
                ContentBlock::tool_use("c2", "g", json!({})),
            ],
        ),
        Message::new(
            Role::User,
            vec![
                ContentBlock::ToolResult {
                    tool_use_id: "c1".into(),
                    content: vec![
                        ToolResultPart::Text { text: "one".into() },
                        ToolResultPart::Image(url_image),
                    ],
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "c2".into(),
                    content: vec![],
                    is_error: false,
                },
            ],
        ),
        Message::assistant("no"),
    ]);
    assert_eq!(inbound.history, expected);
}

/// The body qore-client's encoder writes for a decoded request.
fn client_body(inbound: &Inbound) -> Vec<u8> {
    let options = RequestOptions::default();
    let request = ChatRequest {
        model: &inbound.model,
        history: &inbound.history,
        tools: &inbound.tools,
        options: &options,
    };
    let client = ClientChat {
        replay_reasoning: true,
    };
    serde_json::to_vec(&client.encode(&request).unwrap()).unwrap()
}

/// Every Chat Completions request recorded in `../shared/fixtures` decodes, except those
/// that carry what this dialect refuses (audio, files, documents, video, `n` > 1), which
/// are 400s naming the refused part.
#[test]
fn every_recorded_request_decodes() {
    let Some(dir) = qore_testkit::fixtures_dir() else {
        eprintln!("fixtures not found: skipped");
        return;
    };
    let cassettes = qore_testkit::load_cassettes(&dir).unwrap();
    let (mut decoded, mut refused) = (0, 0);
    for cassette in &cassettes {
        for exchange in &cassette.exchanges {
            let Some(body) = exchange.request_body.as_deref() else {
                continue;
            };
            if !exchange.path.ends_with("chat/completions") {
                continue;
            }
            match decode(body.as_bytes()) {
                Ok(inbound) => {
                    decoded += 1;
                    assert!(!inbound.history.is_empty(), "{}", cassette.name());
                    // What the client writes from the decoded request decodes to itself.
                    let once = client_body(&inbound);
                    let again = decode(&once).unwrap();
                    assert_eq!(client_body(&again), once, "{}", cassette.name());
                }
                Err(err) => {
                    refused += 1;
                    let refusable = ["input_audio", "file", "document_url", "video_url", "`n`"];
                    // A request the provider refused too may be refused here.
                    let refused_there = (400..500).contains(&exchange.status);
                    assert!(
                        refused_there || refusable.iter().any(|r| err.message.contains(r)),
                        "{}: {err:?}",
                        cassette.name()
                    );
                }
            }
        }
    }
    eprintln!("recorded Chat Completions requests: {decoded} decoded, {refused} refused");
    assert!(decoded > 900, "{decoded}");
    assert!(refused < 60, "{refused}");
}
