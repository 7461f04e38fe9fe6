//! Streams both ways: events encoded here decode through qore-client's Responses decoder
//! (fed as bytes, in slices of every size) to the same turn, and so does the whole body.

use std::collections::VecDeque;

use qore_client::protocols::openai_responses::OpenAiResponses as ClientResponses;
use qore_client::Protocol;
use qore_core::{
    ContentBlock, ErrorInfo, MessageAssembler, ResponseEvent, StopReason, StreamOutcome,
    ToolCallInput, Usage,
};
use serde_json::{json, Value};

use super::ResponsesEncoder;
use crate::dialect::openai_responses::{response_object, OpenAiResponses};
use crate::dialect::test_support::{args, decode, end, start, text, thinking};
use crate::dialect::{Dialect, StreamEncoder};
use crate::{ErrorKind, ReplyMeta, ServeError};

fn meta() -> ReplyMeta {
    ReplyMeta {
        id: "resp_01TEST".into(),
        model: "agent/x".into(),
        created: 1_700_000_000,
        include_usage: false,
    }
}

fn usage() -> Usage {
    Usage {
        input_tokens: Some(120),
        output_tokens: Some(30),
        cached_input_tokens: Some(100),
        cache_creation_input_tokens: None,
        reasoning_tokens: Some(12),
    }
}

fn closing(reason: StopReason) -> Vec<ResponseEvent> {
    vec![
        ResponseEvent::Usage { usage: usage() },
        ResponseEvent::Stop { reason },
    ]
}

fn fold(events: &[ResponseEvent]) -> StreamOutcome {
    let mut assembler = MessageAssembler::new();
    events.iter().for_each(|e| assembler.apply(e));
    assembler.finish()
}

/// The SSE bytes of a reply of `events` ending in `outcome`.
fn encode(
    events: &[ResponseEvent],
    outcome: &StreamOutcome,
    error: Option<&ServeError>,
) -> Vec<u8> {
    let mut encoder = ResponsesEncoder::new(&meta());
    let mut out = Vec::new();
    encoder.start(&mut out);
    events.iter().for_each(|e| encoder.event(e, &mut out));
    encoder.finish(outcome, error, &mut out);
    out
}

/// What qore-client makes of `bytes` fed in slices of `size`.
fn client_outcome(bytes: &[u8], size: usize) -> StreamOutcome {
    let (mut events, end) = decode(ClientResponses::default().decoder(), bytes, size);
    if let Err(error) = end {
        events.push(ResponseEvent::Error { error });
    }
    fold(&events)
}

/// Redacted thinking reads back on this wire as signed thinking with no text.
fn as_responses_sees_it(mut outcome: StreamOutcome) -> StreamOutcome {
    if let StreamOutcome::Finished { message, .. } = &mut outcome {
        for block in &mut message.blocks {
            if let ContentBlock::RedactedThinking { data } = block {
                let signature = Some(std::mem::take(data));
                *block = ContentBlock::Thinking {
                    text: String::new(),
                    signature,
                };
            }
        }
    }
    outcome
}

fn turns() -> Vec<(&'static str, Vec<ResponseEvent>)> {
    let parsed = |v: Value| ToolCallInput::parse(&v.to_string());
    vec![
        (
            "text",
            [
                vec![text("Hel"), text("lo "), text("wörld")],
                closing(StopReason::EndTurn),
            ]
            .concat(),
        ),
        (
            "reasoning, text and tool calls",
            [
                vec![
                    thinking("Think"),
                    thinking("ing."),
                    ResponseEvent::ThinkingSignature {
                        signature: "gAAAA-sig".into(),
                    },
                    text("Calling."),
                    start("call_1", "add"),
                    args("call_1", "{\"x\":"),
                    args("call_1", "1}"),
                    end("call_1", parsed(json!({"x": 1}))),
                    start("call_2", "ping"),
                    end("call_2", parsed(json!({}))),
                ],
                closing(StopReason::ToolUse),
            ]
            .concat(),
        ),
        (
            "parallel calls interleaved, arguments only at their end",
            [
                vec![
                    start("call_a", "f"),
                    start("call_b", "g"),
                    args("call_b", "{\"b\":2}"),
                    end("call_a", parsed(json!({"a": [1, 2]}))),
                    end("call_b", parsed(json!({"b": 2}))),
                ],
                closing(StopReason::ToolUse),
            ]
            .concat(),
        ),
        (
            "arguments that are not JSON",
            [
                vec![
                    start("call_1", "f"),
                    args("call_1", "{oops"),
                    end("call_1", ToolCallInput::parse("{oops")),
                ],
                closing(StopReason::ToolUse),
            ]
            .concat(),
        ),
        (
            "signature only, then redacted thinking, then text",
            [
                vec![
                    ResponseEvent::ThinkingSignature {
                        signature: "E1".into(),
                    },
                    ResponseEvent::RedactedThinking { data: "E2".into() },
                    thinking("more"),
                    text("ok"),
                ],
                closing(StopReason::EndTurn),
            ]
            .concat(),
        ),
        (
            "max tokens",
            [vec![text("cut")], closing(StopReason::MaxTokens)].concat(),
        ),
        (
            "refusal",
            [vec![text("I can't.")], closing(StopReason::Refusal)].concat(),
        ),
    ]
}

#[test]
fn streams_decode_through_the_client_to_the_same_turn() {
    for (name, events) in turns() {
        let outcome = fold(&events);
        assert!(matches!(outcome, StreamOutcome::Finished { .. }), "{name}");
        let bytes = encode(&events, &outcome, None);
        let expected = as_responses_sees_it(outcome.clone());
        for size in [bytes.len(), 1, 7, 64] {
            assert_eq!(
                client_outcome(&bytes, size),
                expected,
                "{name}, slices of {size}"
            );
        }
        // The whole body says the same.
        let body = OpenAiResponses.response(&meta(), &outcome);
        let mut decoder = ClientResponses::default().decoder();
        let mut out = VecDeque::new();
        decoder.body(body.to_string().as_bytes(), &mut out).unwrap();
        assert_eq!(fold(&Vec::from(out)), expected, "{name}: whole body");
    }
}

/// The data of every frame, checking each names its type in `event:` and is numbered.
fn numbered_frames(bytes: &[u8]) -> Vec<Value> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let frames: Vec<Value> = text
        .split_terminator("\n\n")
        .map(|frame| {
            let (event, data) = frame.split_once('\n').unwrap();
            let data: Value = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
            assert_eq!(event.strip_prefix("event: "), data["type"].as_str());
            data
        })
        .collect();
    for (n, frame) in frames.iter().enumerate() {
        assert_eq!(frame["sequence_number"], n as u64, "{frame}");
    }
    frames
}

#[test]
fn events_come_in_openai_order_and_the_end_matches_the_stored_object() {
    let events = turns().swap_remove(1).1;
    let outcome = fold(&events);
    let frames = numbered_frames(&encode(&events, &outcome, None));
    let kinds: Vec<&str> = frames.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.done",
            "response.reasoning_summary_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    assert_eq!(frames[0]["response"]["status"], "in_progress");
    assert_eq!(frames[2]["item"]["id"], "rs_01TEST_0");
    assert_eq!(frames[8]["item"]["encrypted_content"], "gAAAA-sig");
    assert_eq!(frames[15]["item"]["call_id"], "call_1");
    assert_eq!(frames[15]["item"]["name"], "add");
    assert_eq!(frames[16]["output_index"], 2);
    let completed = &frames[24]["response"];
    let StreamOutcome::Finished {
        message,
        stop_reason,
        usage,
    } = &outcome
    else {
        panic!("{outcome:?}");
    };
    let stored = response_object(
        &meta(),
        std::slice::from_ref(message),
        usage,
        stop_reason.as_ref(),
    );
    assert_eq!(completed, &stored);
    assert_eq!(completed["id"], "resp_01TEST");
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["usage"]["total_tokens"], 150);
    assert_eq!(
        completed["usage"]["input_tokens_details"]["cached_tokens"],
        100
    );
    assert_eq!(
        completed["usage"]["output_tokens_details"]["reasoning_tokens"],
        12
    );
    let ids: Vec<&str> = (completed["output"].as_array().unwrap().iter())
        .map(|item| item["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["rs_01TEST_0", "msg_01TEST_1", "fc_01TEST_2", "fc_01TEST_3"]
    );
}

#[test]
fn max_tokens_ends_incomplete() {
    let events = [vec![text("cut")], closing(StopReason::MaxTokens)].concat();
    let frames = numbered_frames(&encode(&events, &fold(&events), None));
    let last = frames.last().unwrap();
    assert_eq!(last["type"], "response.incomplete");
    assert_eq!(
        last["response"]["incomplete_details"]["reason"],
        "max_output_tokens"
    );
}

#[test]
fn a_failed_turn_ends_in_response_failed_and_the_client_fails_too() {
    let events = vec![
        text("partial"),
        start("call_1", "f"),
        args("call_1", "{\"a\""),
    ];
    let outcome = StreamOutcome::Failed {
        error: ErrorInfo::provider("upstream broke"),
        usage: Usage::default(),
    };
    let error = ServeError::new(ErrorKind::RateLimit, "slow down");
    let bytes = encode(&events, &outcome, Some(&error));
    let frames = numbered_frames(&bytes);
    let last = frames.last().unwrap();
    assert_eq!(last["type"], "response.failed");
    assert_eq!(last["response"]["status"], "failed");
    assert_eq!(
        last["response"]["error"],
        json!({"code": "rate_limit_exceeded", "message": "slow down"})
    );
    match client_outcome(&bytes, 5) {
        StreamOutcome::Failed { error, .. } => {
            assert_eq!(error.message, "slow down");
            let detail = error.provider.unwrap();
            assert_eq!(detail.error_type.as_deref(), Some("rate_limit_exceeded"));
        }
        other => panic!("{other:?}"),
    }
    // Without a ServeError, the upstream's error is described.
    let described = numbered_frames(&encode(&events, &outcome, None));
    assert_eq!(
        described.last().unwrap()["response"]["error"]["message"],
        "upstream broke"
    );
}

#[test]
fn a_cancelled_turn_writes_nothing_more() {
    let cancelled = StreamOutcome::Cancelled {
        usage: Usage::default(),
    };
    let frames = numbered_frames(&encode(&[text("partial")], &cancelled, None));
    assert_eq!(frames.last().unwrap()["type"], "response.output_text.delta");
}
