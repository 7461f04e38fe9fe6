use super::*;
use crate::protocols::test_support::{self, finished_blocks as finished, fold};
use qore_core::{ContentBlock, ErrorCategory, StreamOutcome, ToolCallInput};
use serde_json::{json, Value};

/// An event's data: `fields` plus its `type`.
fn event(kind: &str, fields: Value) -> String {
    let mut fields = fields;
    fields["type"] = json!(kind);
    fields.to_string()
}

/// Decode frames (`event:` name given or not), then end the body.
fn decode_frames(frames: &[(Option<&str>, String)]) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    let frames = frames.iter().map(|(name, data)| (*name, data.as_str()));
    test_support::decode_frames(ResponsesDecoder::new(), frames)
}

/// Data-only frames.
fn decode(frames: &[String]) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    test_support::decode(ResponsesDecoder::new(), frames)
}

fn created() -> String {
    event(
        "response.created",
        json!({"response": {"id": "resp_1", "model": "gpt-x", "status": "in_progress",
            "output": [], "instructions": "long", "tools": [{"type": "function"}]}}),
    )
}

fn completed(usage: Value) -> String {
    event(
        "response.completed",
        json!({"response": {"id": "resp_1", "status": "completed", "output": [], "usage": usage}}),
    )
}

fn reasoning_item(enc: &str, summary: &[&str]) -> Value {
    let summary: Vec<Value> = summary
        .iter()
        .map(|t| json!({"type": "summary_text", "text": t}))
        .collect();
    json!({"type": "reasoning", "id": "rs_1", "summary": summary, "content": [],
        "encrypted_content": enc})
}

fn call_item(call_id: &str, args: &str) -> Value {
    json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id,
        "name": "get_weather", "arguments": args})
}

#[path = "stream_end_tests.rs"]
mod ends;
#[path = "stream_items_tests.rs"]
mod items;

#[test]
fn codex_tool_turn_with_encrypted_reasoning() {
    let frames = [
        created(),
        event(
            "response.in_progress",
            json!({"response": {"id": "resp_1"}}),
        ),
        event(
            "response.output_item.added",
            json!({"output_index": 0, "item": reasoning_item("enc-added", &[])}),
        ),
        event(
            "response.output_item.done",
            json!({"output_index": 0, "item": reasoning_item("enc-done", &[])}),
        ),
        event(
            "response.output_item.added",
            json!({"output_index": 1, "item": call_item("call_A", "")}),
        ),
        event(
            "response.function_call_arguments.delta",
            json!({"output_index": 1, "item_id": "fc_call_A", "delta": "{\"city\":"}),
        ),
        event(
            "response.function_call_arguments.delta",
            json!({"output_index": 1, "item_id": "fc_call_A", "delta": "\"Tokyo\"}"}),
        ),
        event(
            "response.function_call_arguments.done",
            json!({"output_index": 1, "item_id": "fc_call_A", "arguments": "{\"city\":\"Tokyo\"}"}),
        ),
        event(
            "response.output_item.done",
            json!({"output_index": 1, "item": call_item("call_A", "{\"city\":\"Tokyo\"}")}),
        ),
        event(
            "response.output_item.added",
            json!({"output_index": 2, "item": call_item("call_B", "")}),
        ),
        event(
            "response.output_item.done",
            json!({"output_index": 2, "item": call_item("call_B", "{\"city\":\"Paris\"}")}),
        ),
        completed(
            json!({"input_tokens": 275, "input_tokens_details": {"cached_tokens": 128},
            "output_tokens": 59, "output_tokens_details": {"reasoning_tokens": 12}}),
        ),
    ];
    let named: Vec<(Option<&str>, String)> = frames
        .iter()
        .map(|f| {
            let kind = serde_json::from_str::<Value>(f).unwrap()["type"].clone();
            (
                Some(if kind == "response.created" {
                    "response.created"
                } else {
                    "x"
                }),
                f.clone(),
            )
        })
        .collect();
    let (events, end) = decode_frames(&named);
    end.unwrap();
    assert_eq!(
        events[0],
        ResponseEvent::MessageStart {
            id: Some("resp_1".into()),
            model: Some("gpt-x".into())
        }
    );
    assert!(events.contains(&ResponseEvent::ToolCallStart {
        id: "call_A".into(),
        name: "get_weather".into()
    }));
    assert!(events.contains(&ResponseEvent::ToolCallArgsDelta {
        id: "call_A".into(),
        delta: "\"Tokyo\"}".into()
    }));
    let (blocks, stop, usage) = finished(&events);
    assert_eq!(stop, Some(StopReason::ToolUse));
    assert_eq!(usage.input_tokens, Some(275));
    assert_eq!(usage.cached_input_tokens, Some(128));
    assert_eq!(usage.output_tokens, Some(59));
    assert_eq!(usage.reasoning_tokens, Some(12));
    assert_eq!(
        blocks[0],
        ContentBlock::Thinking {
            text: String::new(),
            signature: Some("enc-done".into())
        }
    );
    let calls: Vec<(&str, &Value)> = blocks[1..]
        .iter()
        .map(|b| match b {
            ContentBlock::ToolUse { id, input, .. } => (id.as_str(), input),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("call_A", &json!({"city": "Tokyo"})),
            ("call_B", &json!({"city": "Paris"}))
        ]
    );
}

#[test]
fn summary_parts_then_text_with_the_signature_of_the_finished_item() {
    let delta = |i: u32, text: &str| {
        event(
            "response.reasoning_summary_text.delta",
            json!({"item_id": "rs_1", "output_index": 0, "summary_index": i, "delta": text}),
        )
    };
    let frames = [
        created(),
        event(
            "response.output_item.added",
            json!({"output_index": 0, "item": reasoning_item("enc-a", &[])}),
        ),
        event(
            "response.reasoning_summary_part.added",
            json!({"item_id": "rs_1", "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
        ),
        delta(0, "**Plan**"),
        delta(0, " count"),
        event(
            "response.reasoning_summary_text.done",
            json!({"item_id": "rs_1", "summary_index": 0, "text": "**Plan** count"}),
        ),
        delta(1, "check"),
        event(
            "response.output_item.done",
            json!({"output_index": 0, "item": reasoning_item("enc-b", &["**Plan** count", "check"])}),
        ),
        event(
            "response.output_item.added",
            json!({"output_index": 1, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        ),
        event(
            "response.output_text.delta",
            json!({"item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "12"}),
        ),
        event(
            "response.output_text.delta",
            json!({"item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "5"}),
        ),
        event(
            "response.output_text.done",
            json!({"item_id": "msg_1", "output_index": 1, "content_index": 0, "text": "125"}),
        ),
        event(
            "response.output_item.done",
            json!({"output_index": 1, "item": {"type": "message", "id": "msg_1",
            "content": [{"type": "output_text", "text": "125"}]}}),
        ),
        completed(json!({"input_tokens": 1, "output_tokens": 2})),
        "[DONE]".to_owned(),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    let (blocks, stop, _) = finished(&events);
    assert_eq!(
        blocks,
        [
            ContentBlock::Thinking {
                text: "**Plan** count\n\ncheck".into(),
                signature: Some("enc-b".into())
            },
            ContentBlock::text("125")
        ]
    );
    assert_eq!(stop, Some(StopReason::EndTurn));
}

#[test]
fn done_events_give_the_text_only_when_no_delta_did() {
    let frames = [
        event(
            "response.output_item.added",
            json!({"item": {"type": "reasoning", "id": "rs_9"}}),
        ),
        event(
            "response.reasoning_text.done",
            json!({"item_id": "rs_9", "content_index": 0, "text": "raw thought"}),
        ),
        event(
            "response.output_item.done",
            json!({"item": {"type": "reasoning", "id": "rs_9",
            "content": [{"type": "reasoning_text", "text": "raw thought"}]}}),
        ),
        event(
            "response.output_item.added",
            json!({"item": {"type": "message", "id": "msg_9"}}),
        ),
        event(
            "response.output_text.done",
            json!({"item_id": "msg_9", "text": "only done"}),
        ),
        event(
            "response.output_item.done",
            json!({"item": {"type": "message", "id": "msg_9",
            "content": [{"type": "output_text", "text": "only done"}]}}),
        ),
        event(
            "response.completed",
            json!({"response": {"status": "completed"}}),
        ),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    assert_eq!(
        events[0],
        ResponseEvent::MessageStart {
            id: None,
            model: None
        }
    );
    let (blocks, _, usage) = finished(&events);
    assert!(usage.is_empty());
    assert_eq!(
        blocks,
        [
            ContentBlock::Thinking {
                text: "raw thought".into(),
                signature: None
            },
            ContentBlock::text("only done")
        ]
    );
}

#[test]
fn openrouter_reasoning_after_text_opens_its_own_block() {
    let frames = [
        created(),
        event(
            "response.output_item.added",
            json!({"output_index": 0, "item": {"type": "message", "id": "msg_1"}}),
        ),
        event(
            "response.output_text.delta",
            json!({"item_id": "msg_1", "output_index": 0, "delta": "Yes."}),
        ),
        event(
            "response.output_item.added",
            json!({"output_index": 1, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        ),
        event(
            "response.output_item.done",
            json!({"output_index": 0, "item": {"type": "message", "id": "msg_1",
            "content": [{"type": "output_text", "text": "Yes."}]}}),
        ),
        event(
            "response.output_item.done",
            json!({"output_index": 1, "item": {"type": "reasoning", "id": "rs_1",
            "summary": [], "encrypted_content": "gem-sig", "format": "google-gemini-v1"}}),
        ),
        completed(Value::Null),
        "[DONE]".to_owned(),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    let (blocks, _, _) = finished(&events);
    assert_eq!(
        blocks,
        [
            ContentBlock::text("Yes."),
            ContentBlock::Thinking {
                text: String::new(),
                signature: Some("gem-sig".into())
            }
        ]
    );
}

#[test]
fn final_arguments_override_the_deltas() {
    let frames = [
        event(
            "response.output_item.added",
            json!({"output_index": 0, "item": call_item("call_1", "")}),
        ),
        event(
            "response.function_call_arguments.delta",
            json!({"output_index": 0, "delta": "{\"a\":"}),
        ),
        event(
            "response.function_call_arguments.done",
            json!({"output_index": 0, "arguments": "{\"a\":2}"}),
        ),
        event(
            "response.completed",
            json!({"response": {"status": "completed"}}),
        ),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    assert!(events.contains(&ResponseEvent::ToolCallEnd {
        id: "call_1".into(),
        input: ToolCallInput::Parsed(json!({"a": 2}))
    }));
    let (_, stop, _) = finished(&events);
    assert_eq!(stop, Some(StopReason::ToolUse));
}

#[test]
fn the_event_name_stands_in_for_a_missing_type() {
    let frames = [
        (
            Some("response.output_text.delta"),
            json!({"delta": "hi"}).to_string(),
        ),
        (
            Some("response.completed"),
            json!({"response": {"status": "completed"}}).to_string(),
        ),
    ];
    let (events, end) = decode_frames(&frames);
    end.unwrap();
    assert_eq!(finished(&events).0, [ContentBlock::text("hi")]);
}
