//! Both ways against qore-client's Anthropic codec: a history the client encodes decodes
//! here to the same history, tools and settings.

use super::*;
use qore_client::protocols::anthropic::Anthropic;
use qore_client::{ChatRequest, Protocol, RequestOptions};
use serde_json::json;

fn add_tool() -> ToolSpec {
    ToolSpec {
        name: "add".into(),
        description: "adds two numbers".into(),
        input_schema: json!({"type": "object", "properties": {"x": {"type": "number"}}}),
    }
}

#[test]
fn what_the_client_encodes_decodes_to_the_same_history() {
    let signed = ContentBlock::Thinking {
        text: "let me add".into(),
        signature: Some("sig==".into()),
    };
    let url_image = ContentBlock::Image(ImageSource {
        media_type: None,
        data: ImageData::Url("https://example.com/a.png".into()),
    });
    let table: Vec<(&str, Vec<Message>)> = vec![
        ("one user turn", vec![Message::user("hi")]),
        (
            "system and text",
            vec![
                Message::system("be brief"),
                Message::user("hi"),
                Message::assistant("hello"),
                Message::user("again"),
            ],
        ),
        (
            "images",
            vec![Message::new(
                Role::User,
                vec![
                    ContentBlock::text("what is this"),
                    png(b"\x89PNG\r\n"),
                    url_image,
                ],
            )],
        ),
        (
            "thinking and tool use",
            vec![
                Message::user("add 1 and 2"),
                Message::new(
                    Role::Assistant,
                    vec![
                        signed.clone(),
                        ContentBlock::RedactedThinking { data: "enc".into() },
                        ContentBlock::text("adding"),
                        ContentBlock::tool_use("toolu_1", "add", json!({"x": 1, "y": 2})),
                        ContentBlock::tool_use("toolu_2", "add", json!({})),
                    ],
                ),
                Message::new(
                    Role::User,
                    vec![
                        ContentBlock::tool_result("toolu_1", "3", false),
                        ContentBlock::ToolResult {
                            tool_use_id: "toolu_2".into(),
                            content: vec![
                                ToolResultPart::Text { text: "bad".into() },
                                ToolResultPart::Image(ImageSource {
                                    media_type: Some("image/gif".into()),
                                    data: ImageData::Bytes(b"GIF89a".to_vec()),
                                }),
                            ],
                            is_error: true,
                        },
                        ContentBlock::text("and now?"),
                    ],
                ),
                Message::new(Role::Assistant, vec![signed, ContentBlock::text("3")]),
            ],
        ),
    ];
    let protocol = Anthropic::default();
    for (name, messages) in table {
        let history = History::from(messages);
        for tools in [vec![], vec![add_tool()]] {
            let options = RequestOptions {
                max_tokens: Some(100),
                temperature: Some(0.25),
                ..RequestOptions::default()
            };
            let request = ChatRequest {
                model: "claude-x",
                history: &history,
                tools: &tools,
                options: &options,
            };
            let body = protocol.encode(&request).unwrap();
            let inbound = decode_json(&body).unwrap();
            assert_eq!(inbound.history, history, "{name}: {body}");
            assert_eq!(inbound.tools, tools, "{name}");
            assert_eq!(inbound.model, "claude-x");
            assert_eq!(inbound.max_tokens, Some(100));
            assert_eq!(inbound.temperature, Some(0.25));
            assert!(inbound.stream, "{name}");
            assert!(inbound.dropped.is_empty(), "{name}: {:?}", inbound.dropped);
        }
    }
}
