use qore_core::{
    ContentBlock, ImageData, ImageSource, Message, ResponseFormat, Role, ToolChoice, ToolResultPart,
};
use serde_json::{json, Value};

use super::decode;
use crate::Inbound;

fn ok(body: Value) -> Inbound {
    decode(body.to_string().as_bytes()).unwrap_or_else(|e| panic!("{body}: {e:?}"))
}

fn with_model(mut body: Value) -> Value {
    body["model"] = json!("m");
    body
}

#[test]
fn input_items_become_messages() {
    let png = "data:image/png;base64,AAEC/w==";
    let cases: Vec<(&str, Value, Vec<Message>)> = vec![
        (
            "a string",
            json!({"input": "hi"}),
            vec![Message::user("hi")],
        ),
        (
            "instructions first, developer and system in place",
            json!({"instructions": "be brief", "input": [
                {"role": "developer", "content": "dev"},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]},
                {"role": "system", "content": [{"type": "input_text", "text": "late"}]},
            ]}),
            vec![
                Message::system("be brief"),
                Message::system("dev"),
                Message::user("q"),
                Message::system("late"),
            ],
        ),
        (
            "images: data URL to bytes, http URL kept; detail named",
            json!({"input": [{"role": "user", "content": [
                {"type": "input_text", "text": "look"},
                {"type": "input_image", "image_url": png, "detail": "auto"},
                {"type": "input_image", "image_url": "https://x.test/a.png"},
            ]}]}),
            vec![Message::new(
                Role::User,
                vec![
                    ContentBlock::text("look"),
                    ContentBlock::Image(ImageSource {
                        media_type: Some("image/png".into()),
                        data: ImageData::Bytes(vec![0, 1, 2, 255]),
                    }),
                    ContentBlock::Image(ImageSource {
                        media_type: None,
                        data: ImageData::Url("https://x.test/a.png".into()),
                    }),
                ],
            )],
        ),
        (
            "reasoning, text and a call fold into one assistant turn; output joins the user",
            json!({"input": [
                {"role": "user", "content": "add"},
                {"type": "reasoning", "id": "rs_1", "summary": [
                    {"type": "summary_text", "text": "a"}, {"type": "summary_text", "text": "b"}],
                    "encrypted_content": "ENC"},
                {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
                    "content": [{"type": "output_text", "text": "Adding.", "annotations": []}]},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add",
                    "arguments": "{\"x\":1}", "status": "completed"},
                {"type": "function_call", "call_id": "call_2", "name": "add", "arguments": "{x"},
                {"type": "function_call_output", "call_id": "call_1", "output": "3"},
                {"type": "function_call_output", "call_id": "call_2", "output": [
                    {"type": "input_text", "text": "bad"}]},
                {"role": "user", "content": "thanks"},
            ]}),
            vec![
                Message::user("add"),
                Message::new(
                    Role::Assistant,
                    vec![
                        ContentBlock::Thinking {
                            text: "a\n\nb".into(),
                            signature: Some("ENC".into()),
                        },
                        ContentBlock::text("Adding."),
                        ContentBlock::tool_use("call_1", "add", json!({"x": 1})),
                        ContentBlock::ToolUse {
                            id: "call_2".into(),
                            name: "add".into(),
                            input: Value::Null,
                            raw_input: Some("{x".into()),
                            signature: None,
                        },
                    ],
                ),
                Message::new(
                    Role::User,
                    vec![
                        ContentBlock::tool_result("call_1", "3", false),
                        ContentBlock::ToolResult {
                            tool_use_id: "call_2".into(),
                            content: vec![ToolResultPart::Text { text: "bad".into() }],
                            is_error: false,
                        },
                        ContentBlock::text("thanks"),
                    ],
                ),
            ],
        ),
        (
            "reasoning: raw text when no summary; empty reasoning dropped",
            json!({"input": [
                {"type": "reasoning", "summary": [], "content": [
                    {"type": "reasoning_text", "text": "raw"}]},
                {"type": "reasoning", "summary": []},
                {"type": "reasoning", "summary": [], "encrypted_content": "E2"},
            ]}),
            vec![Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::Thinking {
                        text: "raw".into(),
                        signature: None,
                    },
                    ContentBlock::Thinking {
                        text: String::new(),
                        signature: Some("E2".into()),
                    },
                ],
            )],
        ),
    ];
    for (name, body, expected) in cases {
        let inbound = ok(with_model(body));
        assert_eq!(inbound.history.messages(), expected.as_slice(), "{name}");
    }
}

#[test]
fn settings_and_defaults() {
    let inbound = ok(json!({"model": "a/b", "input": "x"}));
    assert!(inbound.store, "store defaults to true");
    assert!(!inbound.stream);
    assert!(inbound.dropped.is_empty());
    let inbound = ok(json!({
        "model": "a/b", "input": "x", "stream": true, "store": false,
        "previous_response_id": "resp_1", "max_output_tokens": 100, "temperature": 0.5,
        "top_p": 0.9, "metadata": null,
        "text": {"format": {"type": "json_schema", "name": "p", "strict": true,
            "schema": {"type": "object"}}, "verbosity": "low"},
    }));
    assert!(inbound.stream && !inbound.store);
    assert_eq!(inbound.previous_response_id.as_deref(), Some("resp_1"));
    assert_eq!(inbound.max_tokens, Some(100));
    assert_eq!(inbound.temperature, Some(0.5));
    assert_eq!(inbound.top_p, Some(0.9));
    assert_eq!(
        inbound.response_format,
        Some(ResponseFormat::JsonSchema {
            name: "p".into(),
            schema: json!({"type": "object"}),
            strict: true,
        })
    );
    assert_eq!(inbound.dropped, ["text.verbosity"]);
    let previous_only = ok(json!({"model": "m", "previous_response_id": "resp_1"}));
    assert!(previous_only.history.is_empty());
}

#[test]
fn tools_and_tool_choice() {
    let tools = json!([
        {"type": "function", "name": "add", "description": "Add.", "strict": true,
            "parameters": {"type": "object", "properties": {"x": {"type": "number"}}}},
        {"type": "function", "name": "ping"},
        {"type": "web_search"}, {"type": "custom", "name": "apply_patch"},
        {"type": "local_shell"},
    ]);
    let cases: Vec<(Value, ToolChoice, Vec<&str>)> = vec![
        (json!("auto"), ToolChoice::Auto, vec!["add", "ping"]),
        (json!("none"), ToolChoice::None, vec!["add", "ping"]),
        (json!("required"), ToolChoice::Required, vec!["add", "ping"]),
        (
            json!({"type": "function", "name": "ping"}),
            ToolChoice::Tool {
                name: "ping".into(),
            },
            vec!["add", "ping"],
        ),
        (
            json!({"type": "allowed_tools", "mode": "required",
                "tools": [{"type": "function", "name": "add"}]}),
            ToolChoice::Required,
            vec!["add"],
        ),
    ];
    for (choice, expected, names) in cases {
        let inbound =
            ok(json!({"model": "m", "input": "x", "tools": tools, "tool_choice": choice}));
        assert_eq!(inbound.tool_choice, Some(expected), "{choice}");
        let got: Vec<&str> = inbound.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(got, names, "{choice}");
        assert_eq!(
            inbound.dropped,
            ["strict", "web_search", "custom", "local_shell"]
        );
    }
    let inbound = ok(json!({"model": "m", "input": "x", "tools": tools}));
    assert_eq!(inbound.tools[0].description, "Add.");
    assert_eq!(
        inbound.tools[1].input_schema,
        json!({"type": "object", "properties": {}})
    );
}

#[test]
fn hints_are_dropped_and_named() {
    let inbound = ok(json!({
        "model": "m", "input": [
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {"role": "user", "content": "x"},
        ],
        "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "k", "client_metadata": {}, "metadata": {"a": "b"},
        "parallel_tool_calls": false, "service_tier": "auto", "truncation": "auto",
        "safety_identifier": "s", "user": "u", "context_management": [], "frobnicate": 1,
        "background": false,
    }));
    let mut dropped = inbound.dropped.clone();
    dropped.sort();
    assert_eq!(
        dropped,
        [
            "client_metadata",
            "context_management",
            "frobnicate",
            "metadata",
            "parallel_tool_calls",
            "prompt_cache_key",
            "reasoning",
            "safety_identifier",
            "service_tier",
            "truncation",
            "user",
            "web_search_call",
        ]
    );
    let other = ok(json!({"model": "m", "input": "x", "include": ["file_search_call.results"]}));
    assert_eq!(other.dropped, ["include"]);
}

#[test]
fn malformed_requests_are_400s_naming_the_field() {
    let cases: Vec<(&str, &[u8], Option<&str>)> = vec![
        ("not JSON", b"{", None),
        ("not an object", b"[]", None),
        ("no model", br#"{"input": "x"}"#, Some("model")),
        ("empty model", br#"{"model": "", "input": "x"}"#, Some("model")),
        ("no input", br#"{"model": "m"}"#, Some("input")),
        ("input a number", br#"{"model": "m", "input": 3}"#, Some("input")),
        ("item not an object", br#"{"model": "m", "input": [1]}"#, Some("input[0]")),
        ("unknown role", br#"{"model": "m", "input": [{"role": "tool", "content": "x"}]}"#, Some("input[0].role")),
        ("no content", br#"{"model": "m", "input": [{"role": "user"}]}"#, Some("input[0].content")),
        ("input_file", br#"{"model": "m", "input": [{"role": "user", "content": [{"type": "input_file", "file_url": "https://x/a.pdf"}]}]}"#, Some("input[0].content[0].type")),
        ("image by file id", br#"{"model": "m", "input": [{"role": "user", "content": [{"type": "input_image", "file_id": "f"}]}]}"#, Some("input[0].content[0].file_id")),
        ("bad base64", br#"{"model": "m", "input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,@@"}]}]}"#, Some("input[0].content[0].image_url")),
        ("text not a string", br#"{"model": "m", "input": [{"role": "user", "content": [{"type": "input_text", "text": 1}]}]}"#, Some("input[0].content[0].text")),
        ("item_reference", br#"{"model": "m", "input": [{"type": "item_reference", "id": "msg_1"}]}"#, Some("input[0].type")),
        ("unknown item", br#"{"model": "m", "input": [{"type": "teleport"}]}"#, Some("input[0].type")),
        ("call without call_id", br#"{"model": "m", "input": [{"type": "function_call", "name": "f"}]}"#, Some("input[0].call_id")),
        ("output without output", br#"{"model": "m", "input": [{"type": "function_call_output", "call_id": "c"}]}"#, Some("input[0].output")),
        ("summary not an array", br#"{"model": "m", "input": [{"type": "reasoning", "summary": "s"}]}"#, Some("input[0].summary")),
        ("stream a string", br#"{"model": "m", "input": "x", "stream": "yes"}"#, Some("stream")),
        ("zero tokens", br#"{"model": "m", "input": "x", "max_output_tokens": 0}"#, Some("max_output_tokens")),
        ("temperature a string", br#"{"model": "m", "input": "x", "temperature": "hot"}"#, Some("temperature")),
        ("tools not an array", br#"{"model": "m", "input": "x", "tools": {}}"#, Some("tools")),
        ("tool without name", br#"{"model": "m", "input": "x", "tools": [{"type": "function"}]}"#, Some("tools[0].name")),
        ("bad tool_choice", br#"{"model": "m", "input": "x", "tool_choice": "maybe"}"#, Some("tool_choice")),
        ("tool_choice of no tool", br#"{"model": "m", "input": "x", "tool_choice": {"type": "function", "name": "f"}}"#, Some("tool_choice.name")),
        ("forcing a hosted tool", br#"{"model": "m", "input": "x", "tool_choice": {"type": "web_search_preview"}}"#, Some("tool_choice.type")),
        ("schema missing", br#"{"model": "m", "input": "x", "text": {"format": {"type": "json_schema", "name": "n"}}}"#, Some("text.format.schema")),
        ("unknown format", br#"{"model": "m", "input": "x", "text": {"format": {"type": "yaml"}}}"#, Some("text.format.type")),
        ("background", br#"{"model": "m", "input": "x", "background": true}"#, Some("background")),
        ("prompt template", br#"{"model": "m", "input": "x", "prompt": {"id": "p"}}"#, Some("prompt")),
        ("instructions an array", br#"{"model": "m", "input": "x", "instructions": []}"#, Some("instructions")),
    ];
    for (name, body, param) in cases {
        let error = decode(body).expect_err(name);
        assert_eq!(error.status, 400, "{name}");
        assert_eq!(error.param.as_deref(), param, "{name}: {}", error.message);
    }
}

#[test]
fn item_references_read_through_the_resolver() {
    use crate::dialect::openai_responses::response::{item_origin, response_object};
    use crate::ReplyMeta;
    let meta = ReplyMeta {
        id: "resp_01ABC".into(),
        model: "m".into(),
        created: 0,
        include_usage: false,
    };
    let turn = Message::new(
        Role::Assistant,
        vec![
            ContentBlock::text("Calling."),
            ContentBlock::tool_use("call_9", "f", json!({"a": 1})),
        ],
    );
    let stored = response_object(
        &meta,
        std::slice::from_ref(&turn),
        &Default::default(),
        None,
    );
    let resolve = |id: &str| {
        let (response, index) = item_origin(id)?;
        (response == meta.id).then(|| stored["output"][index].clone())
    };
    let body = json!({"model": "m", "input": [
        {"role": "user", "content": "go"},
        {"type": "item_reference", "id": "msg_01ABC_0"},
        {"type": "item_reference", "id": "fc_01ABC_1"},
        {"type": "function_call_output", "call_id": "call_9", "output": "ok"},
    ]});
    let inbound = super::decode_with(body.to_string().as_bytes(), Some(&resolve)).unwrap();
    let expected = [
        Message::user("go"),
        turn,
        Message::new(
            Role::User,
            vec![ContentBlock::tool_result("call_9", "ok", false)],
        ),
    ];
    assert_eq!(inbound.history.messages(), expected);
    let unknown = json!({"model": "m", "input": [{"type": "item_reference", "id": "msg_x_0"}]});
    let error = super::decode_with(unknown.to_string().as_bytes(), Some(&resolve)).unwrap_err();
    assert_eq!(error.param.as_deref(), Some("input[0].id"));
    assert_eq!(item_origin("rs_01ABC_12"), Some(("resp_01ABC".into(), 12)));
    assert_eq!(item_origin("call_abc"), None);
}
