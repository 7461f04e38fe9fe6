use super::*;
use crate::protocols::gemini::GeminiStreamDecoder;
use crate::protocols::test_support;

/// The bench's delta chunk (`benches/decode_protocols/wires.rs`, from the recordings).
const TYPICAL: &str = r#"{"candidates":[{"content":{"parts":[{"text":"word "}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":26,"candidatesTokenCount":7,"totalTokenCount":33,"promptTokensDetails":[{"modality":"TEXT","tokenCount":26}],"serviceTier":"standard"},"modelVersion":"gemini-3-flash-preview","responseId":"lLmHaO3bN8S-1MkP7Ju3uAY"}"#;

/// A thought chunk as Gemini 2.5 streams it (keys as recorded).
const THOUGHT: &str = r#"{"candidates": [{"content": {"parts": [{"text": "**Planning**\n\nI need to add.","thought": true}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 57,"totalTokenCount": 170,"thoughtsTokenCount": 113},"modelVersion": "gemini-2.5-flash","responseId": "r-2"}"#;

#[test]
fn reads_the_typical_chunk_and_borrows_its_text() {
    let chunk = parse(TYPICAL).expect("fast path");
    assert_eq!(chunk.parts.len(), 1);
    let part = &chunk.parts[0];
    assert!(matches!(part.text, Some(Cow::Borrowed("word "))));
    assert_eq!(part.thought, None);
    assert_eq!(part.thought_signature, None);
    let usage = chunk.usage_metadata.expect("usage");
    assert_eq!(usage.prompt_token_count, Some(26));
    assert_eq!(usage.candidates_token_count, Some(7));
    assert_eq!(usage.thoughts_token_count, None);
    assert_eq!(usage.cached_content_token_count, None);
    assert_eq!(usage.tool_use_prompt_token_count, None);
    assert_eq!(
        chunk.model_version.as_deref(),
        Some("gemini-3-flash-preview")
    );
    assert_eq!(
        chunk.response_id.as_deref(),
        Some("lLmHaO3bN8S-1MkP7Ju3uAY")
    );
}

#[test]
fn reads_thoughts_signatures_and_every_count() {
    let chunk = parse(THOUGHT).expect("fast path");
    assert_eq!(chunk.parts[0].thought, Some(true));
    assert_eq!(
        chunk.parts[0].text.as_deref(),
        Some("**Planning**\n\nI need to add.")
    );
    assert_eq!(
        chunk.usage_metadata.unwrap().thoughts_token_count,
        Some(113)
    );

    let data = r#"{"candidates":[{"content":{"parts":[{"text":"a","thought":false},{"text":"","thoughtSignature":"CiIBVKhc7o"}]}}],"usageMetadata":{"promptTokenCount":0,"cachedContentTokenCount":3,"candidatesTokenCount":18446744073709551615,"thoughtsTokenCount":null,"toolUsePromptTokenCount":9}}"#;
    let chunk = parse(data).expect("fast path");
    assert_eq!(chunk.parts.len(), 2);
    assert_eq!(chunk.parts[0].thought, Some(false));
    assert_eq!(
        chunk.parts[1].thought_signature.as_deref(),
        Some("CiIBVKhc7o")
    );
    let usage = chunk.usage_metadata.unwrap();
    assert_eq!(usage.prompt_token_count, Some(0));
    assert_eq!(usage.cached_content_token_count, Some(3));
    assert_eq!(usage.candidates_token_count, Some(u64::MAX));
    assert_eq!(usage.thoughts_token_count, None);
    assert_eq!(usage.tool_use_prompt_token_count, Some(9));
    assert_eq!(chunk.model_version, None);
}

#[test]
fn decodes_every_escape() {
    let escaped = r#""a\nb\t\"q\" \\ \/ \u00e9\ud83d\ude00\b\f\r""#;
    let data = format!(r#"{{"candidates":[{{"content":{{"parts":[{{"text":{escaped}}}]}}}}]}}"#);
    let chunk = parse(&data).expect("fast path");
    let expected: String = serde_json::from_str(escaped).unwrap();
    assert_eq!(chunk.parts[0].text.as_deref(), Some(expected.as_str()));
}

#[test]
fn accepts_null_for_every_optional_value() {
    let data = r#"{"candidates":[{"content":{"parts":[{"text":null,"thought":null,"thoughtSignature":null}],"role":"model"},"finishReason":null,"finishMessage":null,"index":null}],"usageMetadata":null,"modelVersion":null,"responseId":null,"promptFeedback":null,"error":null}"#;
    let chunk = parse(data).expect("fast path");
    assert_eq!(chunk.parts.len(), 1);
    assert!(chunk.parts[0].text.is_none() && chunk.usage_metadata.is_none());
    for data in [
        r#"{"candidates":null}"#,
        r#"{"candidates":[]}"#,
        r#"{"candidates":[{}]}"#,
        r#"{"candidates":[{"content":null}]}"#,
        r#"{"candidates":[{"content":{"parts":null}}]}"#,
        r#"{"candidates":[{"content":{}}]}"#,
        r#"{"usageMetadata":{"promptTokenCount":5}}"#,
        r#"{}"#,
    ] {
        let chunk = parse(data).unwrap_or_else(|| panic!("fast path: {data}"));
        assert!(chunk.parts.is_empty(), "{data}");
    }
}

#[test]
fn skips_unknown_values_of_every_kind() {
    let data = r#" { "x" : [1, -2.5e+3, 0, true, false, null, {"a": [[]]}, "s\""] , "candidates" : [ { "content" : { "parts" : [ { "text" : "ok" , "y" : {"z": 1} } ] , "role" : "model" } , "safetyRatings" : [{"category": "HARM", "probability": "NEGLIGIBLE"}], "avgLogprobs": -0.5, "index" : 0 } ] , "usageMetadata" : { "promptTokensDetails" : [ { "modality" : "TEXT" , "tokenCount" : 26 } ] , "totalTokenCount" : 1e3 } , "createTime" : "2025" } "#;
    let chunk = parse(data).expect("fast path");
    assert_eq!(chunk.parts[0].text.as_deref(), Some("ok"));
    assert_eq!(chunk.usage_metadata.unwrap().prompt_token_count, None);
}

#[test]
fn leaves_everything_else_to_serde() {
    let others = [
        // shapes it does not handle
        r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"functionCall":null}]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"executableCode":{"code":"1"}}]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"codeExecutionResult":{}}]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"inlineData":null}]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"fileData":{}}]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":""}]},"finishReason":"STOP"}]}"#,
        r#"{"candidates":[{"finishReason":"SAFETY","finishMessage":"no"}]}"#,
        r#"{"candidates":[{"index":0},{"index":1}]}"#,
        r#"{"candidates":[{"index":1}]}"#,
        r#"{"promptFeedback":{"blockReason":"SAFETY"}}"#,
        r#"{"error":{"code":500,"message":"Internal"}}"#,
        r#"[{"candidates":[]}]"#,
        r#""text""#,
        // values of the wrong type
        r#"{"candidates":{}}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":1}]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"thought":"true"}]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"thoughtSignature":false}]}}]}"#,
        r#"{"candidates":[{"content":{"parts":{}}}]}"#,
        r#"{"candidates":[{"index":"0"}]}"#,
        r#"{"candidates":[{"index":0.0}]}"#,
        r#"{"candidates":[{"finishMessage":7}]}"#,
        r#"{"modelVersion":1}"#,
        r#"{"responseId":[]}"#,
        r#"{"usageMetadata":[]}"#,
        r#"{"usageMetadata":{"promptTokenCount":1.0}}"#,
        r#"{"usageMetadata":{"promptTokenCount":1e2}}"#,
        r#"{"usageMetadata":{"promptTokenCount":-1}}"#,
        r#"{"usageMetadata":{"promptTokenCount":-0}}"#,
        r#"{"usageMetadata":{"candidatesTokenCount":18446744073709551616}}"#,
        r#"{"usageMetadata":{"thoughtsTokenCount":"3"}}"#,
        // duplicate keys it reads
        r#"{"candidates":[],"candidates":[]}"#,
        r#"{"usageMetadata":null,"usageMetadata":{}}"#,
        r#"{"modelVersion":"a","modelVersion":"b"}"#,
        r#"{"error":null,"error":null}"#,
        r#"{"candidates":[{"index":0,"index":0}]}"#,
        r#"{"candidates":[{"content":{"parts":[],"parts":[]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"a","text":"b"}]}}]}"#,
        r#"{"usageMetadata":{"promptTokenCount":1,"promptTokenCount":2}}"#,
        // invalid JSON
        "",
        "{",
        r#"{"candidates":[]"#,
        r#"{"candidates":[],}"#,
        r#"{"candidates":[]} x"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"a	b"}]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"\x"}]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"\ud800"}]}}]}"#,
        r#"{"x":01}"#,
        r#"{"x":tru}"#,
        // keys with escapes
        r#"{"cand\u0069dates":[]}"#,
    ];
    for data in others {
        assert!(parse(data).is_none(), "took the fast path: {data}");
    }
}

#[test]
fn deep_nesting_is_left_to_serde() {
    let deep = format!(r#"{{"x":{}{}}}"#, "[".repeat(200), "]".repeat(200));
    assert!(parse(&deep).is_none());
}

/// A stream that mixes every shape: first chunk, thoughts, signatures, escapes, unknown
/// keys, a function call and the finish (both left to serde), null usage counts.
fn mixed_stream() -> Vec<String> {
    let usage = |n: u32| {
        format!(
            r#""usageMetadata":{{"promptTokenCount":26,"candidatesTokenCount":{n},"thoughtsTokenCount":null,"totalTokenCount":99}}"#
        )
    };
    let chunk = |parts: &str, rest: &str| {
        format!(
            r#"{{"candidates":[{{"content":{{"parts":[{parts}],"role":"model"}},"index":0}}],{rest},"modelVersion":"gemini-2.5-pro","responseId":"resp-1"}}"#
        )
    };
    vec![
        THOUGHT.to_owned(),
        chunk(r#"{"text":" more \"thought\"","thought":true}"#, &usage(0)),
        chunk(
            r#"{"text":"","thought":true,"thoughtSignature":"U0lH"}"#,
            &usage(0),
        ),
        chunk(r#"{"text":"Hel"}"#, &usage(1)),
        chunk(r#"{"text":"lo \u00e9\n","unknown":[1]}"#, &usage(2)),
        chunk(
            r#"{"functionCall":{"name":"add","args":{"a":1},"id":"c1"}}"#,
            &usage(3),
        ),
        chunk(r#"{"text":"after"},{"text":"two parts"}"#, &usage(4)),
        TYPICAL.to_owned(),
        r#"{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"RU5E"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":26,"candidatesTokenCount":9},"modelVersion":"gemini-2.5-pro"}"#.to_owned(),
    ]
}

#[test]
fn the_fast_path_takes_the_common_chunks_of_the_mixed_stream() {
    let taken: Vec<bool> = mixed_stream().iter().map(|d| parse(d).is_some()).collect();
    assert_eq!(
        taken,
        [true, true, true, true, true, false, true, true, false]
    );
}

#[test]
fn same_events_with_and_without_the_fast_path() {
    let frames = mixed_stream();
    // Function calls without an id get a fresh one, so this stream gives its call one.
    let (fast, fast_end) = test_support::decode_both_ways(
        GeminiStreamDecoder::new(),
        GeminiStreamDecoder::serde_only(),
        &frames,
    );
    assert!(fast_end.is_ok());
    assert!(fast.len() > 10, "{fast:?}");

    // Cut after the delta chunks (no finishReason): the same events and the same error.
    let cut = &frames[..5];
    let (_, fast_end) = test_support::decode_both_ways(
        GeminiStreamDecoder::new(),
        GeminiStreamDecoder::serde_only(),
        cut,
    );
    assert!(fast_end.is_err());
}
