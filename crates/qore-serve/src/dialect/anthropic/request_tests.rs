use super::*;
use axum::http::HeaderValue;
use qore_core::{ContentBlock, History, ImageData, ImageSource, Message, Role, ToolResultPart};
use serde_json::json;

fn decode_json(body: &Value) -> Result<Inbound, ServeError> {
    decode(body.to_string().as_bytes(), &HeaderMap::new())
}

/// A minimal valid body with `messages` and the extra top-level `fields`.
fn body_with(messages: Value, fields: Value) -> Value {
    let mut body = json!({"model": "claude-x", "max_tokens": 64, "messages": messages});
    if let (Value::Object(body), Value::Object(fields)) = (&mut body, fields) {
        body.extend(fields);
    }
    body
}

fn user(content: Value) -> Value {
    json!([{"role": "user", "content": content}])
}

fn png(bytes: &[u8]) -> ContentBlock {
    ContentBlock::Image(ImageSource {
        media_type: Some("image/png".into()),
        data: ImageData::Bytes(bytes.to_vec()),
    })
}

#[test]
fn request_fields_decode_to_the_inbound() {
    let body = body_with(
        user(json!("hi")),
        json!({"system": "be brief", "temperature": 0.5, "top_p": 0.9, "stream": true,
            "stop_sequences": ["END"], "tool_choice": {"type": "any"},
            "tools": [{"name": "add", "description": "adds",
                "input_schema": {"type": "object"}}]}),
    );
    let inbound = decode_json(&body).unwrap();
    assert_eq!(inbound.model, "claude-x");
    assert_eq!(inbound.max_tokens, Some(64));
    assert_eq!(inbound.temperature, Some(0.5));
    assert_eq!(inbound.top_p, Some(0.9));
    assert!(inbound.stream);
    assert_eq!(inbound.stop, vec!["END".to_owned()]);
    assert_eq!(inbound.tool_choice, Some(ToolChoice::Required));
    assert_eq!(inbound.tools[0].name, "add");
    assert_eq!(
        inbound.history,
        History::from(vec![Message::system("be brief"), Message::user("hi")])
    );
    assert!(inbound.dropped.is_empty(), "{:?}", inbound.dropped);
}

#[test]
fn blocks_decode_to_their_content_blocks() {
    let table: Vec<(&str, Value, Vec<ContentBlock>)> = vec![
        (
            "string content",
            json!("hello"),
            vec![ContentBlock::text("hello")],
        ),
        (
            "text blocks",
            json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]),
            vec![ContentBlock::text("a"), ContentBlock::text("b")],
        ),
        (
            "base64 image",
            json!([{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                "data": "YWJj"}}]),
            vec![png(b"abc")],
        ),
        (
            "url image",
            json!([{"type": "image", "source": {"type": "url", "url": "https://x/a.png"}}]),
            vec![ContentBlock::Image(ImageSource {
                media_type: None,
                data: ImageData::Url("https://x/a.png".into()),
            })],
        ),
        (
            "tool result with text and image blocks",
            json!([{"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": [
                {"type": "text", "text": "3"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                    "data": "YWJj"}}]}]),
            vec![ContentBlock::ToolResult {
                tool_use_id: "t1".into(),
                content: vec![
                    ToolResultPart::Text { text: "3".into() },
                    ToolResultPart::Image(ImageSource {
                        media_type: Some("image/png".into()),
                        data: ImageData::Bytes(b"abc".to_vec()),
                    }),
                ],
                is_error: true,
            }],
        ),
        (
            "tool result with string content, and one with none",
            json!([{"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                {"type": "tool_result", "tool_use_id": "t2"}]),
            vec![
                ContentBlock::tool_result("t1", "ok", false),
                ContentBlock::ToolResult {
                    tool_use_id: "t2".into(),
                    content: vec![],
                    is_error: false,
                },
            ],
        ),
    ];
    for (name, content, expected) in table {
        let inbound = decode_json(&body_with(user(content), json!({}))).unwrap();
        assert_eq!(
            inbound.history.messages(),
            &[Message::new(Role::User, expected)],
            "{name}"
        );
    }
}

#[test]
fn assistant_blocks_keep_signatures_and_tool_inputs() {
    let messages = json!([
        {"role": "user", "content": "add"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig=="},
            {"type": "redacted_thinking", "data": "enc"},
            {"type": "text", "text": "calling"},
            {"type": "tool_use", "id": "t1", "name": "add", "input": {"x": 1}}]},
    ]);
    let inbound = decode_json(&body_with(messages, json!({}))).unwrap();
    assert_eq!(
        inbound.history.messages()[1].blocks,
        vec![
            ContentBlock::Thinking {
                text: "hmm".into(),
                signature: Some("sig==".into())
            },
            ContentBlock::RedactedThinking { data: "enc".into() },
            ContentBlock::text("calling"),
            ContentBlock::tool_use("t1", "add", json!({"x": 1})),
        ]
    );
}

#[test]
fn bad_requests_are_400s_naming_the_field() {
    let doc = json!({"type": "document", "source": {"type": "text", "media_type": "text/plain",
        "data": "x"}});
    let table: Vec<(&str, &[u8], &str, &str)> = vec![
        ("not json", b"{", "body", "not JSON"),
        ("not an object", b"[]", "body", "object"),
        ("no model", br#"{"max_tokens": 1, "messages": []}"#, "model", "required"),
        ("model not a string", br#"{"model": 1, "max_tokens": 1, "messages": []}"#, "model", "string"),
        ("no messages", br#"{"model": "m", "max_tokens": 1}"#, "messages", "required"),
        ("no max_tokens", br#"{"model": "m", "messages": []}"#, "max_tokens", "required"),
        ("negative max_tokens", br#"{"model": "m", "max_tokens": -1, "messages": []}"#, "max_tokens", "integer"),
        ("temperature a string", br#"{"model": "m", "max_tokens": 1, "messages": [], "temperature": "hot"}"#, "temperature", "number"),
        ("developer role", br#"{"model": "m", "max_tokens": 1, "messages": [{"role": "developer", "content": "x"}]}"#, "messages[0].role", "not a role"),
        ("content a number", br#"{"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": 3}]}"#, "messages[0].content", "string or an array"),
        ("bad base64", br#"{"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "@@"}}]}]}"#, "messages[0].content[0].source.data", "not base64"),
        ("file image", br#"{"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}}]}]}"#, "messages[0].content[0].source.type", "file image sources"),
        ("tool without schema", br#"{"model": "m", "max_tokens": 1, "messages": [], "tools": [{"name": "a"}]}"#, "tools[0].input_schema", "required"),
        ("tool choice unknown", br#"{"model": "m", "max_tokens": 1, "messages": [], "tool_choice": {"type": "some"}}"#, "tool_choice.type", "unknown type"),
        ("tool choice without name", br#"{"model": "m", "max_tokens": 1, "messages": [], "tool_choice": {"type": "tool"}}"#, "tool_choice.name", "name"),
        ("system block not text", br#"{"model": "m", "max_tokens": 1, "messages": [], "system": [{"type": "image"}]}"#, "system[0]", "image blocks cannot be carried"),
        ("stop sequence not a string", br#"{"model": "m", "max_tokens": 1, "messages": [], "stop_sequences": [1]}"#, "stop_sequences[0]", "string"),
        ("output format text", br#"{"model": "m", "max_tokens": 1, "messages": [], "output_format": {"type": "text"}}"#, "output_format.type", "cannot be carried"),
    ];
    for (name, body, param, needle) in table {
        let err = decode(body, &HeaderMap::new()).unwrap_err();
        assert_eq!(err.status, 400, "{name}");
        assert_eq!(err.param.as_deref(), Some(param), "{name}: {err:?}");
        assert!(err.message.contains(needle), "{name}: {}", err.message);
    }
    let messages = json!([{"role": "user", "content": "a"}, {"role": "user", "content": [doc]}]);
    let err = decode_json(&body_with(messages, json!({}))).unwrap_err();
    assert_eq!(
        err.message,
        "messages[1].content[0]: document blocks cannot be carried"
    );
    for kind in [
        "search_result",
        "server_tool_use",
        "web_search_tool_result",
        "container_upload",
        "mcp_tool_use",
    ] {
        let err = decode_json(&body_with(user(json!([{"type": kind}])), json!({}))).unwrap_err();
        assert_eq!(
            err.message,
            format!("messages[0].content[0]: {kind} blocks cannot be carried")
        );
    }
    let nested = user(json!([{"type": "tool_result", "tool_use_id": "t",
        "content": [{"type": "search_result", "source": "s", "title": "t", "content": []}]}]));
    let err = decode_json(&body_with(nested, json!({}))).unwrap_err();
    assert_eq!(
        err.param.as_deref(),
        Some("messages[0].content[0].content[0]")
    );
}

#[test]
fn hints_are_dropped_and_named_once() {
    let table: Vec<(&str, Value, Value, &[&str])> = vec![
        ("top_k", json!("x"), json!({"top_k": 5}), &["top_k"]),
        (
            "thinking",
            json!("x"),
            json!({"thinking": {"type": "adaptive"}}),
            &["thinking"],
        ),
        (
            "metadata, service tier, null",
            json!("x"),
            json!({"metadata": {"user_id": "u"}, "service_tier": "auto", "container": null}),
            &["metadata", "service_tier"],
        ),
        (
            "unknown key",
            json!("x"),
            json!({"frobnicate": 1}),
            &["frobnicate"],
        ),
        (
            "cache control everywhere",
            json!([
            {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
            {"type": "tool_result", "tool_use_id": "t", "content": "x",
                "cache_control": {"type": "ephemeral"}}]),
            json!({"cache_control": {"type": "ephemeral"},
                "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
                "tools": [{"name": "a", "input_schema": {}, "cache_control": {"type": "ephemeral"}}]}),
            &["cache_control"],
        ),
        (
            "hosted tools by type",
            json!("x"),
            json!({"tools": [
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
            {"type": "bash_20250124", "name": "bash"},
            {"type": "custom", "name": "mine", "input_schema": {"type": "object"}}]}),
            &["web_search_20250305", "bash_20250124"],
        ),
        (
            "parallel tool use",
            json!("x"),
            json!({"tool_choice": {"type": "auto", "disable_parallel_tool_use": true}}),
            &["disable_parallel_tool_use"],
        ),
        (
            "effort",
            json!("x"),
            json!({"output_config": {"effort": "high"}}),
            &["output_config"],
        ),
        (
            "citations",
            json!([{"type": "text", "text": "a", "citations": [{"type": "x"}]}]),
            json!({}),
            &["citations"],
        ),
    ];
    for (name, content, fields, expected) in table {
        let inbound = decode_json(&body_with(user(content), fields)).unwrap();
        assert_eq!(inbound.dropped, expected, "{name}");
    }
}

#[test]
fn a_json_schema_output_format_is_carried() {
    let schema =
        json!({"type": "object", "title": "Point", "properties": {"x": {"type": "number"}}});
    for fields in [
        json!({"output_config": {"format": {"type": "json_schema", "schema": schema}}}),
        json!({"output_format": {"type": "json_schema", "schema": schema}}),
    ] {
        let inbound = decode_json(&body_with(user(json!("x")), fields)).unwrap();
        let expected = ResponseFormat::JsonSchema {
            name: "Point".into(),
            schema: schema.clone(),
            strict: true,
        };
        assert_eq!(inbound.response_format, Some(expected));
        assert!(inbound.dropped.is_empty());
    }
}

#[test]
fn anthropic_headers_pass_through_and_beta_is_named() {
    let mut headers = HeaderMap::new();
    headers.insert("anthropic-version", HeaderValue::from_static("2023-06-01"));
    headers.append(
        "anthropic-beta",
        HeaderValue::from_static("context-1m-2025-08-07"),
    );
    headers.append(
        "anthropic-beta",
        HeaderValue::from_static("files-api-2025-04-14"),
    );
    headers.insert("x-api-key", HeaderValue::from_static("secret"));
    let body = body_with(user(json!("x")), json!({}));
    let inbound = decode(body.to_string().as_bytes(), &headers).unwrap();
    assert_eq!(
        inbound.passthrough_headers,
        vec![
            ("anthropic-version".to_owned(), "2023-06-01".to_owned()),
            (
                "anthropic-beta".to_owned(),
                "context-1m-2025-08-07".to_owned()
            ),
            (
                "anthropic-beta".to_owned(),
                "files-api-2025-04-14".to_owned()
            ),
        ]
    );
    assert_eq!(inbound.dropped, vec!["anthropic-beta".to_owned()]);
}

#[path = "request_roundtrip.rs"]
mod roundtrip;

#[path = "request_fixtures.rs"]
mod fixtures;
