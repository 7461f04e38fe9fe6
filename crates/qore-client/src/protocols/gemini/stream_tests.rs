use super::*;
use crate::protocols::test_support::{self, finished_blocks as finished, fold};
use qore_core::{ContentBlock, ErrorCategory, StopReason, StreamOutcome};
use serde_json::json;

/// Decode data payloads (one per SSE frame), then end the body.
fn decode(frames: &[Value]) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    let frames: Vec<String> = frames.iter().map(Value::to_string).collect();
    test_support::decode(GeminiStreamDecoder::new(), &frames)
}

fn chunk(parts: Value, finish: Option<&str>) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if let Some(reason) = finish {
        candidate["finishReason"] = json!(reason);
    }
    json!({"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": "r1"})
}

fn text(text: &str, signature: Option<&str>) -> ContentBlock {
    ContentBlock::Text {
        text: text.into(),
        signature: signature.map(str::to_owned),
    }
}

#[test]
fn thoughts_text_signature_in_the_last_empty_part_and_usage() {
    let mut last = chunk(
        json!([{"text": "", "thoughtSignature": "SIG"}]),
        Some("STOP"),
    );
    last["usageMetadata"] = json!({"promptTokenCount": 10, "candidatesTokenCount": 4,
        "thoughtsTokenCount": 6, "cachedContentTokenCount": 2, "totalTokenCount": 20});
    let mut first = chunk(json!([{"text": "Let me ", "thought": true}]), None);
    first["usageMetadata"] = json!({"promptTokenCount": 10, "thoughtsTokenCount": 3});
    let (events, end) = decode(&[
        first,
        chunk(json!([{"text": "think.", "thought": true}]), None),
        chunk(json!([{"text": "Hel"}]), None),
        chunk(json!([{"text": "lo"}]), None),
        last,
    ]);
    end.unwrap();
    assert_eq!(
        events[0],
        ResponseEvent::MessageStart {
            id: Some("r1".into()),
            model: Some("gemini-2.5-flash".into())
        }
    );
    let (blocks, stop, usage) = finished(&events);
    assert_eq!(
        blocks,
        vec![
            ContentBlock::Thinking {
                text: "Let me think.".into(),
                signature: None
            },
            text("Hello", Some("SIG")),
        ]
    );
    assert_eq!(stop, Some(StopReason::EndTurn));
    // Output is what is billed as output: the answer plus the thoughts.
    assert_eq!(usage.input_tokens, Some(10));
    assert_eq!(usage.output_tokens, Some(10));
    assert_eq!(usage.reasoning_tokens, Some(6));
    assert_eq!(usage.cached_input_tokens, Some(2));
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, ResponseEvent::Usage { .. }))
            .count(),
        1
    );
}

#[test]
fn parallel_function_calls_get_distinct_ids_and_keep_their_own_signatures() {
    let (events, end) = decode(&[chunk(
        json!([
            {"functionCall": {"name": "add", "args": {"x": 3, "y": 5}}, "thoughtSignature": "S1"},
            {"functionCall": {"name": "sub", "args": {"x": 10, "y": 4}}},
            {"functionCall": {"name": "ping", "id": "call_7"}}
        ]),
        Some("STOP"),
    )]);
    end.unwrap();
    let (blocks, stop, _) = finished(&events);
    assert_eq!(stop, Some(StopReason::ToolUse));
    let calls: Vec<_> = blocks
        .iter()
        .map(|b| match b {
            ContentBlock::ToolUse {
                id,
                name,
                input,
                signature,
                ..
            } => (
                id.clone(),
                name.as_str(),
                input.clone(),
                signature.as_deref(),
            ),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(calls.len(), 3);
    assert_eq!(
        (calls[0].1, &calls[0].2, calls[0].3),
        ("add", &json!({"x": 3, "y": 5}), Some("S1"))
    );
    assert_eq!(
        (calls[1].1, &calls[1].2, calls[1].3),
        ("sub", &json!({"x": 10, "y": 4}), None)
    );
    assert_eq!(calls[2].0, "call_7");
    assert_eq!(calls[2].2, json!({}));
    assert!(ids::is_synthesized(&calls[0].0) && ids::is_synthesized(&calls[1].0));
    assert_ne!(calls[0].0, calls[1].0);
    // A second response never reuses an id of the first.
    let (again, _) = decode(&[chunk(
        json!([{"functionCall": {"name": "add", "args": {}}}]),
        Some("STOP"),
    )]);
    let ResponseEvent::ToolCallStart { id, .. } = &again[1] else {
        panic!("{:?}", again[1])
    };
    assert!(*id != calls[0].0 && *id != calls[1].0);
}

#[test]
fn part_boundaries_are_kept_where_signatures_are() {
    // Streamed text signed on its first chunk; then a signature-only part after a call.
    let (events, end) = decode(&[
        chunk(json!([{"text": "I am", "thoughtSignature": "A"}]), None),
        chunk(json!([{"text": " sorry."}]), None),
        chunk(
            json!([{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "B"}]),
            None,
        ),
        chunk(json!([{"text": "", "thoughtSignature": "C"}]), Some("STOP")),
    ]);
    end.unwrap();
    let (blocks, _, _) = finished(&events);
    assert_eq!(blocks.len(), 4, "{blocks:?}");
    assert_eq!(blocks[0], text("I am", Some("A")));
    assert_eq!(blocks[1], text(" sorry.", None));
    assert!(matches!(&blocks[2], ContentBlock::ToolUse { signature: Some(s), .. } if s == "B"));
    assert_eq!(blocks[3], text("", Some("C")));
}

#[test]
fn a_stream_may_finish_twice_and_the_last_reason_counts() {
    // Code execution: a STOP mid-way, more answer, then the real end. Code parts and their
    // signatures are not represented.
    let (events, end) = decode(&[
        chunk(
            json!([{"executableCode": {"code": "print(1)", "language": "PYTHON"}, "thoughtSignature": "X"}]),
            Some("STOP"),
        ),
        chunk(
            json!([{"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}}]),
            None,
        ),
        chunk(json!([{"text": "It prints 1"}]), Some("MAX_TOKENS")),
    ]);
    end.unwrap();
    let (blocks, stop, _) = finished(&events);
    assert_eq!(blocks, vec![text("It prints 1", None)]);
    assert_eq!(stop, Some(StopReason::MaxTokens));
}

#[test]
fn filtered_answers_and_blocked_prompts_fail_the_turn() {
    let mut blocked = chunk(json!([]), Some("SAFETY"));
    blocked["candidates"][0]["finishMessage"] = json!("dangerous content");
    blocked["usageMetadata"] = json!({"promptTokenCount": 7, "candidatesTokenCount": 1});
    let (events, end) = decode(&[chunk(json!([{"text": "Sure, "}]), None), blocked]);
    end.unwrap();
    let StreamOutcome::Failed { error, usage } = fold(&events) else {
        panic!("{events:?}")
    };
    assert_eq!(error.category, ErrorCategory::Provider);
    assert!(error.message.contains("(SAFETY)"), "{}", error.message);
    assert!(error.message.ends_with(": dangerous content"));
    assert_eq!(
        error.provider.unwrap().error_type.as_deref(),
        Some("SAFETY")
    );
    assert_eq!(usage.input_tokens, Some(7));

    let (events, end) = decode(&[
        json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 3}}),
    ]);
    end.unwrap();
    let StreamOutcome::Failed { error, .. } = fold(&events) else {
        panic!("{events:?}")
    };
    assert!(error
        .message
        .starts_with("Gemini blocked the prompt (PROHIBITED_CONTENT)"));

    let (events, _) = decode(&[chunk(json!([{"text": "x"}]), Some("NEW_REASON"))]);
    let (_, stop, _) = finished(&events);
    assert_eq!(stop, Some(StopReason::Other("NEW_REASON".into())));
}

#[test]
fn errors_inside_a_200_answer_and_cut_streams_fail() {
    let (events, end) = decode(&[
        chunk(json!([{"text": "a"}]), None),
        json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}),
        chunk(json!([{"text": "ignored"}]), Some("STOP")),
    ]);
    end.unwrap();
    let StreamOutcome::Failed { error, .. } = fold(&events) else {
        panic!("{events:?}")
    };
    assert_eq!(error.message, "The model is overloaded.");
    assert_eq!(error.status(), Some(503));

    let (_, end) = decode(&[chunk(json!([{"text": "half"}]), None)]);
    let error = end.unwrap_err();
    assert_eq!(error.category, ErrorCategory::Network);
    assert!(error
        .message
        .contains("ended before the response was complete"));

    let mut decoder = GeminiStreamDecoder::new();
    let frame = SseFrame {
        event: None,
        data: "{not json",
    };
    let error = decoder.frame(frame, &mut VecDeque::new()).unwrap_err();
    assert!(error.message.contains("undecodable"));
}

#[test]
fn only_the_first_candidate_is_the_turn() {
    let body = json!({"candidates": [
        {"content": {"parts": [{"text": "second"}]}, "finishReason": "STOP", "index": 1},
        {"content": {"parts": [{"text": "first"}]}, "finishReason": "STOP", "index": 0}
    ]});
    let mut out = VecDeque::new();
    GeminiStreamDecoder::new()
        .body(body.to_string().as_bytes(), &mut out)
        .unwrap();
    let (blocks, _, _) = finished(&Vec::from(out));
    assert_eq!(blocks, vec![text("first", None)]);
}

#[test]
fn whole_bodies_decode_as_one_object_or_an_array() {
    let object = chunk(
        json!([{"text": "Thinking", "thought": true}, {"text": "8\n6", "thoughtSignature": "S"}]),
        Some("STOP"),
    );
    let array = json!([
        chunk(json!([{"text": "Thinking", "thought": true}]), None),
        chunk(json!([{"text": "8\n"}]), None),
        chunk(
            json!([{"text": "6", "thoughtSignature": "S"}]),
            Some("STOP")
        ),
    ]);
    for body in [object, array] {
        let events =
            test_support::decode_body(GeminiStreamDecoder::new(), body.to_string().as_bytes())
                .unwrap();
        let (blocks, stop, _) = finished(&events);
        assert_eq!(
            blocks,
            vec![
                ContentBlock::Thinking {
                    text: "Thinking".into(),
                    signature: None
                },
                text("8\n6", Some("S")),
            ]
        );
        assert_eq!(stop, Some(StopReason::EndTurn));
    }
    let mut out = VecDeque::new();
    let cut = GeminiStreamDecoder::new().body(
        chunk(json!([{"text": "a"}]), None).to_string().as_bytes(),
        &mut out,
    );
    assert!(cut.is_err());
}
