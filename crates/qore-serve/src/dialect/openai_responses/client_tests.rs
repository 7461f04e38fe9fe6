//! Requests both ways against qore-client's own Responses codec: a history the client
//! encodes decodes here to the same conversation and tools, and encodes again to the same
//! body.

use qore_client::protocols::openai_responses::OpenAiResponses as ClientResponses;
use qore_client::{ChatRequest, Protocol, RequestOptions};
use qore_core::{
    ContentBlock, History, ImageData, ImageSource, Message, ResponseFormat, Role, ToolChoice,
    ToolResultPart, ToolSpec,
};
use serde_json::{json, Value};

use super::request;

fn client_body(history: &History, tools: &[ToolSpec], options: &RequestOptions) -> Value {
    let request = ChatRequest {
        model: "gpt-test",
        history,
        tools,
        options,
    };
    ClientResponses::default().encode(&request).unwrap()
}

fn png() -> ImageSource {
    ImageSource {
        media_type: Some("image/png".into()),
        data: ImageData::Bytes(vec![137, 80, 78, 71, 0, 255]),
    }
}

fn url_image() -> ImageSource {
    ImageSource {
        media_type: None,
        data: ImageData::Url("https://example.com/cat.jpg".into()),
    }
}

fn tool_turn() -> Vec<Message> {
    vec![
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: "I should add.".into(),
                    signature: Some("gAAAA-encrypted-1".into()),
                },
                ContentBlock::text("Adding."),
                ContentBlock::tool_use("call_1", "add", json!({"x": 1, "y": [2, 3]})),
                ContentBlock::Thinking {
                    text: String::new(),
                    signature: Some("gAAAA-encrypted-2".into()),
                },
                ContentBlock::ToolUse {
                    id: "call_2".into(),
                    name: "add".into(),
                    input: Value::Null,
                    raw_input: Some("{x: 3".into()),
                    signature: None,
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![
                ContentBlock::tool_result("call_1", "6", false),
                ContentBlock::ToolResult {
                    tool_use_id: "call_2".into(),
                    content: vec![
                        ToolResultPart::Text {
                            text: "a chart".into(),
                        },
                        ToolResultPart::Image(png()),
                    ],
                    is_error: false,
                },
                ContentBlock::text("and now?"),
            ],
        ),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: "unsigned reasoning".into(),
                    signature: None,
                },
                ContentBlock::text("Done: 6."),
            ],
        ),
    ]
}

/// A case: its name, the history, and what it decodes to when that differs.
type Case = (&'static str, Vec<Message>, Option<Vec<Message>>);

fn histories() -> Vec<Case> {
    vec![
        (
            "system and text",
            vec![Message::system("be brief"), Message::user("hi")],
            None,
        ),
        (
            "two leading system messages are one instructions",
            vec![
                Message::system("a"),
                Message::system("b"),
                Message::user("hi"),
            ],
            Some(vec![Message::system("a\n\nb"), Message::user("hi")]),
        ),
        (
            "a later system message stays in place",
            vec![
                Message::user("hi"),
                Message::assistant("hello"),
                Message::system("now in French"),
                Message::user("again"),
            ],
            None,
        ),
        (
            "images",
            vec![Message::new(
                Role::User,
                vec![
                    ContentBlock::text("what are these?"),
                    ContentBlock::Image(png()),
                    ContentBlock::Image(url_image()),
                ],
            )],
            None,
        ),
        (
            "reasoning, tool calls and their outputs",
            [
                vec![Message::system("use tools"), Message::user("add")],
                tool_turn(),
            ]
            .concat(),
            None,
        ),
        (
            "redacted thinking reads back as signed thinking",
            vec![
                Message::user("q"),
                Message::new(
                    Role::Assistant,
                    vec![
                        ContentBlock::RedactedThinking { data: "ENC".into() },
                        ContentBlock::text("a"),
                    ],
                ),
            ],
            Some(vec![
                Message::user("q"),
                Message::new(
                    Role::Assistant,
                    vec![
                        ContentBlock::Thinking {
                            text: String::new(),
                            signature: Some("ENC".into()),
                        },
                        ContentBlock::text("a"),
                    ],
                ),
            ]),
        ),
    ]
}

#[test]
fn client_encoded_histories_decode_to_the_same_conversation() {
    let tools = vec![ToolSpec {
        name: "add".into(),
        description: "Add numbers.".into(),
        input_schema: json!({"type": "object", "properties": {"x": {"type": "number"}}}),
    }];
    let options = RequestOptions {
        max_tokens: Some(99),
        temperature: Some(0.25),
        ..RequestOptions::default()
    };
    for (name, messages, expected) in histories() {
        let history = History::from(messages.clone());
        let body = client_body(&history, &tools, &options);
        let inbound = request::decode(body.to_string().as_bytes())
            .unwrap_or_else(|e| panic!("{name}: {e:?}\n{body:#}"));
        let expected = expected.unwrap_or(messages);
        assert_eq!(inbound.history.messages(), expected.as_slice(), "{name}");
        assert_eq!(inbound.tools, tools, "{name}");
        assert_eq!(inbound.model, "gpt-test");
        assert_eq!(inbound.max_tokens, Some(99));
        assert_eq!(inbound.temperature, Some(0.25));
        assert!(inbound.stream && !inbound.store, "{name}");
        assert!(inbound.dropped.is_empty(), "{name}: {:?}", inbound.dropped);
        // What decodes here encodes again to the very same body.
        let again = client_body(&inbound.history, &inbound.tools, &options);
        assert_eq!(again, body, "{name}");
    }
}

#[test]
fn client_settings_decode_to_the_same_settings() {
    let client = ClientResponses::default();
    let tools = [ToolSpec {
        name: "add".into(),
        description: String::new(),
        input_schema: json!({"type": "object"}),
    }];
    let choices = [
        ToolChoice::None,
        ToolChoice::Required,
        ToolChoice::Tool { name: "add".into() },
    ];
    let formats = [
        ResponseFormat::JsonObject,
        ResponseFormat::JsonSchema {
            name: "point".into(),
            schema: json!({"type": "object", "properties": {"x": {"type": "number"}}}),
            strict: true,
        },
    ];
    for (choice, format) in choices.into_iter().zip(formats.into_iter().cycle()) {
        let mut options = RequestOptions::default();
        let Some(fields) = client.tool_choice_fields(&choice) else {
            panic!("the client cannot say {choice:?}");
        };
        options.extra.extend(fields);
        let Some(fields) = client.response_format_fields(&format) else {
            panic!("the client cannot say {format:?}");
        };
        options.extra.extend(fields);
        let history = History::from(vec![Message::user("x")]);
        let body = client_body(&history, &tools, &options);
        let inbound = request::decode(body.to_string().as_bytes()).unwrap();
        assert_eq!(inbound.tool_choice, Some(choice));
        assert_eq!(inbound.response_format, Some(format));
    }
}
