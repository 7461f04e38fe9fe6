use super::*;
use crate::protocols::test_support::{self, finished, fold};
use qore_core::{ContentBlock, ErrorCategory, StreamOutcome};
use serde_json::{json, Value};

/// Decode data payloads (one per frame), then end the body.
fn decode(frames: &[String]) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    test_support::decode(MessagesStreamDecoder::new(), frames)
}

fn decode_body(body: &Value) -> Result<Vec<ResponseEvent>, ErrorInfo> {
    test_support::decode_body(MessagesStreamDecoder::new(), body.to_string().as_bytes())
}

fn message_start(usage: Value) -> String {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "model": "claude-x", "content": [], "stop_reason": null,
        "usage": usage}})
    .to_string()
}

fn start(index: u32, block: Value) -> String {
    json!({"type": "content_block_start", "index": index, "content_block": block}).to_string()
}

fn delta(index: u32, delta: Value) -> String {
    json!({"type": "content_block_delta", "index": index, "delta": delta}).to_string()
}

fn stop(index: u32) -> String {
    json!({"type": "content_block_stop", "index": index}).to_string()
}

fn message_delta(reason: &str, usage: Value) -> String {
    json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null},
        "usage": usage})
    .to_string()
}

fn message_stop() -> String {
    json!({"type": "message_stop"}).to_string()
}

fn tool_use(id: &str, name: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": {}})
}

fn args(part: &str) -> Value {
    json!({"type": "input_json_delta", "partial_json": part})
}

#[test]
fn thinking_text_and_interleaved_tool_calls_fold_in_block_order() {
    let frames = vec![
        message_start(json!({"input_tokens": 10, "output_tokens": 1})),
        start(
            0,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        json!({"type": "ping"}).to_string(),
        delta(0, json!({"type": "thinking_delta", "thinking": "let me "})),
        delta(0, json!({"type": "thinking_delta", "thinking": "add"})),
        delta(0, json!({"type": "signature_delta", "signature": "sig=="})),
        stop(0),
        start(1, json!({"type": "text", "text": ""})),
        delta(1, json!({"type": "text_delta", "text": "Adding \"both\""})),
        stop(1),
        start(2, tool_use("toolu_a", "add")),
        start(3, tool_use("toolu_b", "sub")),
        delta(2, args("")),
        delta(3, args("{\"x\": 5,")),
        delta(2, args("{\"x\": 1,")),
        delta(3, args(" \"y\": 2}")),
        delta(2, args(" \"y\": [3]}")),
        stop(3),
        stop(2),
        message_delta("tool_use", json!({"output_tokens": 40})),
        message_stop(),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    assert_eq!(
        events[0],
        ResponseEvent::MessageStart {
            id: Some("msg_1".into()),
            model: Some("claude-x".into())
        }
    );
    let args_of_b: String = events
        .iter()
        .filter_map(|e| match e {
            ResponseEvent::ToolCallArgsDelta { id, delta } if id == "toolu_b" => {
                Some(delta.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(args_of_b, "{\"x\": 5, \"y\": 2}");
    let (message, stop_reason, usage) = finished(&events);
    assert_eq!(stop_reason, Some(StopReason::ToolUse));
    assert_eq!(usage.input_tokens, Some(10));
    assert_eq!(usage.output_tokens, Some(40));
    let call = |id: &str, name: &str, input: Value| ContentBlock::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
        raw_input: None,
        signature: None,
    };
    assert_eq!(
        message.blocks,
        vec![
            ContentBlock::Thinking {
                text: "let me add".into(),
                signature: Some("sig==".into())
            },
            ContentBlock::text("Adding \"both\""),
            call("toolu_a", "add", json!({"x": 1, "y": [3]})),
            call("toolu_b", "sub", json!({"x": 5, "y": 2})),
        ]
    );
}

#[test]
fn redacted_and_signature_only_thinking_are_blocks_of_their_own() {
    let frames = vec![
        message_start(json!({"input_tokens": 3})),
        start(
            0,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        delta(0, json!({"type": "thinking_delta", "thinking": "first"})),
        delta(0, json!({"type": "signature_delta", "signature": "s1"})),
        stop(0),
        start(1, json!({"type": "redacted_thinking", "data": "EnCrYpTeD"})),
        stop(1),
        start(
            2,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        delta(2, json!({"type": "signature_delta", "signature": "s2"})),
        stop(2),
        message_delta("end_turn", json!({"output_tokens": 9})),
        message_stop(),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    let (message, stop_reason, _) = finished(&events);
    assert_eq!(stop_reason, Some(StopReason::EndTurn));
    assert_eq!(
        message.blocks,
        vec![
            ContentBlock::Thinking {
                text: "first".into(),
                signature: Some("s1".into())
            },
            ContentBlock::RedactedThinking {
                data: "EnCrYpTeD".into()
            },
            ContentBlock::Thinking {
                text: String::new(),
                signature: Some("s2".into())
            },
        ]
    );
}

#[test]
fn usage_is_merged_and_a_later_zero_never_erases_a_count() {
    let frames = vec![
        message_start(json!({"input_tokens": 755, "output_tokens": 3,
            "cache_creation_input_tokens": 120, "cache_read_input_tokens": 600,
            "cache_creation": {"ephemeral_5m_input_tokens": 120}})),
        message_delta(
            "max_tokens",
            json!({"input_tokens": 0, "output_tokens": 64, "cache_read_input_tokens": null,
                "output_tokens_details": {"thinking_tokens": 20}}),
        ),
        message_stop(),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    let (_, stop_reason, usage) = finished(&events);
    assert_eq!(stop_reason, Some(StopReason::MaxTokens));
    assert_eq!(
        usage,
        Usage {
            input_tokens: Some(755),
            output_tokens: Some(64),
            cached_input_tokens: Some(600),
            cache_creation_input_tokens: Some(120),
            reasoning_tokens: Some(20),
        }
    );
}

#[test]
fn every_stop_reason_maps() {
    for (wire, ours) in [
        ("end_turn", StopReason::EndTurn),
        ("max_tokens", StopReason::MaxTokens),
        ("stop_sequence", StopReason::StopSequence),
        ("tool_use", StopReason::ToolUse),
        ("pause_turn", StopReason::PauseTurn),
        ("refusal", StopReason::Refusal),
        ("something_new", StopReason::Other("something_new".into())),
    ] {
        let frames = vec![
            message_start(json!({})),
            message_delta(wire, json!({})),
            message_stop(),
        ];
        let (events, end) = decode(&frames);
        end.unwrap();
        assert_eq!(finished(&events).1, Some(ours), "{wire}");
    }
}

#[test]
fn an_error_event_fails_the_turn_with_the_providers_type() {
    let frames = vec![
        message_start(json!({"input_tokens": 3})),
        start(0, json!({"type": "text", "text": ""})),
        delta(0, json!({"type": "text_delta", "text": "partial"})),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
            .to_string(),
    ];
    let (events, end) = decode(&frames);
    end.expect("the error was reported as an event, the stream is not also incomplete");
    let StreamOutcome::Failed { error, .. } = fold(&events) else {
        panic!("not failed: {events:?}");
    };
    assert_eq!(error.category, ErrorCategory::Provider);
    assert!(error.message.contains("Overloaded"), "{}", error.message);
    let detail = error.provider.expect("detail");
    assert_eq!(detail.status, None);
    assert_eq!(detail.error_type.as_deref(), Some("overloaded_error"));
}

#[test]
fn a_stream_without_message_stop_is_incomplete() {
    let frames = vec![
        message_start(json!({})),
        start(0, tool_use("toolu_a", "add")),
        delta(0, args("{\"x\"")),
        message_delta("tool_use", json!({"output_tokens": 5})),
    ];
    let (_, end) = decode(&frames);
    let err = end.expect_err("incomplete");
    assert_eq!(err.category, ErrorCategory::Network);
    assert!(err.message.contains("ended before"), "{}", err.message);
}

#[test]
fn frames_after_message_stop_and_unknown_events_are_ignored() {
    let frames = vec![
        message_start(json!({})),
        json!({"type": "something_new", "index": 0}).to_string(),
        start(0, json!({"type": "text", "text": "", "citations": []})),
        delta(
            0,
            json!({"type": "citations_delta", "citation": {"type": "char_location"}}),
        ),
        delta(0, json!({"type": "text_delta", "text": "ok"})),
        stop(0),
        message_delta("end_turn", json!({})),
        message_stop(),
        "[DONE]".to_owned(),
        "not json at all".to_owned(),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    assert_eq!(finished(&events).0.text(), "ok");
}

#[test]
fn an_undecodable_frame_is_a_provider_error_keeping_the_frame() {
    let frames = vec![message_start(json!({})), "{\"type\": ".to_owned()];
    let (_, end) = decode(&frames);
    let err = end.expect_err("undecodable");
    assert_eq!(err.category, ErrorCategory::Provider);
    assert_eq!(
        err.provider.and_then(|p| p.body).as_deref(),
        Some("{\"type\": ")
    );
}

#[test]
fn server_tool_blocks_are_skipped_and_text_around_them_is_kept() {
    let frames = vec![
        message_start(json!({})),
        start(0, json!({"type": "text", "text": ""})),
        delta(0, json!({"type": "text_delta", "text": "Searching. "})),
        stop(0),
        start(
            1,
            json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
        ),
        delta(1, args("{\"query\": \"sky\"}")),
        stop(1),
        start(
            2,
            json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
                "content": [{"type": "web_search_result", "url": "https://x", "title": 3}]}),
        ),
        stop(2),
        start(3, json!({"type": "text", "text": ""})),
        delta(3, json!({"type": "text_delta", "text": "Blue."})),
        stop(3),
        message_delta("end_turn", json!({})),
        message_stop(),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    assert!(!events
        .iter()
        .any(|e| matches!(e, ResponseEvent::ToolCallStart { .. })));
    let (message, _, _) = finished(&events);
    assert_eq!(message.blocks, vec![ContentBlock::text("Searching. Blue.")]);
}

#[test]
fn a_whole_body_folds_like_the_stream() {
    let body = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [
            {"type": "thinking", "thinking": "", "signature": "s0"},
            {"type": "redacted_thinking", "data": "enc"},
            {"type": "text", "text": "Let me add."},
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"q": 1}},
            {"type": "tool_use", "id": "toolu_a", "name": "add", "input": {"x": 1, "y": 2}},
            {"type": "tool_use", "id": "toolu_b", "name": "now", "input": {}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 20, "output_tokens": 30, "cache_read_input_tokens": 7,
            "cache_creation_input_tokens": 0}});
    let events = decode_body(&body).unwrap();
    assert_eq!(
        events[0],
        ResponseEvent::MessageStart {
            id: Some("msg_1".into()),
            model: Some("claude-x".into())
        }
    );
    let (message, stop_reason, usage) = finished(&events);
    assert_eq!(stop_reason, Some(StopReason::ToolUse));
    assert_eq!(usage.cached_input_tokens, Some(7));
    assert_eq!(usage.cache_creation_input_tokens, Some(0));
    assert_eq!(
        message.blocks,
        vec![
            ContentBlock::Thinking {
                text: String::new(),
                signature: Some("s0".into())
            },
            ContentBlock::RedactedThinking { data: "enc".into() },
            ContentBlock::text("Let me add."),
            ContentBlock::ToolUse {
                id: "toolu_a".into(),
                name: "add".into(),
                input: json!({"x": 1, "y": 2}),
                raw_input: None,
                signature: None,
            },
            ContentBlock::ToolUse {
                id: "toolu_b".into(),
                name: "now".into(),
                input: json!({}),
                raw_input: None,
                signature: None,
            },
        ]
    );
}

#[test]
fn a_whole_error_envelope_or_a_non_message_is_an_error() {
    let err = decode_body(&json!({"type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"}}))
    .expect_err("error envelope");
    assert_eq!(
        err.provider.and_then(|p| p.error_type).as_deref(),
        Some("overloaded_error")
    );
    assert!(decode_body(&json!({"hello": "world"})).is_err());
    let empty = decode_body(&json!({"id": "m", "type": "message", "content": null,
        "stop_reason": "end_turn"}))
    .expect("null content is no content");
    assert!(finished(&empty).0.blocks.is_empty());
    let mut out = VecDeque::new();
    assert!(MessagesStreamDecoder::new()
        .body(b"<html>", &mut out)
        .is_err());
}

#[test]
fn tool_arguments_that_are_not_json_are_kept_raw() {
    let frames = vec![
        message_start(json!({})),
        start(0, tool_use("toolu_a", "add")),
        delta(0, args("{\"x\": 1")),
        stop(0),
        message_delta("tool_use", json!({})),
        message_stop(),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    let (message, _, _) = finished(&events);
    assert!(
        matches!(&message.blocks[0], ContentBlock::ToolUse { input: Value::Null, raw_input: Some(raw), .. } if raw == "{\"x\": 1"),
        "{:?}",
        message.blocks
    );
}
