//! How responses end: terminal events, errors, incomplete streams, whole bodies.

use super::*;

#[test]
fn incomplete_responses_say_why() {
    let incomplete = |reason: &str| {
        event(
            "response.incomplete",
            json!({"response": {"status": "incomplete",
            "incomplete_details": {"reason": reason}}}),
        )
    };
    let (events, _) = decode(&[incomplete("max_output_tokens")]);
    assert_eq!(finished(&events).1, Some(StopReason::MaxTokens));
    let (events, _) = decode(&[incomplete("content_filter")]);
    assert_eq!(finished(&events).1, Some(StopReason::Refusal));
    let frames = [
        event(
            "response.output_item.added",
            json!({"output_index": 0, "item": call_item("call_1", "")}),
        ),
        event(
            "response.function_call_arguments.delta",
            json!({"output_index": 0, "delta": "{\"x\":481"}),
        ),
        event(
            "response.output_item.done",
            json!({"output_index": 0, "item": call_item("call_1", "{\"x\":481")}),
        ),
        incomplete("max_output_tokens"),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    let (blocks, stop, _) = finished(&events);
    assert_eq!(stop, Some(StopReason::MaxTokens));
    let ContentBlock::ToolUse {
        raw_input, input, ..
    } = &blocks[0]
    else {
        panic!("{blocks:?}")
    };
    assert_eq!(raw_input.as_deref(), Some("{\"x\":481"));
    assert!(input.is_null());
}

#[test]
fn refusals_are_text_with_a_refusal_stop() {
    let frames = [
        event(
            "response.refusal.delta",
            json!({"item_id": "msg_1", "delta": "I can't"}),
        ),
        event(
            "response.refusal.done",
            json!({"item_id": "msg_1", "refusal": "I can't"}),
        ),
        event(
            "response.output_item.done",
            json!({"item": {"type": "message", "id": "msg_1",
            "content": [{"type": "refusal", "refusal": "I can't"}]}}),
        ),
        completed(Value::Null),
    ];
    let (events, end) = decode(&frames);
    end.unwrap();
    let (blocks, stop, _) = finished(&events);
    assert_eq!(blocks, [ContentBlock::text("I can't")]);
    assert_eq!(stop, Some(StopReason::Refusal));
}

#[test]
fn failures_and_error_events_fail_the_turn() {
    let failed = event(
        "response.failed",
        json!({"response": {"status": "failed",
        "error": {"code": "server_error", "message": "The model crashed."}}}),
    );
    let (events, end) = decode(&[created(), failed]);
    end.unwrap();
    let StreamOutcome::Failed { error, .. } = fold(&events) else {
        panic!("{events:?}")
    };
    assert_eq!(error.message, "The model crashed.");
    assert_eq!(
        error.provider.unwrap().error_type.as_deref(),
        Some("server_error")
    );

    let error_event = event(
        "error",
        json!({"code": "rate_limit_exceeded", "message": "Slow down"}),
    );
    let late_text = event("response.output_text.delta", json!({"delta": "ignored"}));
    let (events, end) = decode(&[created(), error_event, late_text]);
    end.unwrap();
    assert!(!events
        .iter()
        .any(|e| matches!(e, ResponseEvent::TextDelta { .. })));
    let StreamOutcome::Failed { error, .. } = fold(&events) else {
        panic!("{events:?}")
    };
    assert_eq!(error.message, "Slow down");
}

#[test]
fn a_stream_without_a_terminal_event_is_incomplete() {
    let text = event("response.output_text.delta", json!({"delta": "Hel"}));
    for frames in [
        vec![created(), text.clone()],
        vec![created(), text, "[DONE]".into()],
    ] {
        let (_, end) = decode(&frames);
        let err = end.unwrap_err();
        assert_eq!(err.category, ErrorCategory::Network);
        assert!(err.message.contains("before the response was complete"));
    }
    let (_, end) = decode(&["{not json".to_owned()]);
    let err = end.unwrap_err();
    assert_eq!(err.provider.unwrap().body.as_deref(), Some("{not json"));
}

#[test]
fn whole_bodies_decode_like_streams() {
    let body = json!({"id": "resp_7", "model": "gpt-x", "status": "completed", "error": null,
        "output": [
            reasoning_item("enc", &["think"]),
            {"type": "message", "id": "msg_1", "content": [{"type": "output_text", "text": "Calling."}]},
            call_item("call_Z", "{\"city\":\"Oslo\"}"),
        ],
        "usage": {"input_tokens": 10, "output_tokens": 5, "input_tokens_details": {"cache_write_tokens": 3}}});
    let events =
        test_support::decode_body(ResponsesDecoder::new(), body.to_string().as_bytes()).unwrap();
    assert_eq!(
        events[0],
        ResponseEvent::MessageStart {
            id: Some("resp_7".into()),
            model: Some("gpt-x".into())
        }
    );
    let (blocks, stop, usage) = finished(&events);
    assert_eq!(stop, Some(StopReason::ToolUse));
    assert_eq!(usage.cache_creation_input_tokens, Some(3));
    assert_eq!(
        blocks[..2],
        [
            ContentBlock::Thinking {
                text: "think".into(),
                signature: Some("enc".into())
            },
            ContentBlock::text("Calling.")
        ]
    );
    assert!(matches!(&blocks[2], ContentBlock::ToolUse { id, .. } if id == "call_Z"));

    // The same output, carried only by a terminal event, gives the same message.
    let terminal = event("response.completed", json!({"response": body}));
    let (streamed, end) = decode(&[terminal]);
    end.unwrap();
    assert_eq!(finished(&streamed).0, blocks);

    let mut out = VecDeque::new();
    let error_body = json!({"error": {"code": "bad", "message": "no"}}).to_string();
    ResponsesDecoder::new()
        .body(error_body.as_bytes(), &mut out)
        .unwrap();
    assert!(
        matches!(fold(&Vec::from(out)), StreamOutcome::Failed { error, .. } if error.message == "no")
    );
    assert!(ResponsesDecoder::new()
        .body(b"<html>", &mut VecDeque::new())
        .is_err());
}
