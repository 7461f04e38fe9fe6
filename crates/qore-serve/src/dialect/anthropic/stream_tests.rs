use super::*;
use crate::dialect::test_support::{args, decode, text, thinking};

/// What qore-client's Anthropic decoder reads from `bytes`, fed in 7-byte slices.
fn client_decode(bytes: &[u8]) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    decode(Anthropic::default().decoder(), bytes, 7)
}
use qore_client::protocols::anthropic::Anthropic;
use qore_client::Protocol;
use qore_core::{
    ContentBlock, ErrorInfo, Message, MessageAssembler, ProviderDetail, Role, ToolArgsError,
};

fn meta() -> ReplyMeta {
    ReplyMeta {
        id: "msg_01TEST".into(),
        model: "claude-x".into(),
        created: 0,
        include_usage: false,
    }
}

fn fold(events: &[ResponseEvent]) -> StreamOutcome {
    let mut assembler = MessageAssembler::new();
    events.iter().for_each(|e| assembler.apply(e));
    assembler.finish()
}

/// The SSE bytes the encoder writes for `events` ending in `outcome`.
fn encode(events: &[ResponseEvent], outcome: &StreamOutcome) -> Vec<u8> {
    let mut encoder = MessagesEncoder::new(&meta());
    let mut out = Vec::new();
    encoder.start(&mut out);
    for event in events {
        encoder.event(event, &mut out);
    }
    encoder.finish(outcome, None, &mut out);
    out
}

/// (event name, data) of every frame.
fn frames(bytes: &[u8]) -> Vec<(String, Value)> {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    (text.split("\n\n").filter(|f| !f.is_empty()))
        .map(|frame| {
            let (event, data) = frame.split_once('\n').unwrap();
            let event = event.strip_prefix("event: ").unwrap().to_owned();
            let data = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
            (event, data)
        })
        .collect()
}

fn signature(s: &str) -> ResponseEvent {
    ResponseEvent::ThinkingSignature {
        signature: s.into(),
    }
}
fn call(id: &str, name: &str) -> ResponseEvent {
    ResponseEvent::ToolCallStart {
        id: id.into(),
        name: name.into(),
    }
}
fn end(id: &str, input: Value) -> ResponseEvent {
    ResponseEvent::ToolCallEnd {
        id: id.into(),
        input: ToolCallInput::Parsed(input),
    }
}
fn usage(input: u64, output: u64) -> ResponseEvent {
    ResponseEvent::Usage {
        usage: Usage {
            input_tokens: Some(input),
            output_tokens: Some(output),
            ..Usage::default()
        },
    }
}
fn stop(reason: StopReason) -> ResponseEvent {
    ResponseEvent::Stop { reason }
}

#[test]
fn streams_decode_through_the_client_to_the_same_turn() {
    // In the server's sense: the whole prompt (7 beside 100 read and 20 written).
    let cached = ResponseEvent::Usage {
        usage: Usage {
            input_tokens: Some(127),
            output_tokens: Some(3),
            cached_input_tokens: Some(100),
            cache_creation_input_tokens: Some(20),
            ..Usage::default()
        },
    };
    let table: Vec<(&str, Vec<ResponseEvent>, StopReason)> = vec![
        (
            "text",
            vec![
                usage(10, 0),
                text("Hel"),
                text("lo"),
                usage(10, 5),
                stop(StopReason::EndTurn),
            ],
            StopReason::EndTurn,
        ),
        (
            "thinking, signature, text",
            vec![
                usage(10, 1),
                thinking("let me "),
                thinking("think"),
                signature("sig=="),
                text("42"),
                stop(StopReason::MaxTokens),
            ],
            StopReason::MaxTokens,
        ),
        (
            "two thinking blocks, one with a signature only",
            vec![
                usage(3, 1),
                thinking(""),
                signature("only"),
                thinking("second"),
                signature("s2"),
                text("x"),
            ],
            StopReason::EndTurn,
        ),
        (
            "redacted thinking",
            vec![
                usage(3, 1),
                ResponseEvent::RedactedThinking { data: "enc".into() },
                text("ok"),
                stop(StopReason::Refusal),
            ],
            StopReason::Refusal,
        ),
        (
            "tool calls, arguments streamed and whole",
            vec![
                usage(5, 1),
                text("calling"),
                call("toolu_1", "add"),
                args("toolu_1", "{\"x\": "),
                args("toolu_1", "1}"),
                end("toolu_1", json!({"x": 1})),
                call("toolu_2", "sub"),
                end("toolu_2", json!({"y": [2, 3]})),
                call("toolu_3", "noop"),
                end("toolu_3", json!({})),
                usage(5, 30),
                stop(StopReason::ToolUse),
            ],
            StopReason::ToolUse,
        ),
        (
            "interleaved tool calls",
            vec![
                usage(5, 1),
                call("a", "add"),
                call("b", "sub"),
                args("b", "{\"y\":"),
                args("a", "{\"x\":1}"),
                args("b", "2}"),
                end("a", json!({"x": 1})),
                end("b", json!({"y": 2})),
                stop(StopReason::ToolUse),
            ],
            StopReason::ToolUse,
        ),
        (
            "no stop reason with a tool call",
            vec![usage(5, 1), call("a", "add"), end("a", json!({"x": 1}))],
            StopReason::ToolUse,
        ),
        (
            "no stop reason",
            vec![usage(5, 1), text("done")],
            StopReason::EndTurn,
        ),
        (
            "cache counts, pause",
            vec![cached, text("t"), stop(StopReason::PauseTurn)],
            StopReason::PauseTurn,
        ),
        (
            "stop sequence",
            vec![usage(1, 1), text("a"), stop(StopReason::StopSequence)],
            StopReason::StopSequence,
        ),
    ];
    for (name, events, expected_stop) in table {
        let outcome = fold(&events);
        let StreamOutcome::Finished { message, usage, .. } = &outcome else {
            panic!("{name}: {outcome:?}");
        };
        let bytes = encode(&events, &outcome);
        let (decoded, end) = client_decode(&bytes);
        assert_eq!(end, Ok(()), "{name}");
        match fold(&decoded) {
            StreamOutcome::Finished {
                message: back,
                stop_reason,
                usage: back_usage,
            } => {
                assert_eq!(
                    back,
                    *message,
                    "{name}\n{}",
                    String::from_utf8_lossy(&bytes)
                );
                assert_eq!(stop_reason, Some(expected_stop), "{name}");
                let back_usage = qore_session::tokens::whole_prompt(
                    &back_usage,
                    &qore_client::protocols::anthropic::Anthropic::default(),
                );
                assert_eq!(back_usage, *usage, "{name}");
            }
            other => panic!("{name}: {other:?}"),
        }
        assert!(
            decoded.contains(&ResponseEvent::MessageStart {
                id: Some("msg_01TEST".into()),
                model: Some("claude-x".into()),
            }),
            "{name}"
        );
    }
}

#[test]
fn blocks_get_indexes_in_order_and_close_when_the_next_kind_starts() {
    let events = vec![
        usage(12, 1),
        thinking("hm"),
        signature("s"),
        text("a"),
        call("t", "add"),
        end("t", json!({"x": 1})),
        text("b"),
        stop(StopReason::EndTurn),
    ];
    let bytes = encode(&events, &fold(&events));
    let got: Vec<(String, Option<u64>, String)> = (frames(&bytes).into_iter())
        .map(|(event, data)| {
            let detail = (data["content_block"]["type"].as_str())
                .or(data["delta"]["type"].as_str())
                .or(data["delta"]["stop_reason"].as_str())
                .unwrap_or("")
                .to_owned();
            assert_eq!(data["type"], event.as_str());
            (event, data["index"].as_u64(), detail)
        })
        .collect();
    let want = [
        ("message_start", None, ""),
        ("content_block_start", Some(0), "thinking"),
        ("content_block_delta", Some(0), "thinking_delta"),
        ("content_block_delta", Some(0), "signature_delta"),
        ("content_block_stop", Some(0), ""),
        ("content_block_start", Some(1), "text"),
        ("content_block_delta", Some(1), "text_delta"),
        ("content_block_stop", Some(1), ""),
        ("content_block_start", Some(2), "tool_use"),
        ("content_block_delta", Some(2), "input_json_delta"),
        ("content_block_stop", Some(2), ""),
        ("content_block_start", Some(3), "text"),
        ("content_block_delta", Some(3), "text_delta"),
        ("content_block_stop", Some(3), ""),
        ("message_delta", None, "end_turn"),
        ("message_stop", None, ""),
    ];
    let want: Vec<_> = (want.iter())
        .map(|(e, i, d)| (e.to_string(), *i, d.to_string()))
        .collect();
    assert_eq!(got, want);
    let all = frames(&bytes);
    assert_eq!(all[0].1["message"]["usage"]["input_tokens"], 12);
    assert_eq!(all[0].1["message"]["id"], "msg_01TEST");
    assert_eq!(all[14].1["usage"]["output_tokens"], 1);
}

#[test]
fn input_tokens_are_zero_in_message_start_when_unknown_then_come_at_the_end() {
    let events = vec![text("a"), usage(9, 4), stop(StopReason::EndTurn)];
    let all = frames(&encode(&events, &fold(&events)));
    assert_eq!(all[0].1["message"]["usage"]["input_tokens"], 0);
    let delta = &all[all.len() - 2].1;
    assert_eq!(
        delta["usage"],
        json!({"input_tokens": 9, "output_tokens": 4})
    );
}

#[path = "stream_end_tests.rs"]
mod end;
