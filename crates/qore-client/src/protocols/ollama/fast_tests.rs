//! Unit tests of the Ollama fast path: real line shapes, escapes, unknown keys, shapes that
//! must fall back, and agreement with the serde path (line by line and event by event).

use std::borrow::Cow;

use super::*;
use crate::protocols::ollama::wire::ChatLine;
use crate::protocols::ollama::OllamaStreamDecoder;
use crate::protocols::test_support;

/// What a line says on the fast path: model, thinking, text.
type Seen = (Option<String>, Option<String>, Option<String>);

fn s(c: &Option<Cow<'_, str>>) -> Option<String> {
    c.as_deref().map(str::to_owned)
}

fn seen(line: &FastLine<'_>) -> Seen {
    (s(&line.model), s(&line.thinking), s(&line.content))
}

/// What serde read, when it is a line the fast path may take: no calls, no error, not the
/// last line (so the decoder makes events of these three fields only).
fn seen_by_serde(line: &ChatLine<'_>) -> Seen {
    assert!(!line.done && line.done_reason.is_none());
    assert!(line.prompt_eval_count.is_none() && line.eval_count.is_none());
    assert!(line.error.as_ref().is_none_or(|e| e.is_null()));
    let message = line.message.as_ref();
    assert!(message
        .and_then(|m| m.tool_calls.as_ref())
        .is_none_or(Vec::is_empty));
    (
        s(&line.model),
        message.and_then(|m| s(&m.thinking)),
        message.and_then(|m| s(&m.content)),
    )
}

/// When the fast path (either of its readers) takes `data`, serde reads it too, to the
/// same values; whether [`parse`] took it.
fn agrees_with_serde(data: &str) -> bool {
    let readers: [fn(&str) -> Option<FastLine<'_>>; 3] = [parse, ollama_layout, any_layout];
    for read in readers {
        if let Some(fast) = read(data) {
            let serde: ChatLine<'_> = serde_json::from_str(data)
                .unwrap_or_else(|err| panic!("fast path took {data:?}, serde says {err}"));
            assert_eq!(seen(&fast), seen_by_serde(&serde), "{data}");
        }
    }
    parse(data).is_some()
}

// From `ollama/streaming_grammar/thinking_and_tool_call` and the bench's wire.
const TEXT: &str = r#"{"model":"qwen3:4b","created_at":"2026-07-28T06:38:03.222822Z","message":{"role":"assistant","content":"word "},"done":false}"#;
const THINKING: &str = r#"{"model":"qwen3:4b","created_at":"2026-08-05T08:11:04.351521Z","message":{"role":"assistant","content":"","thinking":"Okay"},"done":false}"#;
const ESCAPED: &str = r#"{"model":"qwen3:4b","created_at":"2026-08-05T08:11:04.918907Z","message":{"role":"assistant","content":"","thinking":" \u003cnil"},"done":false}"#;
const CALL: &str = r#"{"model":"qwen3:4b","created_at":"2026-08-05T08:11:13.652259Z","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","function":{"index":0,"name":"lookup_harbor_label","arguments":{}}}]},"done":false}"#;
const DONE: &str = r#"{"model":"qwen3:4b","created_at":"2026-08-05T08:11:13.685368Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":9592860750,"load_duration":54884125,"prompt_eval_count":195,"prompt_eval_duration":201682083,"eval_count":575,"eval_duration":8732379668}"#;

#[test]
fn reads_text_and_thinking_lines_and_borrows_them() {
    let line = parse(TEXT).expect("fast path");
    assert!(matches!(line.content, Some(Cow::Borrowed("word "))));
    assert!(line.thinking.is_none());
    assert_eq!(line.model.as_deref(), Some("qwen3:4b"));

    let line = parse(THINKING).expect("fast path");
    assert_eq!(line.content.as_deref(), Some(""));
    assert!(matches!(line.thinking, Some(Cow::Borrowed("Okay"))));
    assert!(agrees_with_serde(TEXT) && agrees_with_serde(THINKING));
}

#[test]
fn ollamas_own_layout_takes_the_literal_reader_and_others_the_general_one() {
    for data in [TEXT, THINKING, ESCAPED] {
        let literal = ollama_layout(data).expect("Ollama's layout");
        let general = any_layout(data).expect("general reader");
        assert_eq!(seen(&literal), seen(&general), "{data}");
    }
    let others = [
        r#"{ "model":"m","created_at":"t","message":{"role":"assistant","content":"x"},"done":false}"#,
        r#"{"created_at":"t","model":"m","message":{"role":"assistant","content":"x"},"done":false}"#,
        r#"{"model":"m","created_at":"t","message":{"content":"x","role":"assistant"},"done":false}"#,
        r#"{"model":"m","created_at":"t","message":{"role":"assistant","thinking":"x","content":""},"done":false}"#,
        r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x"}}"#,
        r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x"},"done":false,"x":1}"#,
    ];
    for data in others {
        assert!(ollama_layout(data).is_none(), "{data}");
        assert!(agrees_with_serde(data), "{data}");
    }
    // Ollama's layout with whitespace before values, and values of other forms.
    let odd = [
        r#"{"model": "m","created_at":"t","message":{"role":"assistant","content":"x"},"done":false}"#,
        r#"{"model":null,"created_at":[1,{"a":null}],"message":{"role":7,"content":null,"thinking":null},"done":false}"#,
        r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x"},"done":false} "#,
    ];
    for data in odd {
        assert!(ollama_layout(data).is_some(), "{data}");
        assert!(agrees_with_serde(data), "{data}");
    }
    let bad = [
        r#"{"model":1,"created_at":"t","message":{"role":"assistant","content":"x"},"done":false}"#,
        r#"{"model":"m","created_at":tru,"message":{"role":"assistant","content":"x"},"done":false}"#,
        r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":{}},"done":false}"#,
        r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x","thinking":1},"done":false}"#,
        r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x"},"done":true}"#,
        r#"{"model":"m","created_at":"t","message":{"role":"assistant","content":"x"},"done":false}x"#,
    ];
    for data in bad {
        assert!(ollama_layout(data).is_none(), "{data}");
    }
}

#[test]
fn decodes_escapes_as_serde_does() {
    let line = parse(ESCAPED).expect("fast path");
    assert_eq!(line.thinking.as_deref(), Some(" <nil"));
    let data =
        r#"{"message":{"content":"a\nb\t\"q\" \\ \/ \u00e9\ud83d\ude00\b\f\r"},"done":false}"#;
    assert!(agrees_with_serde(data));
    assert!(agrees_with_serde(ESCAPED));
}

#[test]
fn skips_unknown_keys_and_accepts_nulls() {
    let lines = [
        r#" { "x" : [1, -2.5e+3, 0, true, false, null, {"a": [[]]}, "s\""] , "message" : { "role" : "assistant" , "images" : null, "content" : "ok" } , "done" : false } "#,
        r#"{"model":null,"message":null,"done":false,"error":null}"#,
        r#"{"message":{"content":null,"thinking":null,"tool_calls":null}}"#,
        r#"{"message":{"content":"x","tool_calls":[ ]}}"#,
        r#"{"message":{}}"#,
        r#"{}"#,
    ];
    for data in lines {
        assert!(agrees_with_serde(data), "fast path refused {data:?}");
    }
}

#[test]
fn leaves_everything_else_to_serde() {
    let others = [
        // shapes it does not handle: calls, the last line, errors
        CALL,
        DONE,
        r#"{"message":{"content":"x"},"done":true}"#,
        r#"{"message":{"content":"x"},"done_reason":null}"#,
        r#"{"message":{"content":"x"},"eval_count":3}"#,
        r#"{"message":{"content":"x"},"prompt_eval_count":null}"#,
        r#"{"error":"model not found"}"#,
        r#"{"error":{"message":"boom"}}"#,
        // duplicate keys it reads (serde rejects them)
        r#"{"message":{"content":"x","content":"y"}}"#,
        r#"{"message":{"thinking":"x","thinking":"y"}}"#,
        r#"{"message":{"content":"x"},"message":{"content":"y"}}"#,
        r#"{"model":"a","model":"b"}"#,
        r#"{"done":false,"done":false}"#,
        r#"{"message":{"tool_calls":null,"tool_calls":[]}}"#,
        // wrong types
        r#"{"message":{"content":1}}"#,
        r#"{"message":{"content":["x"]}}"#,
        r#"{"message":"x"}"#,
        r#"{"model":7}"#,
        r#"{"done":null}"#,
        r#"{"done":0}"#,
        r#"["qwen3:4b",null,false]"#,
        r#"{"m\u0065ssage":{"content":"x"}}"#,
        // invalid JSON
        r#"{"message":{"content":"x"},}"#,
        r#"{"message":{"content":"x"}} extra"#,
        r#"{"message":{"content":"x"}}}"#,
        r#"{"x":tru,"message":{}}"#,
        "{\"message\":{\"content\":\"a\u{1}b\"}}",
        r#"{"message":{"content":"\ud83d"}}"#,
        r#"{"message":{"content":"\q"}}"#,
        r#"{"message":{"content":"open"#,
        r#"{"x":01}"#,
        "",
        "null",
    ];
    for data in others {
        assert!(parse(data).is_none(), "fast path took {data:?}");
    }
}

#[test]
fn every_prefix_and_every_byte_change_falls_back_or_agrees() {
    for base in [TEXT, THINKING, ESCAPED, CALL, DONE] {
        for miss in test_support::near_misses(base, b"\"\\{},:1n x") {
            agrees_with_serde(&miss);
        }
    }
}

#[test]
fn deep_nesting_is_left_to_serde() {
    let nested = |depth: usize| {
        format!(
            r#"{{"x":{}{},"message":{{"content":"x"}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    assert!(parse(&nested(100)).is_none());
    assert!(agrees_with_serde(&nested(10)));
}

#[test]
fn a_stream_decodes_to_the_same_events_on_both_paths() {
    let lines = [
        THINKING,
        ESCAPED,
        r#"{"model":"qwen3:4b","message":{"role":"assistant","content":"Sure: \"x\"\n"},"done":false}"#,
        r#"{"model":"qwen3:4b","message":null,"done":false}"#,
        "",
        CALL,
        TEXT,
        TEXT,
        DONE,
    ];
    let with_fast = test_support::decode_both_ways(
        OllamaStreamDecoder::new(),
        OllamaStreamDecoder::serde_only(),
        &lines,
    );
    assert_eq!(with_fast.0.len(), 11, "{:?}", with_fast.0);
    // The first line sets the model even on the fast path.
    assert!(matches!(
        &with_fast.0[0],
        qore_core::ResponseEvent::MessageStart { model: Some(m), .. } if m == "qwen3:4b"
    ));

    // A line serde rejects ends both the same way.
    for bad in [
        r#"{"message":{"content":"x"},}"#,
        r#"{"message":{"content":"dup","content":"dup"},"done":false}"#,
    ] {
        let broken = [TEXT, bad, TEXT];
        let with_fast = test_support::decode_both_ways(
            OllamaStreamDecoder::new(),
            OllamaStreamDecoder::serde_only(),
            &broken,
        );
        assert!(with_fast.1.is_err());
    }
}
