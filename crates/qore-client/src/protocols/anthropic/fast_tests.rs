use std::borrow::Cow;

use super::*;
use crate::protocols::anthropic::stream::MessagesStreamDecoder;
use crate::protocols::anthropic::wire::{EventKind, StreamEvent};
use crate::protocols::test_support;

/// A delta event as the decoder sees it: the index and the five string fields.
type View = (Option<u32>, [Option<String>; 5]);

fn view(index: Option<u32>, d: &Delta<'_>) -> View {
    let s = |t: &Text<'_>| t.0.as_deref().map(str::to_owned);
    let fields = [
        &d.text,
        &d.thinking,
        &d.signature,
        &d.partial_json,
        &d.stop_reason,
    ];
    (index, fields.map(s))
}

/// The fast path's reading: `None` (falls back), `Some(None)` (nothing to do) or the delta.
fn fast_view(data: &str) -> Option<Option<View>> {
    match parse(data)? {
        FastEvent::Nothing => Some(None),
        FastEvent::BlockDelta(index, delta) => Some(Some(view(index, &delta))),
    }
}

/// What the serde path does with `data`, for the kinds the fast path reads; `None` for
/// anything else (an error or another kind), which the fast path must leave to serde.
fn serde_view(data: &str) -> Option<Option<View>> {
    let event: StreamEvent<'_> = serde_json::from_str(data).ok()?;
    match (event.kind, &event.delta) {
        (EventKind::ContentBlockDelta, Some(delta)) => Some(Some(view(event.index, delta))),
        (EventKind::ContentBlockDelta | EventKind::Ping, _) => Some(None),
        _ => None,
    }
}

fn text(data: &str) -> Option<String> {
    fast_view(data)??.1[0].clone()
}

/// The bench's delta, in the order Anthropic sends its keys.
const TYPICAL: &str =
    r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word "}}"#;

/// Recorded frames (`reasoning_roundtrip/streaming`, `messages_tool_args/unicode_arguments_streaming`):
/// the recorder sorted the keys.
const RECORDED: [&str; 5] = [
    r#"{"delta":{"thinking":"Let","type":"thinking_delta"},"index":0,"type":"content_block_delta"}"#,
    r#"{"delta":{"thinking":"300 km away) 30 minutes (0.5 hours) later at 90 km/h heading toward Station A.\n\nLet t = time in hours after Train","type":"thinking_delta"},"index":0,"type":"content_block_delta"}"#,
    r#"{"delta":{"signature":"signature_REDACTED_2","type":"signature_delta"},"index":0,"type":"content_block_delta"}"#,
    r#"{"delta":{"partial_json":"{\"messag","type":"input_json_delta"},"index":0,"type":"content_block_delta"}"#,
    r#"{"delta":{"partial_json":"Grüße aus 東é\\","type":"input_json_delta"},"index":1,"type":"content_block_delta"}"#,
];

#[test]
fn reads_the_typical_text_delta_and_borrows_its_text() {
    match parse(TYPICAL) {
        Some(FastEvent::BlockDelta(Some(0), delta)) => {
            assert!(matches!(delta.text.0, Some(Cow::Borrowed("word "))));
            assert!(delta.thinking.0.is_none() && delta.partial_json.0.is_none());
        }
        _ => panic!("not read as a delta of block 0"),
    }
}

#[test]
fn reads_recorded_thinking_signature_and_tool_argument_deltas() {
    let expected = [
        (1, "Let"),
        (1, "300 km away) 30 minutes (0.5 hours) later at 90 km/h heading toward Station A.\n\nLet t = time in hours after Train"),
        (2, "signature_REDACTED_2"),
        (3, "{\"messag"),
        (3, "Grüße aus 東é\\"),
    ];
    for (data, (field, value)) in RECORDED.iter().zip(expected) {
        let (_, fields) = fast_view(data).expect("fast path").expect("a delta");
        assert_eq!(fields[field].as_deref(), Some(value), "{data}");
        assert_eq!(fields.iter().flatten().count(), 1, "{data}");
        assert_eq!(fast_view(data), serde_view(data), "{data}");
    }
}

#[test]
fn decodes_every_escape_like_serde() {
    let data = r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\nb\t\"q\" \\ \/ \u00e9\ud83d\ude00\b\f\r"}}"#;
    let expected: String =
        serde_json::from_str(r#""a\nb\t\"q\" \\ \/ \u00e9\ud83d\ude00\b\f\r""#).unwrap();
    assert_eq!(text(data), Some(expected));
    let kind_escaped = r#"{"type":"content\u005fblock_delta","index":0,"delta":{"text":"x"}}"#;
    assert_eq!(text(kind_escaped).as_deref(), Some("x"));
    assert_eq!(fast_view(kind_escaped), serde_view(kind_escaped));
}

#[test]
fn pings_and_empty_deltas_ask_for_nothing() {
    for data in [
        r#"{"type": "ping"}"#,
        r#" { "type" : "ping" , "index" : 3 , "delta" : {"text": "ignored"} } "#,
        r#"{"type":"content_block_delta","index":0}"#,
        r#"{"type":"content_block_delta","index":0,"delta":null}"#,
    ] {
        assert_eq!(fast_view(data), Some(None), "{data}");
        assert_eq!(serde_view(data), Some(None), "{data}");
    }
}

#[test]
fn skips_unknown_values_of_every_kind_and_reads_nulls() {
    let data = r#" { "x" : [1, -2.5e+3, 0, true, false, null, {"a": [[]]}, "s\""] , "type" : "content_block_delta" , "index" : null , "delta" : { "type" : "text_delta" , "text" : "ok" , "citation" : {"k": 1} , "thinking" : null } } "#;
    let expected = (None, [Some("ok".to_owned()), None, None, None, None]);
    assert_eq!(fast_view(data), Some(Some(expected)));
    assert_eq!(fast_view(data), serde_view(data));
}

#[test]
fn leaves_everything_else_to_serde() {
    let others = [
        // other events
        r#"{"type":"message_start","message":{"id":"msg_1","model":"claude-x","content":[]}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}"#,
        r#"{"type":"message_stop"}"#,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        r#"{"type":"something_new","delta":{"text":"x"}}"#,
        r#"{"index":0,"delta":{"text":"x"}}"#,
        // delta shapes it does not read
        r#"{"type":"content_block_delta","index":0,"delta":{"text":"x"},"error":{"message":"boom"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"text":"x"},"usage":null}"#,
        r#"{"type":"ping","message":null}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"text":1}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"text":["x"]}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":["x"]}"#,
        r#"{"type":"content_block_delta","index":"0","delta":{"text":"x"}}"#,
        r#"{"type":"content_block_delta","index":-1,"delta":{"text":"x"}}"#,
        r#"{"type":"content_block_delta","index":1.0,"delta":{"text":"x"}}"#,
        r#"{"type":"content_block_delta","index":4294967296,"delta":{"text":"x"}}"#,
        r#"{"type":{"ping":null}}"#,
        r#"["ping"]"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"text":"x","text":"y"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"partial_json":"","partial_json":"y"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"stop_reason":null,"stop_reason":"y"}}"#,
        r#"{"type":"content_block_delta","index":0,"index":1,"delta":{"text":"x"}}"#,
        r#"{"type":"content_block_delta","type":"ping","index":0,"delta":{"text":"x"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"text":"x"},"delta":null}"#,
        r#"{"type":"content_block_delta","ind\u0065x":0,"delta":{"text":"x"}}"#,
        // invalid JSON
        r#"{"type":"content_block_delta","index":0,"delta":{"text":"x"}} extra"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"text":"x"},}"#,
        r#"{"type":"content_block_delta","index":01,"delta":{"text":"x"}}"#,
        r#"{"type":"content_block_delta","x":tru,"delta":{"text":"x"}}"#,
        "{\"type\":\"content_block_delta\",\"delta\":{\"text\":\"a\u{1}b\"}}",
        r#"{"type":"content_block_delta","delta":{"text":"\ud83d"}}"#,
        r#"{"type":"content_block_delta","delta":{"text":"\q"}}"#,
        r#"{"type":"content_block_delta","delta":{"text":"open"#,
        r#"{"type":"ping""#,
        "",
    ];
    for data in others {
        assert!(parse(data).is_none(), "fast path took {data}");
    }
}

/// Every prefix and every one-byte change of the recorded frames: whatever the fast path
/// accepts, serde reads the same way.
#[test]
fn never_accepts_what_serde_reads_otherwise() {
    let mut frames = vec![TYPICAL, r#"{"type": "ping"}"#];
    frames.extend(RECORDED);
    let mut accepted = 0;
    for frame in frames {
        for prefix in (0..frame.len()).filter_map(|end| frame.get(..end)) {
            assert!(
                parse(prefix).is_none(),
                "fast path took the prefix {prefix}"
            );
        }
        for data in test_support::near_misses(frame, b"\"\\,:{}[]0-n x") {
            if let Some(fast) = fast_view(&data) {
                accepted += 1;
                assert_eq!(Some(fast), serde_view(&data), "{data}");
            }
        }
    }
    assert!(
        accepted > 100,
        "only {accepted} variants taken by the fast path"
    );
}

/// A stream of every block kind, pings, unknown events and frames that fall back, decoded
/// with and without the fast path: the same events and the same end.
#[test]
fn decodes_a_stream_exactly_like_the_serde_path() {
    let frames = [
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":12,"output_tokens":1}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"before any block"}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"type": "ping"}"#,
        RECORDED[0],
        RECORDED[1],
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":""}}"#,
        RECORDED[2],
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"add","input":{}}}"#,
        TYPICAL,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"a\n\u00e9 \"b\""}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"x\": "}}"#,
        r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"to the last open block"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":1}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"x","x":1,"x":2}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"1}"}}"#,
        r#"{"type":"content_block_delta","index":7,"delta":{"type":"text_delta","text":"nowhere"}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"something_new","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}"#,
        r#"{"type":"message_stop"}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"after the end"}}"#,
    ];
    let fast = test_support::decode_both_ways(
        MessagesStreamDecoder::new(),
        MessagesStreamDecoder::serde_only(),
        &frames,
    );
    assert!(fast.1.is_ok(), "{fast:?}");
    assert!(fast.0.len() > 12, "{fast:?}");

    // A frame the fast path reads after one it leaves to serde, which fails the stream.
    let broken = [
        frames[0],
        frames[9],
        r#"{"type":"content_block_delta","index":1,"delta":{"text":"x"}"#,
        TYPICAL,
    ];
    let fast = test_support::decode_both_ways(
        MessagesStreamDecoder::new(),
        MessagesStreamDecoder::serde_only(),
        &broken,
    );
    assert!(fast.1.is_err());
}
