use super::*;
use crate::RequestOptions;
use qore_core::{History, Message, ToolSpec};

fn encode_with(history: &History, tools: &[ToolSpec], options: &RequestOptions) -> Value {
    let request = ChatRequest {
        model: "gemini-2.5-flash",
        history,
        tools,
        options,
    };
    encode(&request).unwrap()
}

fn tool_turns() -> History {
    let synthesized = ids::synthesize();
    History::from(vec![
        Message::system("be brief"),
        Message::user("add 3 and 5, then subtract 4 from 10"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: "use the tools".into(),
                    signature: None,
                },
                ContentBlock::ToolUse {
                    id: synthesized.clone(),
                    name: "add".into(),
                    input: json!({"x": 3, "y": 5}),
                    raw_input: None,
                    signature: Some("SIG1".into()),
                },
                ContentBlock::ToolUse {
                    id: "call_42".into(),
                    name: "subtract".into(),
                    input: json!({"x": 10, "y": 4}),
                    raw_input: None,
                    signature: None,
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![
                ContentBlock::text("here you go"),
                ContentBlock::ToolResult {
                    tool_use_id: synthesized,
                    content: vec![ToolResultPart::Text { text: "8".into() }],
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "call_42".into(),
                    content: vec![
                        ToolResultPart::Text {
                            text: "overflow".into(),
                        },
                        ToolResultPart::Image(ImageSource {
                            media_type: None,
                            data: ImageData::Bytes(vec![0x89, b'P', b'N', b'G']),
                        }),
                    ],
                    is_error: true,
                },
            ],
        ),
        Message::new(
            Role::Assistant,
            vec![ContentBlock::Text {
                text: "8 and 6".into(),
                signature: Some("SIG2".into()),
            }],
        ),
    ])
}

#[test]
fn encodes_a_tool_loop_with_signatures_on_their_parts() {
    let options = RequestOptions {
        max_tokens: Some(64),
        temperature: Some(0.5),
        ..RequestOptions::default()
    };
    let body = encode_with(&tool_turns(), &[], &options);
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "be brief"}]})
    );
    assert_eq!(
        body["generationConfig"],
        json!({"maxOutputTokens": 64, "temperature": 0.5})
    );
    assert!(body.get("tools").is_none());
    let contents = body["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 4);
    assert_eq!(
        contents[0],
        json!({"role": "user", "parts": [{"text": "add 3 and 5, then subtract 4 from 10"}]})
    );
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [
            {"text": "use the tools", "thought": true},
            {"functionCall": {"name": "add", "args": {"x": 3, "y": 5}}, "thoughtSignature": "SIG1"},
            {"functionCall": {"name": "subtract", "args": {"x": 10, "y": 4}, "id": "call_42"}}
        ]})
    );
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "add", "response": {"result": "8"}}},
            {"functionResponse": {"name": "subtract", "id": "call_42",
                "response": {"error": "overflow"},
                "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw=="}}]}},
            {"text": "here you go"}
        ]})
    );
    assert_eq!(
        contents[3],
        json!({"role": "model", "parts": [{"text": "8 and 6", "thoughtSignature": "SIG2"}]})
    );
}

#[test]
fn a_result_for_an_unknown_call_is_a_validation_error() {
    let history = History::from(vec![Message::new(
        Role::User,
        vec![ContentBlock::ToolResult {
            tool_use_id: "nobody".into(),
            content: vec![],
            is_error: false,
        }],
    )]);
    let options = RequestOptions::default();
    let request = ChatRequest {
        model: "m",
        history: &history,
        tools: &[],
        options: &options,
    };
    let error = encode(&request).unwrap_err();
    assert_eq!(error.category, qore_core::ErrorCategory::Validation);
    assert!(error.message.contains("\"nobody\""));
    let empty = ChatRequest {
        model: "",
        ..request
    };
    assert_eq!(
        encode(&empty).unwrap_err().category,
        qore_core::ErrorCategory::Config
    );
}

#[test]
fn images_urls_and_empty_turns() {
    let history = History::from(vec![
        Message::new(
            Role::User,
            vec![
                ContentBlock::text("what are these?"),
                ContentBlock::Image(ImageSource {
                    media_type: Some("image/jpeg".into()),
                    data: ImageData::Bytes(b"abc".to_vec()),
                }),
                ContentBlock::Image(ImageSource {
                    media_type: None,
                    data: ImageData::Url("data:image/webp;base64,QUJD".into()),
                }),
                ContentBlock::Image(ImageSource {
                    media_type: None,
                    data: ImageData::Url("https://example.com/cat.PNG?size=2".into()),
                }),
            ],
        ),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::RedactedThinking { data: "x".into() },
                ContentBlock::text(""),
            ],
        ),
        Message::new(
            Role::Assistant,
            vec![ContentBlock::Thinking {
                text: String::new(),
                signature: Some("ONLY".into()),
            }],
        ),
    ]);
    let body = encode_with(&history, &[], &RequestOptions::default());
    assert!(body.get("generationConfig").is_none());
    assert!(body.get("systemInstruction").is_none());
    let contents = body["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 2, "the empty assistant turn is left out");
    assert_eq!(
        contents[0]["parts"],
        json!([
            {"text": "what are these?"},
            {"inlineData": {"mimeType": "image/jpeg", "data": "YWJj"}},
            {"inlineData": {"mimeType": "image/webp", "data": "QUJD"}},
            {"fileData": {"fileUri": "https://example.com/cat.PNG?size=2", "mimeType": "image/png"}}
        ])
    );
    assert_eq!(
        contents[1]["parts"],
        json!([{"text": "", "thought": true, "thoughtSignature": "ONLY"}])
    );
}

#[test]
fn tools_are_declared_with_sanitized_schemas_and_extra_merges_last() {
    let tools = [ToolSpec {
        name: "read".into(),
        description: "Read a file".into(),
        input_schema: json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
            "properties": {"path": {"type": "string"}}, "required": ["path"],
            "additionalProperties": false}),
    }];
    let mut extra = Map::new();
    extra.insert(
        "generationConfig".into(),
        json!({"thinkingConfig": {"includeThoughts": true}, "temperature": 1.0}),
    );
    extra.insert("safetySettings".into(), json!([]));
    let options = RequestOptions {
        max_tokens: Some(100),
        temperature: Some(0.2),
        extra,
        ..RequestOptions::default()
    };
    let history = History::from(vec![Message::user("hi")]);
    let body = encode_with(&history, &tools, &options);
    assert_eq!(
        body["tools"],
        json!([{"functionDeclarations": [{"name": "read", "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                           "required": ["path"]}}]}])
    );
    assert_eq!(
        body["generationConfig"],
        json!({"maxOutputTokens": 100, "temperature": 1.0,
               "thinkingConfig": {"includeThoughts": true}})
    );
    assert_eq!(body["safetySettings"], json!([]));
    let again = encode_with(&history, &tools, &options);
    assert_eq!(
        serde_json::to_vec(&body).unwrap(),
        serde_json::to_vec(&again).unwrap()
    );
}
