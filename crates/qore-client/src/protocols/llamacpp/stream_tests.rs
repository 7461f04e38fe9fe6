//! Unit tests of the llama.cpp fill-in-the-middle decoder.

use super::*;
use crate::protocols::test_support::{self, finished, fold};
use qore_core::{ErrorCategory, StreamOutcome};

fn feed(frames: &[&str]) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    test_support::decode(CompletionDecoder::new(), frames)
}

/// The shape the local llama.cpp server streams (trimmed of the echoed settings).
const STREAM: &[&str] = &[
    r#"{"index":0,"content":"a","tokens":[253],"stop":false,"id_slot":-1,"tokens_predicted":1,"tokens_evaluated":10}"#,
    r#"{"index":0,"content":" + b","tokens":[1232],"stop":false,"id_slot":-1,"tokens_predicted":2,"tokens_evaluated":10}"#,
    r#"{"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":"smollm2","tokens_predicted":2,"tokens_evaluated":10,"generation_settings":{"n_predict":2,"stop":[]},"prompt":"def add(a, b):\n    return ","stop_type":"limit","stopping_word":"","tokens_cached":12,"timings":{"cache_n":9,"prompt_n":1,"predicted_n":2}}"#,
];

#[test]
fn text_usage_and_stop_come_from_the_chunks() {
    let (events, end) = feed(STREAM);
    end.unwrap();
    let (message, stop_reason, usage) = finished(&events);
    assert_eq!(message.text(), "a + b");
    assert_eq!(stop_reason, Some(StopReason::MaxTokens));
    assert_eq!(usage.input_tokens, Some(10));
    assert_eq!(usage.output_tokens, Some(2));
    assert_eq!(usage.cached_input_tokens, Some(9));
}

#[test]
fn stop_types_map_to_stop_reasons() {
    let last = |fields: &str| format!(r#"{{"content":"","stop":true{fields}}}"#);
    let reason = |fields: &str| {
        let frame = last(fields);
        let (events, end) = feed(&[&frame]);
        end.unwrap();
        events.iter().find_map(|e| match e {
            ResponseEvent::Stop { reason } => Some(reason.clone()),
            _ => None,
        })
    };
    assert_eq!(reason(r#","stop_type":"eos""#), Some(StopReason::EndTurn));
    assert_eq!(
        reason(r#","stop_type":"word""#),
        Some(StopReason::StopSequence)
    );
    assert_eq!(
        reason(r#","stop_type":"limit""#),
        Some(StopReason::MaxTokens)
    );
    assert_eq!(
        reason(r#","stop_type":"none""#),
        Some(StopReason::Other("none".into()))
    );
    assert_eq!(
        reason(r#","stopped_word":true"#),
        Some(StopReason::StopSequence)
    );
    assert_eq!(
        reason(r#","stopped_limit":true"#),
        Some(StopReason::MaxTokens)
    );
    assert_eq!(reason(""), Some(StopReason::EndTurn));
}

#[test]
fn an_error_frame_fails_the_answer_and_keeps_the_frame() {
    let frame = r#"{"error":{"code":500,"message":"the slot was released","type":"server_error"}}"#;
    let (events, end) = feed(&[STREAM[0], frame, STREAM[1]]);
    end.unwrap();
    let StreamOutcome::Failed { error, .. } = fold(&events) else {
        panic!("{events:?}");
    };
    assert_eq!(error.message, "the slot was released");
    assert_eq!(error.provider.unwrap().body.as_deref(), Some(frame));
}

#[test]
fn an_answer_without_its_stop_chunk_is_incomplete() {
    let (_, end) = feed(&STREAM[..2]);
    assert_eq!(end.unwrap_err().category, ErrorCategory::Network);
    let (_, end) = feed(&[r#"{"content":"a""#]);
    assert_eq!(end.unwrap_err().category, ErrorCategory::Provider);
}

#[test]
fn a_whole_body_decodes_like_the_stream() {
    let body = br#"{"index":0,"content":"10 + a","tokens":[],"stop":true,"model":"m","tokens_predicted":4,"tokens_evaluated":10,"stop_type":"eos","timings":{"cache_n":0}}"#;
    let events = test_support::decode_body(CompletionDecoder::new(), body).unwrap();
    let (message, stop_reason, usage) = finished(&events);
    assert_eq!(message.text(), "10 + a");
    assert_eq!(stop_reason, Some(StopReason::EndTurn));
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(10), Some(4))
    );
    let mut decoder = CompletionDecoder::new();
    let err = decoder
        .body(br#"{"content":"x","stop":false}"#, &mut VecDeque::new())
        .unwrap_err();
    assert_eq!(err.category, ErrorCategory::Network);
}
