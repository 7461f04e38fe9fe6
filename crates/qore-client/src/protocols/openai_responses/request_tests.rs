use super::*;
use crate::RequestOptions;
use qore_core::{History, ImageData, ToolSpec};

fn encode_history(history: &History, tools: &[ToolSpec], stateless: bool) -> Value {
    let options = RequestOptions {
        max_tokens: Some(64),
        ..RequestOptions::default()
    };
    let request = ChatRequest {
        model: "m",
        history,
        tools,
        options: &options,
    };
    encode(&request, stateless).unwrap()
}

fn tool_turns() -> History {
    History::from(vec![
        Message::system("be brief"),
        Message::system("use tools"),
        Message::user("add 1 and 2, then 3 and 4"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: "use the tool".into(),
                    signature: Some("enc-1".into()),
                },
                ContentBlock::text("Adding."),
                ContentBlock::ToolUse {
                    id: "call_1".into(),
                    name: "add".into(),
                    input: json!({"y": 2, "x": 1}),
                    raw_input: None,
                    signature: None,
                },
                ContentBlock::Thinking {
                    text: String::new(),
                    signature: Some("enc-2".into()),
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
                ContentBlock::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: vec![ToolResultPart::Text { text: "3".into() }],
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "call_2".into(),
                    content: vec![ToolResultPart::Text {
                        text: "bad arguments".into(),
                    }],
                    is_error: true,
                },
                ContentBlock::text("and explain"),
            ],
        ),
        Message::system("answer in French"),
    ])
}

#[test]
fn encodes_a_tool_session_as_input_items() {
    let tools = [ToolSpec {
        name: "add".into(),
        description: "adds".into(),
        input_schema: json!({"type": "object"}),
    }];
    let body = encode_history(&tool_turns(), &tools, true);
    assert_eq!(body["instructions"], "be brief\n\nuse tools");
    assert_eq!(body["stream"], true);
    assert_eq!(body["store"], false);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["max_output_tokens"], 64);
    assert!(body.get("max_tokens").is_none());
    assert_eq!(
        body["tools"][0],
        json!({"type": "function", "name": "add", "description": "adds",
            "parameters": {"type": "object"}})
    );
    let input = body["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "message",
            "function_call",
            "reasoning",
            "function_call",
            "function_call_output",
            "function_call_output",
            "message",
            "message"
        ]
    );
    assert_eq!(
        input[0],
        json!({"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "add 1 and 2, then 3 and 4"}]})
    );
    assert_eq!(
        input[1],
        json!({"type": "reasoning", "encrypted_content": "enc-1",
            "summary": [{"type": "summary_text", "text": "use the tool"}]})
    );
    assert_eq!(
        input[2],
        json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Adding."}]})
    );
    assert_eq!(input[3]["call_id"], "call_1");
    assert_eq!(input[3]["name"], "add");
    let arguments: Value = serde_json::from_str(input[3]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"x": 1, "y": 2}));
    assert_eq!(input[4]["summary"], json!([]));
    assert_eq!(input[4]["encrypted_content"], "enc-2");
    assert_eq!(input[5]["arguments"], "{x: 3");
    assert_eq!(
        input[6],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "3"})
    );
    assert_eq!(input[7]["output"], "Error: bad arguments");
    assert_eq!(input[8]["content"][0]["text"], "and explain");
    assert_eq!(input[9]["role"], "developer");
    assert_eq!(input[9]["content"][0]["text"], "answer in French");
}

#[test]
fn unsigned_thinking_goes_back_as_reasoning_text_and_empty_thinking_not_at_all() {
    let history = History::from(vec![
        Message::user("hi"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: String::new(),
                    signature: None,
                },
                ContentBlock::Thinking {
                    text: "raw thoughts".into(),
                    signature: None,
                },
                ContentBlock::RedactedThinking {
                    data: "opaque".into(),
                },
                ContentBlock::text("hello"),
            ],
        ),
    ]);
    let body = encode_history(&history, &[], false);
    assert!(body.get("store").is_none());
    assert!(body.get("include").is_none());
    assert!(body.get("instructions").is_none());
    assert!(body.get("tools").is_none());
    let input = body["input"].as_array().unwrap();
    assert_eq!(input.len(), 4);
    assert_eq!(
        input[1],
        json!({"type": "reasoning", "summary": [],
            "content": [{"type": "reasoning_text", "text": "raw thoughts"}]})
    );
    assert_eq!(
        input[2],
        json!({"type": "reasoning", "summary": [], "encrypted_content": "opaque"})
    );
    assert_eq!(input[3]["content"][0]["text"], "hello");
}

#[test]
fn images_in_messages_and_tool_results() {
    let png = ImageSource {
        media_type: Some("image/png".into()),
        data: ImageData::Bytes(b"abc".to_vec()),
    };
    let history = History::from(vec![Message::new(
        Role::User,
        vec![
            ContentBlock::ToolResult {
                tool_use_id: "c".into(),
                content: vec![
                    ToolResultPart::Text { text: "see".into() },
                    ToolResultPart::Image(png.clone()),
                ],
                is_error: false,
            },
            ContentBlock::text("what is this?"),
            ContentBlock::Image(ImageSource {
                media_type: None,
                data: ImageData::Url("https://example.com/a.png".into()),
            }),
        ],
    )]);
    let body = encode_history(&history, &[], true);
    let input = &body["input"];
    assert_eq!(
        input[0]["output"],
        json!([{"type": "input_text", "text": "see"},
            {"type": "input_image", "image_url": "data:image/png;base64,YWJj"}])
    );
    assert_eq!(
        input[1]["content"][1],
        json!({"type": "input_image", "image_url": "https://example.com/a.png"})
    );
}

#[test]
fn extra_fields_win_and_encoding_is_deterministic() {
    let history = tool_turns();
    let mut options = RequestOptions::default();
    options.extra.insert("store".into(), json!(true));
    options
        .extra
        .insert("reasoning".into(), json!({"effort": "low"}));
    let request = ChatRequest {
        model: "m",
        history: &history,
        tools: &[],
        options: &options,
    };
    let body = encode(&request, true).unwrap();
    assert_eq!(body["store"], true);
    assert_eq!(body["reasoning"]["effort"], "low");
    let again = encode(&request, true).unwrap();
    assert_eq!(
        serde_json::to_vec(&body).unwrap(),
        serde_json::to_vec(&again).unwrap()
    );
    let empty = ChatRequest {
        model: "",
        ..request
    };
    assert!(encode(&empty, true).is_err());
}
