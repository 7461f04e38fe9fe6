use qore_client::protocols::openai_chat::OpenAiChat as ClientChat;
use qore_client::Protocol as _;
use qore_core::{
    ErrorInfo, MessageAssembler, ResponseEvent, StopReason, StreamOutcome, ToolCallInput, Usage,
};
use serde_json::{json, Value};

use super::*;
use crate::dialect::test_support::{args, decode, end, start, text};

/// What qore-client's Chat Completions decoder makes of `bytes`, fed in slices of `step`.
fn client_events(bytes: &[u8], step: usize) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    decode(ClientChat::default().decoder(), bytes, step)
}
use crate::ErrorKind;

fn meta(include_usage: bool) -> ReplyMeta {
    ReplyMeta {
        id: "chatcmpl-1".into(),
        model: "agent/x".into(),
        created: 1_700_000_000,
        include_usage,
    }
}

fn fold(events: &[ResponseEvent]) -> StreamOutcome {
    let mut assembler = MessageAssembler::new();
    events.iter().for_each(|e| assembler.apply(e));
    assembler.finish()
}

/// The SSE bytes this dialect writes for `events` (folded into their outcome).
pub(super) fn encode(events: &[ResponseEvent], include_usage: bool) -> Vec<u8> {
    let mut encoder = ChatEncoder::new(meta(include_usage));
    let mut out = Vec::new();
    encoder.start(&mut out);
    for event in events {
        encoder.event(event, &mut out);
    }
    encoder.finish(&fold(events), None, &mut out);
    out
}

fn frames(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    (text.split("\n\n").filter(|f| !f.is_empty()))
        .map(|f| f.strip_prefix("data: ").unwrap().to_owned())
        .collect()
}

fn stop(reason: StopReason) -> ResponseEvent {
    ResponseEvent::Stop { reason }
}

fn cases() -> Vec<(&'static str, Vec<ResponseEvent>)> {
    let usage = Usage {
        input_tokens: Some(10),
        output_tokens: Some(5),
        cached_input_tokens: Some(4),
        cache_creation_input_tokens: None,
        reasoning_tokens: Some(2),
    };
    let first = ResponseEvent::MessageStart {
        id: Some("up-1".into()),
        model: Some("upstream".into()),
    };
    vec![
        (
            "text",
            vec![
                first.clone(),
                text("Hel"),
                text("lo \"x\"\n"),
                ResponseEvent::Usage { usage },
                stop(StopReason::EndTurn),
            ],
        ),
        (
            "thinking",
            vec![
                ResponseEvent::ThinkingDelta { text: "hmm".into() },
                ResponseEvent::ThinkingSignature {
                    signature: "s".into(),
                },
                text("ok"),
                stop(StopReason::EndTurn),
            ],
        ),
        (
            "tool calls",
            vec![
                first,
                text("adding"),
                start("c1", "add"),
                args("c1", "{\"x\""),
                args("c1", ":1}"),
                start("c2", "read"),
                end("c1", ToolCallInput::parse("{\"x\":1}")),
                args("c2", "{}"),
                end("c2", ToolCallInput::parse("{}")),
                stop(StopReason::ToolUse),
            ],
        ),
        (
            "whole arguments at the end",
            vec![
                start("c1", "add"),
                end("c1", ToolCallInput::parse("{\"a\":[1,2]}")),
                start("c2", "add"),
                end("c2", ToolCallInput::parse("{oops")),
                stop(StopReason::ToolUse),
            ],
        ),
        ("max tokens", vec![text("cut"), stop(StopReason::MaxTokens)]),
        ("refusal", vec![text("no"), stop(StopReason::Refusal)]),
        ("no stop reason", vec![text("x")]),
    ]
}

#[test]
fn streams_decode_through_the_client_to_the_same_turn() {
    for (name, events) in cases() {
        for include_usage in [false, true] {
            let bytes = encode(&events, include_usage);
            let StreamOutcome::Finished {
                message,
                stop_reason,
                usage,
            } = fold(&events)
            else {
                panic!("{name}: not finished");
            };
            for step in [1, 7, bytes.len()] {
                let (decoded, end) = client_events(&bytes, step);
                end.unwrap_or_else(|e| panic!("{name}: {e:?}"));
                let StreamOutcome::Finished {
                    message: got,
                    stop_reason: got_reason,
                    usage: got_usage,
                } = fold(&decoded)
                else {
                    panic!("{name}: {decoded:?}");
                };
                // The thinking signature has no place on this wire.
                let mut want = message.clone();
                for block in &mut want.blocks {
                    if let qore_core::ContentBlock::Thinking { signature, .. } = block {
                        *signature = None;
                    }
                }
                assert_eq!(got, want, "{name}");
                let want_reason = stop_reason.clone().unwrap_or(StopReason::EndTurn);
                assert_eq!(got_reason, Some(want_reason), "{name}");
                let want_usage = if include_usage {
                    usage
                } else {
                    Usage::default()
                };
                assert_eq!(got_usage, want_usage, "{name}");
            }
        }
    }
}

#[test]
fn chunks_have_openai_shapes() {
    let events = [
        text("a"),
        start("c1", "add"),
        args("c1", "{}"),
        start("c2", "f"),
        args("c2", "["),
        end("c1", ToolCallInput::parse("{}")),
        end("c2", ToolCallInput::parse("[")),
        stop(StopReason::EndTurn),
    ];
    let bytes = encode(&events, true);
    let chunks: Vec<String> = frames(&bytes);
    assert_eq!(chunks.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = (chunks[..chunks.len() - 1].iter())
        .map(|c| serde_json::from_str(c).unwrap())
        .collect();
    for chunk in &chunks {
        assert_eq!(chunk["id"], "chatcmpl-1");
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["created"], 1_700_000_000);
        assert_eq!(chunk["model"], "agent/x");
    }
    let delta = |i: usize| chunks[i]["choices"][0]["delta"].clone();
    assert_eq!(delta(0), json!({"role": "assistant", "content": ""}));
    assert_eq!(delta(1), json!({"content": "a"}));
    assert_eq!(
        delta(2),
        json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
            "function": {"name": "add", "arguments": ""}}]})
    );
    assert_eq!(
        delta(3),
        json!({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]})
    );
    assert_eq!(delta(4)["tool_calls"][0]["index"], 1);
    assert_eq!(
        delta(5),
        json!({"tool_calls": [{"index": 1, "function": {"arguments": "["}}]})
    );
    assert!(chunks[..6]
        .iter()
        .all(|c| c["choices"][0]["finish_reason"].is_null()));
    assert_eq!(
        chunks[6]["choices"][0],
        json!({"index": 0, "delta": {}, "logprobs": null,
        "finish_reason": "tool_calls"})
    );
    assert_eq!(chunks[7]["choices"], json!([]));
    assert!(chunks[7]["usage"].is_object());
    assert_eq!(chunks.len(), 8);
}

#[test]
fn a_failed_turn_ends_with_an_error_chunk_and_no_done() {
    let events = [
        text("partial"),
        ResponseEvent::Error {
            error: ErrorInfo::provider("upstream broke"),
        },
    ];
    let outcome = fold(&events);
    assert!(matches!(outcome, StreamOutcome::Failed { .. }));
    let given = ServeError::new(ErrorKind::RateLimit, "slow down");
    for (error, message, kind) in [
        (None, "upstream broke", "server_error"),
        (Some(&given), "slow down", "rate_limit_error"),
    ] {
        let mut encoder = ChatEncoder::new(meta(true));
        let mut out = Vec::new();
        encoder.start(&mut out);
        events.iter().for_each(|e| encoder.event(e, &mut out));
        encoder.finish(&outcome, error, &mut out);
        let chunks = frames(&out);
        let last: Value = serde_json::from_str(chunks.last().unwrap()).unwrap();
        assert_eq!(last["error"]["message"], message);
        assert_eq!(last["error"]["type"], kind);
        assert!(!chunks.iter().any(|c| c == "[DONE]"));
        let (decoded, _) = client_events(&out, 5);
        match fold(&decoded) {
            StreamOutcome::Failed { error, .. } => assert!(error.message.contains(message)),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_cancelled_turn_writes_nothing_more() {
    let mut encoder = ChatEncoder::new(meta(true));
    let mut out = Vec::new();
    encoder.event(&text("a"), &mut out);
    let before = out.len();
    encoder.finish(
        &StreamOutcome::Cancelled {
            usage: Usage::default(),
        },
        None,
        &mut out,
    );
    assert_eq!(out.len(), before);
}
