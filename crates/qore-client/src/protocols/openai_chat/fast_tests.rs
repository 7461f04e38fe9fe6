use super::*;
use crate::protocols::openai_chat::wire::Content;

fn text(chunk: &FastChunk<'_>) -> Option<String> {
    match chunk.delta.as_ref()?.content.as_ref()? {
        Content::Text(t) => Some(t.to_string()),
        Content::Parts(_) => None,
    }
}

const TYPICAL: &str = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}],"usage":null}"#;

#[test]
fn reads_the_typical_chunk_and_borrows_its_text() {
    let chunk = parse(TYPICAL).expect("fast path");
    assert_eq!(text(&chunk).as_deref(), Some("Hi"));
    assert!(chunk.finish_reason.is_none());
    match chunk.delta.unwrap().content.unwrap() {
        Content::Text(Cow::Borrowed(_)) => {}
        _ => panic!("not borrowed"),
    }
}

#[test]
fn decodes_every_escape() {
    let data = r#"{"choices":[{"index":0,"delta":{"content":"a\nb\t\"q\" \\ \/ \u00e9\ud83d\ude00\b\f\r"}}]}"#;
    let chunk = parse(data).expect("fast path");
    let expected: String =
        serde_json::from_str(r#""a\nb\t\"q\" \\ \/ \u00e9\ud83d\ude00\b\f\r""#).unwrap();
    assert_eq!(text(&chunk), Some(expected));
}

#[test]
fn reads_tool_call_deltas_and_finish_reasons() {
    let data = r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_x","type":"function","function":{"name":"add","arguments":"{\"x\":"}}]},"index":0,"finish_reason":"tool_calls"}]}"#;
    let chunk = parse(data).expect("fast path");
    assert_eq!(chunk.finish_reason.as_deref(), Some("tool_calls"));
    let calls = chunk.delta.unwrap().tool_calls.unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].index, Some(1));
    assert_eq!(calls[0].id.as_deref(), Some("call_x"));
    let function = calls[0].function.as_ref().unwrap();
    assert_eq!(function.name.as_deref(), Some("add"));
    assert_eq!(function.arguments.as_ref().unwrap().0, "{\"x\":");
}

#[test]
fn skips_unknown_values_of_every_kind() {
    let data = r#" { "x" : [1, -2.5e+3, 0, true, false, null, {"a": [[]]}, "s\""] , "choices" : [ { "index" : 0 , "delta" : { "role" : "assistant" , "content" : "ok" } } ] } "#;
    assert_eq!(
        text(&parse(data).expect("fast path")).as_deref(),
        Some("ok")
    );
}

#[test]
fn leaves_everything_else_to_serde() {
    let others = [
        // shapes it does not handle
        r#"{"choices":[]}"#,
        r#"{"choices":[{"index":1,"delta":{"content":"x"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"x"}},{"index":1,"delta":{}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"x"}]}}]}"#,
        r#"{"choices":[{"index":0,"message":{"content":"x"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":1}}"#,
        r#"{"error":{"message":"boom"}}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"x","content":"y"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":{"a":1}}}]}}]}"#,
        r#"{"cho\u0069ces":[]}"#,
        // invalid JSON
        r#"{"choices":[{"index":0,"delta":{"content":"x"}}],}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"x"}}]} extra"#,
        r#"{"choices":[{"index":01,"delta":{}}]}"#,
        r#"{"x":tru,"choices":[]}"#,
        "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\u{1}b\"}}]}",
        r#"{"choices":[{"index":0,"delta":{"content":"\ud83d"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"\q"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"open"#,
        r#"{"x":1.,"choices":[]}"#,
        r#"{"x":-,"choices":[]}"#,
        "",
        "[DONE]",
    ];
    for data in others {
        assert!(parse(data).is_none(), "fast path took {data:?}");
    }
}

#[test]
fn deep_nesting_is_left_to_serde() {
    let deep = format!(
        r#"{{"x":{}{},"choices":[{{"index":0,"delta":{{}}}}]}}"#,
        "[".repeat(100),
        "]".repeat(100)
    );
    assert!(parse(&deep).is_none());
    let shallow = format!(
        r#"{{"x":{}{},"choices":[{{"index":0,"delta":{{}}}}]}}"#,
        "[".repeat(10),
        "]".repeat(10)
    );
    assert!(parse(&shallow).is_some());
}
