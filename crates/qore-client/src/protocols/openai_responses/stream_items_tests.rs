//! Which item and part an event belongs to: `output_index` and `content_index`, whatever the
//! ids say; and what a failure leaves of the items still open.

use super::*;

fn message(id: &str, parts: &[&str]) -> Value {
    let content: Vec<Value> = parts
        .iter()
        .map(|t| json!({"type": "output_text", "text": t}))
        .collect();
    json!({"type": "message", "id": id, "role": "assistant", "content": content})
}

#[test]
fn items_and_parts_are_keyed_by_index_not_by_id() {
    let delta = |id: &str, part: u32, text: &str| {
        event(
            "response.output_text.delta",
            json!({"item_id": id, "output_index": 0, "content_index": part, "delta": text}),
        )
    };
    let frames = [
        created(),
        event(
            "response.output_item.added",
            json!({"output_index": 0, "item": message("m0", &[])}),
        ),
        delta("m1", 0, "Hel"),
        delta("m2", 0, "lo"),
        event(
            "response.output_text.done",
            json!({"item_id": "m3", "output_index": 0, "content_index": 0, "text": "Hello"}),
        ),
        // Part 1 had no delta: only the finished item gives its text.
        event(
            "response.output_item.done",
            json!({"output_index": 0, "item": message("m4", &["Hello", " world"])}),
        ),
        completed(json!(null)),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    let (blocks, stop, _) = finished(&events);
    assert_eq!(blocks, vec![ContentBlock::text("Hello world")]);
    assert_eq!(stop, Some(StopReason::EndTurn));
}

#[test]
fn a_failed_response_finishes_no_half_call() {
    let frames = [
        created(),
        event(
            "response.output_item.added",
            json!({"output_index": 0, "item": call_item("call_1", "")}),
        ),
        event(
            "response.function_call_arguments.delta",
            json!({"output_index": 0, "delta": "{\"path\": \"src/ma"}),
        ),
        event(
            "response.failed",
            json!({"response": {"status": "failed", "output": [call_item("call_1", "{\"path\": \"src/ma")],
                "error": {"code": "server_error", "message": "The model crashed."}}}),
        ),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ResponseEvent::ToolCallEnd { .. })),
        "{events:?}"
    );
    assert!(matches!(fold(&events), StreamOutcome::Failed { .. }));
}
