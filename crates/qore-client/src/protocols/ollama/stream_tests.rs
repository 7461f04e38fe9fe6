//! Unit tests of the Ollama decoder: lines fed one by one, and whole bodies.

use super::*;
use crate::protocols::test_support::{self, finished, fold};
use qore_core::{ErrorCategory, StreamOutcome};
use serde_json::json;

fn feed(lines: &[&str]) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    test_support::decode(OllamaStreamDecoder::new(), lines)
}

const THINK_THEN_CALL: &[&str] = &[
    r#"{"model":"qwen3:4b","message":{"role":"assistant","content":"","thinking":"Let me"},"done":false}"#,
    r#"{"model":"qwen3:4b","message":{"role":"assistant","content":"","thinking":" check."},"done":false}"#,
    r#"{"model":"qwen3:4b","message":{"role":"assistant","content":"Sure: "},"done":false}"#,
    r#"{"model":"qwen3:4b","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","function":{"index":0,"name":"get_weather","arguments":{"city":"Tokyo"}}}]},"done":false}"#,
    r#"{"model":"qwen3:4b","message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":1,"name":"get_time","arguments":{}}}]},"done":false}"#,
    r#"{"model":"qwen3:4b","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":234,"eval_count":517}"#,
];

#[test]
fn thinking_text_and_tool_calls_fold_into_one_turn() {
    let (events, end) = feed(THINK_THEN_CALL);
    end.unwrap();
    assert_eq!(
        events[0],
        ResponseEvent::MessageStart {
            id: None,
            model: Some("qwen3:4b".into())
        }
    );
    let (message, stop_reason, usage) = finished(&events);
    assert_eq!(stop_reason, Some(StopReason::ToolUse));
    assert_eq!(usage.input_tokens, Some(234));
    assert_eq!(usage.output_tokens, Some(517));
    assert_eq!(message.blocks.len(), 4, "{:?}", message.blocks);
    assert!(
        matches!(&message.blocks[0], qore_core::ContentBlock::Thinking { text, .. } if text == "Let me check.")
    );
    assert_eq!(message.text(), "Sure: ");
    match &message.blocks[2] {
        qore_core::ContentBlock::ToolUse {
            id, name, input, ..
        } => {
            assert_eq!(id, "call_1");
            assert_eq!(name, "get_weather");
            assert_eq!(input, &json!({"city": "Tokyo"}));
        }
        other => panic!("{other:?}"),
    }
    match &message.blocks[3] {
        qore_core::ContentBlock::ToolUse {
            id, name, input, ..
        } => {
            assert!(id.starts_with("call_") && id != "call_1", "{id}");
            assert_eq!(name, "get_time");
            assert_eq!(input, &json!({}));
        }
        other => panic!("{other:?}"),
    }
    let args: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            ResponseEvent::ToolCallArgsDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(args, [r#"{"city":"Tokyo"}"#, "{}"]);
}

#[test]
fn done_reasons_map_to_stop_reasons() {
    assert_eq!(stop_reason(Some("stop"), false), StopReason::EndTurn);
    assert_eq!(stop_reason(None, false), StopReason::EndTurn);
    assert_eq!(stop_reason(Some("stop"), true), StopReason::ToolUse);
    assert_eq!(stop_reason(Some("length"), true), StopReason::MaxTokens);
    assert_eq!(
        stop_reason(Some("unload"), false),
        StopReason::Other("unload".into())
    );
    let (events, end) = feed(&[
        r#"{"model":"m","message":{"role":"assistant","content":"abc"},"done":false}"#,
        r#"{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","eval_count":3}"#,
    ]);
    end.unwrap();
    assert!(matches!(
        fold(&events),
        StreamOutcome::Finished {
            stop_reason: Some(StopReason::MaxTokens),
            ..
        }
    ));
}

#[test]
fn an_error_line_fails_the_turn_and_keeps_the_line() {
    let error_line =
        r#"{"error":"an error was encountered while running the model: unexpected EOF"}"#;
    let (events, end) = feed(&[
        r#"{"model":"m","message":{"role":"assistant","content":"par"},"done":false}"#,
        error_line,
        r#"{"model":"m","message":{"role":"assistant","content":"ignored"},"done":false}"#,
    ]);
    end.unwrap();
    let StreamOutcome::Failed { error, .. } = fold(&events) else {
        panic!("{events:?}");
    };
    assert_eq!(error.category, ErrorCategory::Provider);
    assert!(
        error.message.contains("unexpected EOF"),
        "{}",
        error.message
    );
    assert_eq!(error.provider.unwrap().body.as_deref(), Some(error_line));
    assert!(!events
        .iter()
        .any(|e| matches!(e, ResponseEvent::TextDelta { text } if text == "ignored")));
}

#[test]
fn a_stream_without_its_done_line_is_incomplete() {
    let (_, end) = feed(&THINK_THEN_CALL[..4]);
    let err = end.unwrap_err();
    assert_eq!(err.category, ErrorCategory::Network);
    assert!(err.message.contains("ended before"), "{}", err.message);
}

#[test]
fn a_line_that_is_not_json_is_a_provider_error_with_the_line() {
    let (_, end) = feed(&[r#"{"model":"m","message":{"content":"a"#]);
    let err = end.unwrap_err();
    assert_eq!(err.category, ErrorCategory::Provider);
    assert_eq!(
        err.provider.unwrap().body.as_deref(),
        Some(r#"{"model":"m","message":{"content":"a"#)
    );
}

#[test]
fn whole_bodies_decode_like_streams() {
    let whole = br#"{"model":"qwen3:4b","created_at":"1970-01-01T00:00:00Z","message":{"role":"assistant","content":"It is sunny.","thinking":"The tool said so.","tool_calls":[{"function":{"name":"note","arguments":"{\"x\":1}"}}]},"done":true,"done_reason":"stop","prompt_eval_count":810,"eval_count":245}"#;
    let events = test_support::decode_body(OllamaStreamDecoder::new(), whole).unwrap();
    let (message, stop_reason, usage) = finished(&events);
    assert_eq!(message.text(), "It is sunny.");
    assert_eq!(stop_reason, Some(StopReason::ToolUse));
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(810), Some(245))
    );
    assert!(matches!(
        &message.blocks[2],
        qore_core::ContentBlock::ToolUse { input, .. } if input == &json!({"x": 1})
    ));

    // NDJSON handed over as a whole body (a server that ignored `"stream": false`).
    let ndjson = THINK_THEN_CALL.join("\n");
    let mut decoder = OllamaStreamDecoder::new();
    let mut out = VecDeque::new();
    decoder.body(ndjson.as_bytes(), &mut out).unwrap();
    assert!(matches!(
        out.back(),
        Some(ResponseEvent::Stop {
            reason: StopReason::ToolUse
        })
    ));

    let mut decoder = OllamaStreamDecoder::new();
    let truncated = br#"{"model":"m","message":{"role":"assistant","content":"a"},"done":false}"#;
    let err = decoder.body(truncated, &mut VecDeque::new()).unwrap_err();
    assert_eq!(err.category, ErrorCategory::Network);
}

#[test]
fn synthesized_ids_never_repeat() {
    let ids: std::collections::HashSet<String> = (0..1000).map(|_| synthesize_call_id()).collect();
    assert_eq!(ids.len(), 1000);
    let (first, _) = feed(THINK_THEN_CALL);
    let (second, _) = feed(THINK_THEN_CALL);
    let synthesized = |events: &[ResponseEvent]| {
        events.iter().find_map(|e| match e {
            ResponseEvent::ToolCallStart { id, name } if name == "get_time" => Some(id.clone()),
            _ => None,
        })
    };
    assert_ne!(synthesized(&first), synthesized(&second));
}

#[test]
fn ndjson_is_the_framing() {
    assert_eq!(OllamaStreamDecoder::new().framing(), Framing::Ndjson);
}

/// `/api/generate` lines (fill-in-the-middle), written from Ollama's documented format (no
/// recorded generate traffic in ../shared/fixtures): the text is in `response`, the last
/// line has `done: true` with `done_reason`, counts and `context`.
#[test]
fn generate_answers_read_the_response_field() {
    let line = |text: &str| {
        json!({"model": "qwen2.5-coder:1.5b", "created_at": "2025-01-01T00:00:00Z",
               "response": text, "done": false})
        .to_string()
    };
    let last = json!({"model": "qwen2.5-coder:1.5b", "created_at": "2025-01-01T00:00:01Z",
        "response": "", "done": true, "done_reason": "stop", "context": [1, 2, 3],
        "total_duration": 10, "prompt_eval_count": 20, "eval_count": 2})
    .to_string();
    let cases: Vec<(&str, Vec<String>, Result<&str, &str>)> = vec![
        (
            "deltas then the done line",
            vec![line("a"), line(" + b"), last.clone()],
            Ok("a + b"),
        ),
        ("only the done line", vec![last.clone()], Ok("")),
        (
            "an error line",
            vec![line("a"), r#"{"error":"model not found"}"#.into()],
            Err("model not found"),
        ),
        (
            "no done line",
            vec![line("a")],
            Err("ended before the response was complete"),
        ),
    ];
    for (name, lines, want) in cases {
        let (events, end) = test_support::decode(OllamaStreamDecoder::generate(), &lines);
        match (test_support::first_error(&events, end), want) {
            (None, Ok(text)) => {
                let (message, stop_reason, usage) = finished(&events);
                assert_eq!(message.text(), text, "{name}");
                assert_eq!(stop_reason, Some(StopReason::EndTurn), "{name}");
                assert_eq!(usage.output_tokens, Some(2), "{name}");
            }
            (Some(error), Err(words)) => {
                assert!(error.message.contains(words), "{name}: {error:?}")
            }
            (got, want) => panic!("{name}: got {got:?} ({events:?}), want {want:?}"),
        }
    }
}
