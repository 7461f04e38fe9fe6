//! Unit tests of the llama.cpp `/completion` fast path: the server's chunk shape, escapes,
//! unknown keys, shapes that must fall back, and agreement with the serde path (chunk by
//! chunk and event by event).

use super::*;
use crate::protocols::llamacpp::wire::CompletionChunk;
use crate::protocols::llamacpp::CompletionDecoder;
use crate::protocols::test_support;

/// What a chunk says on the fast path: text, model.
type Seen = (Option<String>, Option<String>);

fn s(c: &Option<Cow<'_, str>>) -> Option<String> {
    c.as_deref().map(str::to_owned)
}

fn seen(chunk: &FastChunk<'_>) -> Seen {
    (s(&chunk.content), s(&chunk.model))
}

/// What serde read, when it is a chunk the fast path may take: not the last chunk, no
/// error (so the decoder makes events of these two fields only).
fn seen_by_serde(chunk: &CompletionChunk<'_>) -> Seen {
    assert!(!chunk.stop);
    assert!(chunk.error.as_ref().is_none_or(|e| e.is_null()));
    (s(&chunk.content), s(&chunk.model))
}

/// When the fast path (either of its readers) takes `data`, serde reads it too, to the
/// same values; whether [`parse`] took it.
fn agrees_with_serde(data: &str) -> bool {
    let readers: [fn(&str) -> Option<FastChunk<'_>>; 3] = [parse, server_layout, any_layout];
    for read in readers {
        if let Some(fast) = read(data) {
            let serde: CompletionChunk<'_> = serde_json::from_str(data)
                .unwrap_or_else(|err| panic!("fast path took {data:?}, serde says {err}"));
            assert_eq!(seen(&fast), seen_by_serde(&serde), "{data}");
        }
    }
    parse(data).is_some()
}

/// The counters serde reads from `data` (the fast path checks them without keeping them).
fn counts(data: &str) -> (Option<u64>, Option<u64>) {
    let chunk: CompletionChunk<'_> = serde_json::from_str(data).expect("serde reads it");
    (chunk.tokens_predicted, chunk.tokens_evaluated)
}

// The local server's shape (as in `stream_tests.rs` and the bench's wire).
const CHUNK: &str = r#"{"index":0,"content":"word ","tokens":[1000],"stop":false,"id_slot":-1,"tokens_predicted":1,"tokens_evaluated":24}"#;
const ESCAPED: &str = r#"{"index":0,"content":"\n    return a\u0020+ \"b\"","tokens":[198,262],"stop":false,"id_slot":0,"tokens_predicted":18446744073709551615,"tokens_evaluated":0}"#;
const LAST: &str = r#"{"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":"smollm2","tokens_predicted":2,"tokens_evaluated":10,"generation_settings":{"n_predict":2,"stop":[]},"prompt":"def add(a, b):\n    return ","stop_type":"limit","stopping_word":"","tokens_cached":12,"timings":{"cache_n":9,"prompt_n":1,"predicted_n":2}}"#;

#[test]
fn reads_the_servers_chunk_and_borrows_its_text() {
    let chunk = server_layout(CHUNK).expect("server layout");
    assert!(matches!(chunk.content, Some(Cow::Borrowed("word "))));
    assert!(chunk.model.is_none());
    assert_eq!(counts(CHUNK), (Some(1), Some(24)));
    let general = any_layout(CHUNK).expect("general reader");
    assert_eq!(seen(&chunk), seen(&general));
    assert!(agrees_with_serde(CHUNK));
}

#[test]
fn decodes_escapes_and_big_counts_as_serde_does() {
    let chunk = parse(ESCAPED).expect("fast path");
    assert_eq!(chunk.content.as_deref(), Some("\n    return a + \"b\""));
    assert_eq!(counts(ESCAPED), (Some(u64::MAX), Some(0)));
    assert!(agrees_with_serde(ESCAPED));
    let data = r#"{"content":"a\nb\t\"q\" \\ \/ \u00e9\ud83d\ude00\b\f\r","stop":false}"#;
    assert!(agrees_with_serde(data));
}

#[test]
fn other_layouts_unknown_keys_and_nulls_take_the_general_reader() {
    let chunks = [
        // older servers
        r#"{"content":"x","id_slot":0,"stop":false,"multimodal":false,"index":0}"#,
        r#"{"content":"x","stop":false,"stopped_word":false,"stopped_limit":false,"stopped_eos":false,"stop_type":"none"}"#,
        r#" { "x" : [1, -2.5e+3, 0, true, false, null, {"a": [[]]}, "s\""] , "content" : "ok" , "stop" : false } "#,
        r#"{"content":null,"model":null,"stop_type":null,"tokens_predicted":null,"tokens_evaluated":null,"timings":null,"error":null}"#,
        r#"{"content":"x","model":"qwen2.5-coder","tokens_predicted":0}"#,
        r#"{"index":0,"content":"x","tokens":[1],"stop":false,"id_slot":-1,"tokens_predicted":1,"tokens_evaluated":24,"prompt_progress":{"total":3}}"#,
        r#"{}"#,
    ];
    for data in chunks {
        assert!(server_layout(data).is_none(), "{data}");
        assert!(agrees_with_serde(data), "fast path refused {data:?}");
    }
    // The server's layout with whitespace before values and values of other forms.
    let odd = [
        r#"{"index": 0,"content": null,"tokens":{"a":[]},"stop":false,"id_slot":"s","tokens_predicted": null,"tokens_evaluated": 7}"#,
        r#"{"index":0,"content":"x","tokens":[],"stop":false,"id_slot":0,"tokens_predicted":1,"tokens_evaluated":2}  "#,
    ];
    for data in odd {
        assert!(server_layout(data).is_some(), "{data}");
        assert!(agrees_with_serde(data), "{data}");
    }
}

#[test]
fn leaves_everything_else_to_serde() {
    let others = [
        // the last chunk, errors, timings
        LAST,
        r#"{"content":"x","stop":true}"#,
        r#"{"error":{"code":500,"message":"boom","type":"server_error"}}"#,
        r#"{"error":"boom"}"#,
        r#"{"content":"x","timings":{"cache_n":3}}"#,
        r#"{"content":"x","timings":{}}"#,
        // counts serde reads differently or rejects
        r#"{"content":"x","tokens_predicted":-1}"#,
        r#"{"content":"x","tokens_predicted":-0}"#,
        r#"{"content":"x","tokens_predicted":1.0}"#,
        r#"{"content":"x","tokens_predicted":1e2}"#,
        r#"{"content":"x","tokens_predicted":18446744073709551616}"#,
        r#"{"content":"x","tokens_predicted":"1"}"#,
        r#"{"index":0,"content":"x","tokens":[],"stop":false,"id_slot":0,"tokens_predicted":-1,"tokens_evaluated":2}"#,
        r#"{"index":0,"content":"x","tokens":[],"stop":false,"id_slot":0,"tokens_predicted":1,"tokens_evaluated":2.5}"#,
        // duplicate keys it reads (serde rejects them)
        r#"{"content":"x","content":"y"}"#,
        r#"{"stop":false,"stop":false}"#,
        r#"{"tokens_predicted":1,"tokens_predicted":1}"#,
        r#"{"model":"a","model":"a"}"#,
        r#"{"timings":null,"timings":null}"#,
        // wrong types
        r#"{"content":1}"#,
        r#"{"content":["x"]}"#,
        r#"{"stop":null}"#,
        r#"{"stopped_word":null}"#,
        r#"{"stop_type":false}"#,
        r#"["x",false]"#,
        r#"{"c\u006fntent":"x"}"#,
        // invalid JSON
        r#"{"content":"x",}"#,
        r#"{"content":"x"} extra"#,
        r#"{"content":"x"}}"#,
        r#"{"x":tru,"content":"x"}"#,
        "{\"content\":\"a\u{1}b\"}",
        r#"{"content":"\ud83d"}"#,
        r#"{"content":"\q"}"#,
        r#"{"content":"open"#,
        r#"{"index":01,"content":"x"}"#,
        r#"{"index":0,"content":"x","tokens":[1,],"stop":false,"id_slot":0,"tokens_predicted":1,"tokens_evaluated":2}"#,
        "",
        "[DONE]",
    ];
    for data in others {
        assert!(parse(data).is_none(), "fast path took {data:?}");
    }
}

#[test]
fn every_prefix_and_every_byte_change_falls_back_or_agrees() {
    for base in [CHUNK, ESCAPED, LAST] {
        for miss in test_support::near_misses(base, b"\"\\{},:1-. x") {
            agrees_with_serde(&miss);
        }
    }
}

#[test]
fn deep_nesting_is_left_to_serde() {
    let nested = |depth: usize| {
        format!(
            r#"{{"x":{}{},"content":"x"}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    assert!(parse(&nested(100)).is_none());
    assert!(agrees_with_serde(&nested(10)));
}

#[test]
fn a_stream_decodes_to_the_same_events_on_both_paths() {
    let frames = [
        CHUNK,
        ESCAPED,
        r#"{"content":"x","id_slot":0,"stop":false,"multimodal":false,"index":0}"#,
        "",
        "[DONE]",
        r#"{"content":"y","stop":false,"tokens_predicted":3}"#,
        CHUNK,
        LAST,
    ];
    let with_fast = test_support::decode_both_ways(
        CompletionDecoder::new(),
        CompletionDecoder::serde_only(),
        &frames,
    );
    assert_eq!(with_fast.0.len(), 8, "{:?}", with_fast.0);

    // A chunk serde rejects ends both the same way.
    for bad in [
        r#"{"content":"x",}"#,
        r#"{"content":"dup","content":"dup","stop":false}"#,
    ] {
        let broken = [CHUNK, bad, CHUNK];
        let with_fast = test_support::decode_both_ways(
            CompletionDecoder::new(),
            CompletionDecoder::serde_only(),
            &broken,
        );
        assert!(with_fast.1.is_err());
    }
}
