//! Unit tests of the Ollama request encoder.

use super::*;
use crate::protocols::test_support::{fim_options, fim_request};
use crate::RequestOptions;
use qore_core::{History, ToolResultPart, ToolSpec};

fn encode_with(history: &History, tools: &[ToolSpec], options: &RequestOptions) -> Value {
    let request = ChatRequest {
        model: "qwen3:4b",
        history,
        tools,
        options,
    };
    encode(&request).unwrap()
}

fn tool_turns() -> History {
    History::from(vec![
        Message::system("be brief"),
        Message::user("weather in Tokyo and Paris?"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: "two calls".into(),
                    signature: None,
                },
                ContentBlock::text("Checking."),
                ContentBlock::ToolUse {
                    id: "call_a".into(),
                    name: "get_weather".into(),
                    input: json!({"city": "Tokyo"}),
                    raw_input: None,
                    signature: None,
                },
                ContentBlock::ToolUse {
                    id: "call_b".into(),
                    name: "get_time".into(),
                    input: Value::Null,
                    raw_input: Some("{city: Paris".into()),
                    signature: None,
                },
            ],
        ),
        Message::new(
            Role::User,
            vec![
                ContentBlock::ToolResult {
                    tool_use_id: "call_a".into(),
                    content: vec![ToolResultPart::Text {
                        text: "sunny".into(),
                    }],
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "call_b".into(),
                    content: vec![ToolResultPart::Text {
                        text: "bad arguments".into(),
                    }],
                    is_error: true,
                },
                ContentBlock::text("and tomorrow?"),
            ],
        ),
    ])
}

#[test]
fn encodes_tool_turns_in_ollama_shape() {
    let tools = [ToolSpec {
        name: "get_weather".into(),
        description: "weather".into(),
        input_schema: json!({"type": "object"}),
    }];
    let options = RequestOptions {
        max_tokens: Some(64),
        temperature: Some(0.5),
        ..RequestOptions::default()
    };
    let body = encode_with(&tool_turns(), &tools, &options);
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["options"],
        json!({"num_predict": 64, "temperature": 0.5})
    );
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "get_weather");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 6);
    assert_eq!(
        messages[0],
        json!({"role": "system", "content": "be brief"})
    );
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "weather in Tokyo and Paris?"})
    );
    assert_eq!(
        messages[2],
        json!({
            "role": "assistant",
            "content": "Checking.",
            "thinking": "two calls",
            "tool_calls": [
                {"id": "call_a", "function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}},
                {"id": "call_b", "function": {"name": "get_time", "arguments": {}}},
            ],
        })
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "content": "sunny", "tool_name": "get_weather", "tool_call_id": "call_a"})
    );
    assert_eq!(messages[4]["tool_name"], "get_time");
    assert_eq!(messages[4]["content"], "Error: bad arguments");
    assert_eq!(
        messages[5],
        json!({"role": "user", "content": "and tomorrow?"})
    );
}

#[test]
fn extra_fields_win_and_options_merge_key_by_key() {
    let mut extra = Map::new();
    extra.insert("think".into(), json!(true));
    extra.insert("stream".into(), json!(false));
    extra.insert(
        "options".into(),
        json!({"num_ctx": 8192, "temperature": 0.1}),
    );
    let options = RequestOptions {
        max_tokens: Some(10),
        temperature: Some(0.9),
        extra,
        ..RequestOptions::default()
    };
    let body = encode_with(&History::from(vec![Message::user("hi")]), &[], &options);
    assert_eq!(body["think"], true);
    assert_eq!(body["stream"], false);
    assert_eq!(
        body["options"],
        json!({"num_predict": 10, "num_ctx": 8192, "temperature": 0.1})
    );
    assert!(body.get("tools").is_none());
    let bare = encode_with(
        &History::from(vec![Message::user("hi")]),
        &[],
        &RequestOptions::default(),
    );
    assert!(bare.get("options").is_none());
}

#[test]
fn images_go_as_base64_and_remote_urls_are_refused() {
    let image = |data| {
        ContentBlock::Image(ImageSource {
            media_type: Some("image/png".into()),
            data,
        })
    };
    let history = History::from(vec![Message::new(
        Role::User,
        vec![
            ContentBlock::text("what is"),
            ContentBlock::text("this?"),
            image(ImageData::Bytes(b"abc".to_vec())),
            image(ImageData::Url("data:image/png;base64,ZGVm".into())),
        ],
    )]);
    let body = encode_with(&history, &[], &RequestOptions::default());
    assert_eq!(
        body["messages"][0],
        json!({"role": "user", "content": "what is\nthis?", "images": ["YWJj", "ZGVm"]})
    );
    let remote = History::from(vec![Message::new(
        Role::User,
        vec![image(ImageData::Url("https://example.com/a.png".into()))],
    )]);
    let request = ChatRequest {
        model: "m",
        history: &remote,
        tools: &[],
        options: &RequestOptions::default(),
    };
    let err = encode(&request).unwrap_err();
    assert_eq!(err.category, qore_core::ErrorCategory::Validation);
}

#[test]
fn encoding_is_deterministic_and_needs_a_model() {
    let history = tool_turns();
    let options = RequestOptions::default();
    let once = serde_json::to_vec(&encode_with(&history, &[], &options)).unwrap();
    let twice = serde_json::to_vec(&encode_with(&history, &[], &options)).unwrap();
    assert_eq!(once, twice);
    let request = ChatRequest {
        model: "",
        history: &history,
        tools: &[],
        options: &options,
    };
    assert!(encode(&request).is_err());
}

#[test]
fn fill_in_the_middle_sends_prompt_and_suffix_to_generate() {
    let options = fim_options(&[("options", json!({"num_ctx": 4096})), ("raw", json!(false))]);
    assert_eq!(
        encode_fim(&fim_request("qwen2.5-coder:1.5b", &options)).unwrap(),
        json!({"model": "qwen2.5-coder:1.5b", "prompt": "def add(a, b):\n    return ",
               "suffix": "\n", "stream": true, "raw": false,
               "options": {"num_predict": 32, "temperature": 0.0, "num_ctx": 4096}})
    );
    assert!(encode_fim(&fim_request("", &options)).is_err());
}
