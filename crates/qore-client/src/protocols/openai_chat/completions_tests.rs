//! The Completions fill-in-the-middle wire, one rule per table. No recorded Completions
//! traffic exists in ../shared/fixtures (its README lists chat paths only), so the bytes are
//! written from the providers' documented formats: OpenAI's legacy Completions streaming
//! (`text_completion` chunks, `[DONE]`, `stream_options.include_usage`) and DeepSeek's FIM
//! (`/beta/completions`, the same shape).

use super::*;
use crate::protocols::test_support::{self, fim_request, finished};
use crate::RequestOptions;
use qore_core::StopReason;

fn chunk(text: &str, finish: Option<&str>) -> String {
    json!({"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "deepseek-chat",
           "choices": [{"text": text, "index": 0, "logprobs": null, "finish_reason": finish}]})
    .to_string()
}

const USAGE: &str = r#"{"id":"cmpl-1","object":"text_completion","created":1,"model":"deepseek-chat","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}"#;

/// What a stream gives: the text, stop reason and output tokens; or an error's words.
type Want = Result<(&'static str, Option<StopReason>, Option<u64>), &'static str>;

#[test]
fn streams_decode_to_text_stop_and_usage() {
    let cases: Vec<(&str, Vec<String>, Want)> = vec![
        (
            "text, finish, usage chunk, [DONE]",
            vec![
                chunk("a", None),
                chunk(" + b", Some("stop")),
                USAGE.into(),
                "[DONE]".into(),
            ],
            Ok(("a + b", Some(StopReason::EndTurn), Some(3))),
        ),
        (
            "a length finish without usage",
            vec![chunk("a", Some("length")), "[DONE]".into()],
            Ok(("a", Some(StopReason::MaxTokens), None)),
        ),
        (
            "[DONE] without a finish reason",
            vec![chunk("x", None), "[DONE]".into()],
            Ok(("x", None, None)),
        ),
        (
            "an error chunk inside a 200 stream",
            vec![
                chunk("a", None),
                r#"{"error":{"message":"overloaded","type":"server_error"}}"#.into(),
            ],
            Err("overloaded"),
        ),
        (
            "a stream cut before its end",
            vec![chunk("a", None)],
            Err("ended before the response was complete"),
        ),
        (
            "a chunk that is not JSON",
            vec!["{\"choices\": [".into()],
            Err("undecodable Completions data"),
        ),
    ];
    for (name, frames, want) in cases {
        let (events, end) = test_support::decode(TextCompletionDecoder::new(), &frames);
        match (test_support::first_error(&events, end), want) {
            (None, Ok((text, stop, output))) => {
                let (message, stop_reason, usage) = finished(&events);
                assert_eq!(message.text(), text, "{name}");
                assert_eq!(stop_reason, stop, "{name}");
                assert_eq!(usage.output_tokens, output, "{name}");
            }
            (Some(error), Err(words)) => {
                assert!(error.message.contains(words), "{name}: {error:?}")
            }
            (got, want) => panic!("{name}: got {got:?} ({events:?}), want {want:?}"),
        }
    }
}

#[test]
fn a_whole_body_decodes_like_a_stream() {
    let body = json!({"id": "cmpl-2", "object": "text_completion", "model": "m",
        "choices": [{"text": "a + b", "index": 0, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2}});
    let events =
        test_support::decode_body(TextCompletionDecoder::new(), body.to_string().as_bytes())
            .unwrap();
    let (message, stop_reason, usage) = finished(&events);
    assert_eq!(message.text(), "a + b");
    assert_eq!(stop_reason, Some(StopReason::EndTurn));
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(5), Some(2))
    );
}

#[test]
fn the_request_carries_prompt_and_suffix() {
    let options = RequestOptions {
        max_tokens: Some(64),
        ..RequestOptions::default()
    };
    assert_eq!(
        encode_fim(&fim_request("deepseek-chat", &options)).unwrap(),
        json!({"model": "deepseek-chat", "prompt": "def add(a, b):\n    return ", "suffix": "\n",
               "stream": true, "stream_options": {"include_usage": true}, "max_tokens": 64})
    );
    assert!(encode_fim(&fim_request("", &options)).is_err());
}
