use qore_client::protocols::openai_chat::OpenAiChat as ClientChat;
use qore_client::{ChatRequest, Protocol, RequestOptions};
use qore_core::{
    ContentBlock, History, ImageData, ImageSource, Message, ResponseFormat, Role, ToolChoice,
    ToolSpec,
};
use serde_json::{json, Value};

use super::*;

fn png() -> ContentBlock {
    ContentBlock::Image(ImageSource {
        media_type: Some("image/png".into()),
        data: ImageData::Bytes(vec![0x89, b'P', b'N', b'G', 0, 255]),
    })
}

fn call(id: &str, input: Value) -> ContentBlock {
    ContentBlock::tool_use(id, "add", input)
}

fn add_tool() -> ToolSpec {
    ToolSpec {
        name: "add".into(),
        description: "adds two numbers".into(),
        input_schema: json!({"type": "object", "properties": {"x": {"type": "number"}}}),
    }
}

/// Histories the client encodes, each with what must come back (the same history, but
/// where the wire cannot say it: an error result is text prefixed "Error: ").
fn histories() -> Vec<(&'static str, History, History)> {
    let same = |h: History| (h.clone(), h);
    let text = same(History::from(vec![
        Message::system("be brief"),
        Message::user("hi"),
        Message::assistant("hello"),
        Message::user("and now?"),
    ]));
    let images = same(History::from(vec![
        Message::new(
            Role::User,
            vec![ContentBlock::text("what are these?"), png()],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::Image(ImageSource {
                media_type: None,
                data: ImageData::Url("https://example.com/cat.jpg".into()),
            })],
        ),
    ]));
    let tools = same(History::from(vec![
        Message::system("use tools"),
        Message::user("add 1 and 2, then 3 and 4"),
        Message::new(
            Role::Assistant,
            vec![
                ContentBlock::Thinking {
                    text: "two calls".into(),
                    signature: None,
                },
                ContentBlock::text("adding"),
                call("c1", json!({"x": 1, "y": 2})),
                ContentBlock::ToolUse {
                    id: "c2".into(),
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
                ContentBlock::tool_result("c1", "3", false),
                ContentBlock::tool_result("c2", "7", false),
                ContentBlock::text("thanks"),
            ],
        ),
        Message::assistant("3 and 7"),
    ]));
    let sent = History::from(vec![
        Message::user("go"),
        Message::new(Role::Assistant, vec![call("c9", json!({}))]),
        Message::new(
            Role::User,
            vec![ContentBlock::tool_result("c9", "no such file", true)],
        ),
    ]);
    let errored = History::from(vec![
        Message::user("go"),
        Message::new(Role::Assistant, vec![call("c9", json!({}))]),
        Message::new(
            Role::User,
            vec![ContentBlock::tool_result(
                "c9",
                "Error: no such file",
                false,
            )],
        ),
    ]);
    vec![
        ("text", text.0, text.1),
        ("images", images.0, images.1),
        ("tool calls and results", tools.0, tools.1),
        ("error result", sent, errored),
    ]
}

#[test]
fn histories_the_client_encodes_decode_to_the_same_history() {
    for (name, history, expected) in histories() {
        for tools in [vec![], vec![add_tool()]] {
            let options = RequestOptions {
                max_tokens: Some(100),
                temperature: Some(0.5),
                ..RequestOptions::default()
            };
            let request = ChatRequest {
                model: "gpt-x",
                history: &history,
                tools: &tools,
                options: &options,
            };
            let client = ClientChat {
                replay_reasoning: true,
            };
            let body = client.encode(&request).unwrap();
            let inbound = decode(&serde_json::to_vec(&body).unwrap()).unwrap();
            assert_eq!(inbound.history, expected, "{name}: {body}");
            assert_eq!(inbound.tools, tools, "{name}");
            assert_eq!(inbound.model, "gpt-x");
            assert_eq!(inbound.max_tokens, Some(100));
            assert_eq!(inbound.temperature, Some(0.5));
            assert!(inbound.stream && inbound.include_usage, "{name}");
            let choice = (!tools.is_empty()).then_some(ToolChoice::Auto);
            assert_eq!(inbound.tool_choice, choice, "{name}");
            assert!(inbound.dropped.is_empty(), "{name}: {:?}", inbound.dropped);
        }
    }
}

pub(super) fn decoded(body: Value) -> Inbound {
    decode(&serde_json::to_vec(&body).unwrap()).unwrap_or_else(|e| panic!("{body}: {e:?}"))
}

pub(super) fn with(fields: Value) -> Value {
    let mut body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    for (key, value) in fields.as_object().unwrap() {
        body[key] = value.clone();
    }
    body
}

#[test]
fn settings_are_read() {
    let inbound = decoded(with(json!({
        "tool_choice": {"type": "function", "function": {"name": "add"}},
        "response_format": {"type": "json_schema",
            "json_schema": {"name": "point", "schema": {"type": "object"}, "strict": true}},
        "max_tokens": 10, "max_completion_tokens": 20, "top_p": 0.9, "stop": "END",
        "stream": false, "n": 1, "modalities": ["text"],
    })));
    assert_eq!(
        inbound.tool_choice,
        Some(ToolChoice::Tool { name: "add".into() })
    );
    assert_eq!(
        inbound.response_format,
        Some(ResponseFormat::JsonSchema {
            name: "point".into(),
            schema: json!({"type": "object"}),
            strict: true
        })
    );
    assert_eq!(inbound.max_tokens, Some(20));
    assert_eq!(inbound.top_p, Some(0.9));
    assert_eq!(inbound.stop, vec!["END".to_owned()]);
    assert!(!inbound.stream);
    let choices = [
        (json!("auto"), ToolChoice::Auto),
        (json!("none"), ToolChoice::None),
        (json!("required"), ToolChoice::Required),
        (json!("any"), ToolChoice::Required),
    ];
    for (wire, choice) in choices {
        let inbound = decoded(with(json!({"tool_choice": wire})));
        assert_eq!(inbound.tool_choice, Some(choice));
    }
    let formats = [
        (json!({"type": "text"}), ResponseFormat::Text),
        (json!({"type": "json_object"}), ResponseFormat::JsonObject),
    ];
    for (wire, format) in formats {
        let inbound = decoded(with(json!({"response_format": wire})));
        assert_eq!(inbound.response_format, Some(format));
    }
    let inbound = decoded(with(
        json!({"stop": ["a", "b"], "max_tokens": 5, "tool_choice": null}),
    ));
    assert_eq!(inbound.stop, vec!["a".to_owned(), "b".to_owned()]);
    assert_eq!(inbound.max_tokens, Some(5));
    assert_eq!(inbound.tool_choice, None);
}

#[test]
fn hints_are_dropped_and_named() {
    let inbound = decoded(with(json!({
        "prompt_cache_key": "k", "metadata": {"a": "b"}, "user": "u", "store": true,
        "reasoning_effort": "low", "parallel_tool_calls": false, "seed": 1,
        "logit_bias": {}, "logprobs": true, "top_logprobs": 2, "frequency_penalty": 0.1,
        "presence_penalty": 0.1, "service_tier": "auto", "safety_identifier": "s",
        "prediction": {}, "web_search_options": {}, "verbosity": "low", "frobnicate": 1,
        "modalities": ["text"], "stream_options": {"include_usage": true,
            "include_obfuscation": false},
        "temperature": null,
    })));
    let mut dropped = inbound.dropped.clone();
    dropped.sort();
    let mut expected = vec![
        "prompt_cache_key",
        "metadata",
        "user",
        "store",
        "reasoning_effort",
        "parallel_tool_calls",
        "seed",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "frequency_penalty",
        "presence_penalty",
        "service_tier",
        "safety_identifier",
        "prediction",
        "web_search_options",
        "verbosity",
        "frobnicate",
        "modalities",
        "stream_options.include_obfuscation",
    ];
    expected.sort();
    assert_eq!(dropped, expected);
    assert!(inbound.include_usage);
    let inbound = decoded(json!({"model": "m", "messages": [
        {"role": "user", "name": "ann", "content": [
            {"type": "text", "text": "see", "cache_control": {"type": "ephemeral"}},
            {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "high"}}]},
        {"role": "assistant", "content": "ok", "prefix": true},
    ]}));
    let mut dropped = inbound.dropped.clone();
    dropped.sort();
    assert_eq!(
        dropped,
        [
            "cache_control",
            "image_url.detail",
            "messages[].name",
            "messages[].prefix"
        ]
    );
}
