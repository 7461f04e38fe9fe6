use super::*;
use crate::protocols::test_support::{self, finished, fold};
use qore_core::{ContentBlock, StreamOutcome};
use serde_json::json;

/// Decode data payloads (one per frame), then end the body.
fn decode<S: AsRef<str>>(frames: &[S]) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    test_support::decode(ChatStreamDecoder::new(), frames)
}

fn chunk(delta: serde_json::Value, finish: Option<&str>) -> String {
    json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
}

#[test]
fn text_reasoning_usage_and_finish() {
    let frames = [
        chunk(
            json!({"role": "assistant", "content": null, "reasoning_content": "think"}),
            None,
        ),
        chunk(json!({"content": "Hel"}), None),
        chunk(json!({"content": "lo \"q\""}), None),
        chunk(json!({}), Some("stop")),
        json!({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 2},
            "completion_tokens_details": {"reasoning_tokens": 1}}})
        .to_string(),
        "[DONE]".to_owned(),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    assert_eq!(
        events[0],
        ResponseEvent::MessageStart {
            id: Some("c1".into()),
            model: Some("m".into())
        }
    );
    assert_eq!(
        events[1],
        ResponseEvent::ThinkingDelta {
            text: "think".into()
        }
    );
    assert_eq!(
        events[3],
        ResponseEvent::TextDelta {
            text: "lo \"q\"".into()
        }
    );
    assert_eq!(
        events[4],
        ResponseEvent::Stop {
            reason: StopReason::EndTurn
        }
    );
    let ResponseEvent::Usage { usage } = &events[5] else {
        panic!("{:?}", events[5])
    };
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cached_input_tokens,
            usage.reasoning_tokens
        ),
        (Some(5), Some(3), Some(2), Some(1))
    );
    let (message, _, _) = finished(&events);
    assert_eq!(message.text(), "Hello \"q\"");
}

#[test]
fn tool_calls_merge_by_index_with_ids_once_or_repeated() {
    let call = |index: u32, id: Option<&str>, name: Option<&str>, args: &str| {
        let mut function = json!({"arguments": args});
        if let Some(name) = name {
            function["name"] = json!(name);
        }
        let mut tc = json!({"index": index, "function": function});
        if let Some(id) = id {
            tc["id"] = json!(id);
        }
        chunk(json!({"tool_calls": [tc]}), None)
    };
    // OpenAI: id and name only first; llama.cpp: repeated in every chunk. Interleaved.
    let frames = [
        call(0, Some("a"), Some("add"), ""),
        call(1, Some("b"), Some("sub"), "{\"x\""),
        call(0, None, None, "{\"x\":"),
        call(1, Some("b"), Some("sub"), ":2}"),
        call(0, None, None, "1}"),
        chunk(json!({}), Some("tool_calls")),
        "[DONE]".to_owned(),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    let (message, stop_reason, _) = finished(&events);
    assert_eq!(stop_reason, Some(StopReason::ToolUse));
    assert_eq!(
        message.blocks,
        vec![
            ContentBlock::ToolUse {
                id: "a".into(),
                name: "add".into(),
                input: json!({"x": 1}),
                raw_input: None,
                signature: None,
            },
            ContentBlock::ToolUse {
                id: "b".into(),
                name: "sub".into(),
                input: json!({"x": 2}),
                raw_input: None,
                signature: None,
            },
        ]
    );
    let deltas: String = events
        .iter()
        .filter_map(|e| match e {
            ResponseEvent::ToolCallArgsDelta { id, delta } if id == "b" => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "{\"x\":2}");
}

#[test]
fn a_new_id_at_an_open_index_starts_a_new_call_and_missing_ids_are_synthesized() {
    let frames = [
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "g", "arguments": {"k": "v"}}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "function": {"name": "h", "arguments": "{\"broken"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    let (message, _, _) = finished(&events);
    let calls: Vec<_> = message
        .blocks
        .iter()
        .map(|b| match b {
            ContentBlock::ToolUse {
                id,
                name,
                input,
                raw_input,
                ..
            } => (id.clone(), name.clone(), input.clone(), raw_input.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(calls[0], ("a".into(), "f".into(), json!({}), None));
    assert_eq!(calls[1], ("b".into(), "g".into(), json!({"k": "v"}), None));
    assert!(!calls[2].0.is_empty());
    assert_eq!(calls[2].3.as_deref(), Some("{\"broken"));
}

#[test]
fn magistral_thinking_parts_and_refusals() {
    let frames = [
        chunk(
            json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}]}),
            None,
        ),
        chunk(json!({"content": [{"type": "text", "text": "ok"}]}), None),
        chunk(json!({"refusal": "no"}), None),
        chunk(json!({}), Some("stop")),
        "[DONE]".to_owned(),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    let (message, stop_reason, _) = finished(&events);
    assert_eq!(
        message.blocks[0],
        ContentBlock::Thinking {
            text: "hmm".into(),
            signature: None
        }
    );
    assert_eq!(message.text(), "okno");
    assert_eq!(stop_reason, Some(StopReason::Refusal));
}

#[test]
fn errors_inside_a_200_stream_and_truncated_streams_fail() {
    let (events, end) = decode(&[
        &chunk(json!({"content": "a"}), None),
        r#"{"error":{"message":"overloaded","type":"server_error","code":529}}"#,
    ]);
    assert!(end.is_err(), "no finish, no [DONE]");
    let StreamOutcome::Failed { error, .. } = fold(&events) else {
        panic!()
    };
    assert_eq!(error.message, "overloaded");
    assert_eq!(error.status(), Some(529));
    let (_, end) = decode(&["not json"]);
    assert!(end.unwrap_err().message.contains("undecodable"));
}

#[test]
fn whole_bodies_decode_like_streams() {
    let body = json!({"id": "x", "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": "calling", "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "add", "arguments": "{\"x\":1}"}}]}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "prompt_cache_hit_tokens": 1}});
    let events =
        test_support::decode_body(ChatStreamDecoder::new(), body.to_string().as_bytes()).unwrap();
    let (message, stop_reason, usage) = finished(&events);
    assert_eq!(message.text(), "calling");
    assert_eq!(stop_reason, Some(StopReason::ToolUse));
    assert_eq!(usage.cached_input_tokens, Some(1));
    assert!(
        matches!(&message.blocks[1], ContentBlock::ToolUse { input, .. } if *input == json!({"x": 1}))
    );
}
