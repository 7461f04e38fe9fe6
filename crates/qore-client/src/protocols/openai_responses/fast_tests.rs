use super::*;
use crate::protocols::openai_responses::ResponsesDecoder;
use crate::protocols::test_support;
use qore_core::{ErrorInfo, ResponseEvent};

/// The fields of a [`WireEvent`] as plain values, to compare the two paths.
type View = (
    Option<String>,
    Option<String>,
    [Option<u32>; 3],
    [Option<Option<String>>; 3],
    Option<String>,
    [bool; 2],
);

fn view(event: &WireEvent<'_>) -> View {
    let text = |t: &Option<LooseText<'_>>| t.as_ref().map(|t| t.0.as_deref().map(str::to_owned));
    (
        event.kind.as_deref().map(str::to_owned),
        event.item_id.as_deref().map(str::to_owned),
        [event.output_index, event.content_index, event.summary_index],
        [text(&event.delta), text(&event.text), text(&event.refusal)],
        event.arguments.as_ref().map(|a| a.0.to_string()),
        [event.item.is_some(), event.response.is_some()],
    )
}

/// The fast path takes `data` and reads it as serde does.
fn same_as_serde(data: &str) -> View {
    let fast = view(&parse(data).unwrap_or_else(|| panic!("fast path refused {data:?}")));
    let serde: WireEvent<'_> = serde_json::from_str(data).expect("serde reads it");
    assert_eq!(fast, view(&serde), "{data:?}");
    fast
}

fn delta<'e, 'a>(event: &'e WireEvent<'a>) -> Option<&'e Cow<'a, str>> {
    event.delta.as_ref()?.0.as_ref()
}

// Recorded frames (OpenAI, rig cassettes) and the bench's (`type` first).
const TEXT: &str = r#"{"content_index":0,"delta":" \\(","item_id":"msg_REDACTED_1","logprobs":[],"obfuscation":"obfuscation_REDACTED_2","output_index":1,"sequence_number":7,"type":"response.output_text.delta"}"#;
const SUMMARY: &str = r#"{"delta":"**Calculating multiples of 6 and 4**\n\nI","item_id":"rs_REDACTED_1","obfuscation":"obfuscation_REDACTED_1","output_index":0,"sequence_number":4,"summary_index":0,"type":"response.reasoning_summary_text.delta"}"#;
const ARGS: &str = r#"{"delta":"{\"","item_id":"fc_REDACTED_1","obfuscation":"obfuscation_REDACTED_1","output_index":0,"sequence_number":3,"type":"response.function_call_arguments.delta"}"#;
const REFUSAL: &str = r#"{"content_index":0,"delta":"I'm","item_id":"msg_REDACTED_1","output_index":0,"sequence_number":4,"type":"response.refusal.delta"}"#;
const BENCH: &str = r#"{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_68879e8e1a5c8190b3d4f6a7c8e9d0a1","output_index":0,"content_index":0,"delta":"word ","logprobs":[],"obfuscation":"Lq"}"#;
const REASONING: &str = r#"{"type":"response.reasoning_text.delta","item_id":"rs_1","output_index":0,"content_index":2,"delta":"hmm","sequence_number":9}"#;

#[test]
fn reads_the_recorded_delta_frames_as_serde_does() {
    for data in [TEXT, SUMMARY, ARGS, REFUSAL, BENCH, REASONING] {
        same_as_serde(data);
    }
    let text = parse(TEXT).unwrap();
    assert_eq!(text.kind.as_deref(), Some("response.output_text.delta"));
    assert_eq!(text.item_id.as_deref(), Some("msg_REDACTED_1"));
    assert_eq!(
        [text.output_index, text.content_index, text.summary_index],
        [Some(1), Some(0), None]
    );
    assert_eq!(delta(&text).map(|d| &**d), Some(" \\("));
    let summary = parse(SUMMARY).unwrap();
    assert_eq!(summary.summary_index, Some(0));
    assert_eq!(
        delta(&summary).map(|d| &**d),
        Some("**Calculating multiples of 6 and 4**\n\nI")
    );
    assert_eq!(delta(&parse(ARGS).unwrap()).map(|d| &**d), Some("{\""));
}

#[test]
fn borrows_text_without_escapes() {
    let event = parse(BENCH).unwrap();
    assert!(matches!(delta(&event), Some(Cow::Borrowed("word "))));
    assert!(matches!(event.item_id, Some(Cow::Borrowed(_))));
}

#[test]
fn decodes_every_escape() {
    let data = r#"{"type":"response.output_text.delta","delta":"a\nb\t\"q\" \\ \/ \u00e9\ud83d\ude00\b\f\r’"}"#;
    let expected: String =
        serde_json::from_str(r#""a\nb\t\"q\" \\ \/ \u00e9\ud83d\ude00\b\f\r’""#).unwrap();
    let event = parse(data).expect("fast path");
    assert_eq!(delta(&event).map(|d| d.to_string()), Some(expected));
    same_as_serde(data);
}

#[test]
fn reads_the_small_events_and_nulls_as_serde_does() {
    let events = [
        r#"{"type":"response.output_text.done","item_id":"msg_1","output_index":0,"content_index":0,"text":"Hello \"you\"","logprobs":[],"sequence_number":9}"#,
        r#"{"type":"response.refusal.done","item_id":"msg_1","output_index":0,"content_index":0,"refusal":"No.","sequence_number":9}"#,
        r#"{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"arguments":"{\"city\":\"Paris\"}","sequence_number":9}"#,
        r#"{"type":"response.content_part.added","item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""},"sequence_number":3}"#,
        r#"{"type":"response.output_text.delta","item_id":null,"output_index":null,"content_index":null,"summary_index":null,"delta":null,"text":null,"refusal":null,"arguments":null,"item":null,"response":null}"#,
        r#"{"type":null,"delta":"x"}"#,
        r#"{"delta":"no type: the event line names it"}"#,
        r#"{}"#,
        // `kind` is not `type` (serde renames the field)
        r#"{"kind":"response.output_text.delta","delta":"x"}"#,
        // unknown keys may repeat
        r#"{"type":"response.output_text.delta","logprobs":[],"logprobs":[{"token":"x"}],"delta":"x"}"#,
        r#" { "x" : [1, -2.5e+3, 0, true, false, null, {"a": [[]]}, "s\""] , "type" : "response.output_text.delta" , "delta" : "ok" , "output_index" : 4294967295 } "#,
    ];
    for data in events {
        same_as_serde(data);
    }
}

#[test]
fn leaves_everything_else_to_serde() {
    let others = [
        // whole items and responses
        r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"m"}}"#,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message"}}"#,
        // text and arguments in other shapes than a string
        r#"{"type":"response.reasoning_summary.delta","delta":{"text":"x"}}"#,
        r#"{"type":"response.output_text.delta","delta":7}"#,
        r#"{"type":"response.output_text.done","text":["x"]}"#,
        r#"{"type":"response.refusal.done","refusal":{"text":"x"}}"#,
        r#"{"type":"response.function_call_arguments.done","arguments":{"a":1}}"#,
        r#"{"type":7,"delta":"x"}"#,
        r#"{"type":"response.output_text.delta","item_id":1,"delta":"x"}"#,
        // indexes that are not a u32
        r#"{"type":"response.output_text.delta","output_index":-1,"delta":"x"}"#,
        r#"{"type":"response.output_text.delta","output_index":-0,"delta":"x"}"#,
        r#"{"type":"response.output_text.delta","output_index":1.0,"delta":"x"}"#,
        r#"{"type":"response.output_text.delta","output_index":1e0,"delta":"x"}"#,
        r#"{"type":"response.output_text.delta","content_index":4294967296,"delta":"x"}"#,
        r#"{"type":"response.output_text.delta","summary_index":"0","delta":"x"}"#,
        // a key it reads, twice
        r#"{"type":"response.output_text.delta","delta":"x","delta":"y"}"#,
        r#"{"type":"a","type":"response.output_text.delta","delta":"x"}"#,
        r#"{"type":"response.output_text.delta","item":null,"item":null,"delta":"x"}"#,
        r#"{"type":"response.output_text.delta","output_index":0,"output_index":1}"#,
        // a key with escapes
        r#"{"type":"response.output_text.delta","d\u0065lta":"x"}"#,
        // not an object, invalid JSON
        r#"["response.output_text.delta"]"#,
        r#""x""#,
        r#"{"type":"response.output_text.delta","delta":"x",}"#,
        r#"{"type":"response.output_text.delta","delta":"x"} extra"#,
        r#"{"type":"response.output_text.delta","delta":"x"}{}"#,
        r#"{"type":"response.output_text.delta","output_index":01}"#,
        r#"{"x":tru,"delta":"x"}"#,
        "{\"delta\":\"a\u{1}b\"}",
        r#"{"delta":"\ud83d"}"#,
        r#"{"delta":"\q"}"#,
        r#"{"delta":"open"#,
        r#"{"delta" "x"}"#,
        "",
        "[DONE]",
    ];
    for data in others {
        assert!(parse(data).is_none(), "fast path took {data:?}");
    }
}

#[test]
fn deep_nesting_is_left_to_serde() {
    let nested = |depth: usize| {
        format!(
            r#"{{"x":{}{},"type":"response.output_text.delta","delta":"x"}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    assert!(parse(&nested(100)).is_none());
    same_as_serde(&nested(10));
}

/// Decode `frames` with the fast path and with serde only.
fn both_paths(frames: &[(Option<&str>, &str)]) -> [(Vec<ResponseEvent>, Result<(), ErrorInfo>); 2] {
    [ResponsesDecoder::new(), ResponsesDecoder::serde_only()]
        .map(|decoder| test_support::decode_frames(decoder, frames.iter().copied()))
}

#[test]
fn a_whole_stream_decodes_alike_with_and_without_the_fast_path() {
    let created = r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"gpt-x","status":"in_progress","output":[]}}"#;
    let reasoning = r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc"}}"#;
    let summary_1 = r#"{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":1,"delta":"second part"}"#;
    let message = r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"msg_1","content":[]}}"#;
    let call = r#"{"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":""}}"#;
    let args_2 = r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":2,"delta":"\"Paris\"}"}"#;
    let args_done = r#"{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":2,"arguments":"{\"city\":\"Paris\"}"}"#;
    let call_done = r#"{"type":"response.output_item.done","output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}"#;
    let completed = r#"{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[],"usage":{"input_tokens":5,"output_tokens":7,"output_tokens_details":{"reasoning_tokens":3}}}}"#;
    let frames: Vec<(Option<&str>, &str)> = vec![
        (Some("response.created"), created),
        (None, reasoning),
        (None, SUMMARY.replace("rs_REDACTED_1", "rs_1").leak()),
        (None, summary_1),
        (None, REASONING),
        (None, message),
        (None, TEXT.replace("msg_REDACTED_1", "msg_1").leak()),
        (None, BENCH),
        (
            None,
            r#"{"type":"response.output_text.delta","item_id":"msg_1","delta":"\u00e9\n"}"#,
        ),
        // the event line names it; a delta object falls back to serde
        (
            Some("response.output_text.delta"),
            r#"{"item_id":"msg_1","delta":"named"}"#,
        ),
        (
            None,
            r#"{"type":"response.reasoning_summary.delta","delta":{"text":"old"}}"#,
        ),
        (
            None,
            r#"{"type":"response.output_text.done","item_id":"msg_1","text":"ignored"}"#,
        ),
        (None, REFUSAL.replace("msg_REDACTED_1", "msg_1").leak()),
        (None, call),
        (None, ARGS.replace("fc_REDACTED_1", "fc_1").leak()),
        (None, args_2),
        (None, args_done),
        (None, call_done),
        (None, completed),
    ];
    let [fast, serde] = both_paths(&frames);
    assert_eq!(fast, serde);
    assert!(fast.1.is_ok());
    let thinking = fast
        .0
        .iter()
        .filter(|e| matches!(e, ResponseEvent::ThinkingDelta { .. }));
    assert!(thinking.count() >= 5, "{:?}", fast.0);
    assert!(fast
        .0
        .iter()
        .any(|e| matches!(e, ResponseEvent::ToolCallEnd { .. })));
    // The deltas did take the fast path.
    let fast_taken = frames.iter().filter(|(_, data)| parse(data).is_some());
    assert_eq!(fast_taken.count(), 12);
}

#[test]
fn odd_frames_decode_alike_with_and_without_the_fast_path() {
    let created = r#"{"type":"response.created","response":{"id":"resp_1","model":"m"}}"#;
    let odd = [
        r#"{"type":"response.output_text.delta","delta":"x","delta":"y"}"#,
        r#"{"type":"response.output_text.delta","delta":"x"} extra"#,
        r#"{"type":"response.output_text.delta","output_index":1.0,"delta":"x"}"#,
        r#"{"type":"response.output_text.delta","item":null,"delta":"x"}"#,
        r#"{"type":"response.output_text.delta","response":null,"delta":"x"}"#,
        r#"{"type":"response.completed"}"#,
        r#"{"type":"error","code":"server_error","message":"boom"}"#,
        r#"{"type":null,"delta":"x"}"#,
    ];
    for data in odd {
        for name in [None, Some("response.output_text.delta")] {
            let frames = [(None, created), (name, data)];
            let [fast, serde] = both_paths(&frames);
            assert_eq!(fast, serde, "{name:?} {data:?}");
        }
    }
}
