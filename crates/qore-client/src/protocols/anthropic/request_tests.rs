use super::*;
use crate::RequestOptions;
use qore_core::{History, Message, ToolSpec};

fn encode_with(
    history: &History,
    tools: &[ToolSpec],
    options: &RequestOptions,
    cache: bool,
) -> Value {
    let request = ChatRequest {
        model: "claude-x",
        history,
        tools,
        options,
    };
    encode(&request, cache).unwrap()
}

fn encode_history(history: &History) -> Value {
    encode_with(history, &[], &RequestOptions::default(), false)
}

fn add_tool() -> ToolSpec {
    ToolSpec {
        name: "add".into(),
        description: "adds".into(),
        input_schema: json!({"type": "object", "properties": {"x": {"type": "number"}}}),
    }
}

fn text_result(id: &str, text: &str, is_error: bool) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.into(),
        content: vec![ToolResultPart::Text { text: text.into() }],
        is_error,
    }
}

fn tool_turns() -> History {
    History::from(vec![
        Message::system("be brief"),
        Message::user("add 1 and 2, then 3 and 4"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: "from another provider".into(),
                    signature: None,
                },
                ContentBlock::Thinking {
                    text: "use the tool".into(),
                    signature: Some("sig==".into()),
                },
                ContentBlock::RedactedThinking { data: "enc".into() },
                ContentBlock::text("Adding."),
                ContentBlock::ToolUse {
                    id: "toolu_1".into(),
                    name: "add".into(),
                    input: json!({"x": 1, "y": 2}),
                    raw_input: None,
                    signature: None,
                },
                ContentBlock::ToolUse {
                    id: "toolu_2".into(),
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
                ContentBlock::text("here you go"),
                text_result("toolu_1", "3", false),
                text_result("toolu_2", "bad arguments", true),
            ],
        ),
    ])
}

#[test]
fn encodes_tool_turns_in_messages_shape() {
    let options = RequestOptions::default();
    let body = encode_with(&tool_turns(), &[add_tool()], &options, false);
    assert_eq!(body["model"], "claude-x");
    assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "be brief"}])
    );
    assert_eq!(
        body["tools"],
        json!([{"name": "add", "description": "adds",
            "input_schema": {"type": "object", "properties": {"x": {"type": "number"}}}}])
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": [{"type": "text", "text": "add 1 and 2, then 3 and 4"}]})
    );
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "use the tool", "signature": "sig=="},
            {"type": "redacted_thinking", "data": "enc"},
            {"type": "text", "text": "Adding."},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"x": 1, "y": 2}},
            {"type": "tool_use", "id": "toolu_2", "name": "add", "input": {"raw_input": "{x: 3"}},
        ]})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1",
                "content": [{"type": "text", "text": "3"}]},
            {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
                "content": [{"type": "text", "text": "bad arguments"}]},
            {"type": "text", "text": "here you go"},
        ]})
    );
    assert!(body.get("temperature").is_none());
}

#[test]
fn same_role_messages_merge_and_empty_ones_vanish() {
    let history = History::from(vec![
        Message::user("one"),
        Message::assistant(""),
        Message::assistant(" \n\n"),
        Message::user("two"),
        Message::new(Role::User, vec![text_result("toolu_9", "\n", false)]),
        Message::system("  "),
        Message::assistant("three"),
        Message::system("late instructions"),
        Message::assistant("four"),
    ]);
    let body = encode_history(&history);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_9"},
                {"type": "text", "text": "one"},
                {"type": "text", "text": "two"},
            ]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "three"},
                {"type": "text", "text": "four"},
            ]},
        ])
    );
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "late instructions"}])
    );
}

#[test]
fn images_become_base64_or_url_sources() {
    let image = |media_type: Option<&str>, data: ImageData| {
        ContentBlock::Image(ImageSource {
            media_type: media_type.map(str::to_owned),
            data,
        })
    };
    let history = History::from(vec![Message::new(
        Role::User,
        vec![
            image(Some("image/png"), ImageData::Bytes(b"abc".to_vec())),
            image(None, ImageData::Bytes(b"\xFF\xD8\xFF\xE0".to_vec())),
            image(None, ImageData::Url("data:image/gif;base64,R0lG".into())),
            image(None, ImageData::Url("https://example.com/a.webp".into())),
            ContentBlock::ToolResult {
                tool_use_id: "toolu_1".into(),
                content: vec![ToolResultPart::Image(ImageSource {
                    media_type: Some("image/webp".into()),
                    data: ImageData::Bytes(vec![1]),
                })],
                is_error: false,
            },
        ],
    )]);
    let body = encode_history(&history);
    let content = &body["messages"][0]["content"];
    assert_eq!(
        content[0]["content"][0]["source"],
        json!({"type": "base64", "media_type": "image/webp", "data": "AQ=="})
    );
    assert_eq!(
        content[1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "YWJj"}})
    );
    assert_eq!(content[2]["source"]["media_type"], "image/jpeg");
    assert_eq!(
        content[3]["source"],
        json!({"type": "base64", "media_type": "image/gif", "data": "R0lG"})
    );
    assert_eq!(
        content[4]["source"],
        json!({"type": "url", "url": "https://example.com/a.webp"})
    );
}

#[test]
fn cache_breakpoints_mark_system_tools_and_the_last_user_block() {
    let options = RequestOptions::default();
    let tools = [
        ToolSpec {
            name: "first".into(),
            description: String::new(),
            input_schema: Value::Null,
        },
        add_tool(),
    ];
    let history = tool_turns();
    let plain = encode_with(&history, &tools, &options, false);
    assert!(!plain.to_string().contains("cache_control"));
    assert_eq!(
        plain["tools"][0],
        json!({"name": "first", "input_schema": {"type": "object", "properties": {}}})
    );

    let body = encode_with(&history, &tools, &options, true);
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(body["system"][0]["cache_control"], ephemeral);
    assert_eq!(body["tools"][1]["cache_control"], ephemeral);
    assert!(body["tools"][0].get("cache_control").is_none());
    assert_eq!(
        body["messages"][2]["content"][2]["cache_control"],
        ephemeral
    );
    assert_eq!(body.to_string().matches("cache_control").count(), 3);
}

#[test]
fn options_and_extra_fields_apply_and_encoding_is_deterministic() {
    let mut extra = Map::new();
    extra.insert("max_tokens".into(), json!(99));
    extra.insert(
        "thinking".into(),
        json!({"type": "enabled", "budget_tokens": 1024}),
    );
    let options = RequestOptions {
        stream: false,
        max_tokens: Some(64),
        temperature: Some(0.5),
        extra,
    };
    let history = tool_turns();
    let body = encode_with(&history, &[], &options, false);
    assert_eq!(body["stream"], false);
    assert_eq!(body["temperature"], 0.5);
    assert_eq!(body["max_tokens"], 99);
    assert_eq!(body["thinking"]["budget_tokens"], 1024);
    assert!(body.get("tools").is_none());
    let again = encode_with(&history, &[], &options, false);
    assert_eq!(
        serde_json::to_vec(&body).unwrap(),
        serde_json::to_vec(&again).unwrap()
    );
}

#[test]
fn an_empty_model_is_a_config_error() {
    let history = History::new();
    let options = RequestOptions::default();
    let request = ChatRequest {
        model: "",
        history: &history,
        tools: &[],
        options: &options,
    };
    assert!(encode(&request, false).is_err());
}
