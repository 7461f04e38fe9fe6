use std::collections::VecDeque;

use qore_client::protocols::openai_chat::OpenAiChat as ClientChat;
use qore_client::{FimRequest, Protocol as _, RequestOptions};
use qore_core::{ErrorInfo, MessageAssembler, StopReason, Usage};

use super::*;
use crate::dialect::test_support::decode as client_decode;

fn client_events(bytes: &[u8], step: usize) -> (Vec<ResponseEvent>, Result<(), ErrorInfo>) {
    client_decode(ClientChat::default().fim_decoder(), bytes, step)
}

fn meta(include_usage: bool) -> ReplyMeta {
    ReplyMeta {
        id: "cmpl-1".into(),
        model: "coder".into(),
        created: 7,
        include_usage,
    }
}

fn fold(events: &[ResponseEvent]) -> StreamOutcome {
    let mut assembler = MessageAssembler::new();
    events.iter().for_each(|e| assembler.apply(e));
    assembler.finish()
}

#[test]
fn requests_the_client_encodes_decode_to_the_same_request() {
    for stream in [false, true] {
        let options = RequestOptions {
            stream,
            max_tokens: Some(64),
            temperature: Some(0.2),
            ..RequestOptions::default()
        };
        let request = FimRequest {
            model: "deepseek/coder",
            prefix: "fn add(a: i32, b: i32) -> i32 {\n    ",
            suffix: "\n}\n",
            extra: &[],
            options: &options,
        };
        let body = ClientChat::default().encode_fim(&request).unwrap();
        let fim = decode(&serde_json::to_vec(&body).unwrap()).unwrap();
        let expected = FimInbound {
            model: "deepseek/coder".into(),
            prompt: request.prefix.into(),
            suffix: request.suffix.into(),
            max_tokens: Some(64),
            temperature: Some(0.2),
            stop: vec![],
            stream,
            include_usage: stream,
            dropped: vec![],
        };
        assert_eq!(fim, expected, "{body}");
    }
}

#[test]
fn fields_are_read_refused_or_dropped() {
    let fim = decode(
        br#"{"model": "m", "prompt": ["a"], "stop": ["\n\n"], "n": 1, "echo": false,
            "logprobs": null, "top_p": 0.5, "user": "u"}"#,
    )
    .unwrap();
    assert_eq!(fim.prompt, "a");
    assert_eq!(fim.suffix, "");
    assert_eq!(fim.stop, vec!["\n\n".to_owned()]);
    assert_eq!(fim.dropped, vec!["top_p".to_owned(), "user".to_owned()]);
    let refused: [(&[u8], Option<&str>); 11] = [
        (br#"{"prompt": "a"}"#, Some("model")),
        (br#"{"model": "m"}"#, Some("prompt")),
        (br#"{"model": "m", "prompt": ["a", "b"]}"#, Some("prompt")),
        (br#"{"model": "m", "prompt": [[1, 2]]}"#, Some("prompt[0]")),
        (br#"{"model": "m", "prompt": 3}"#, Some("prompt")),
        (
            br#"{"model": "m", "prompt": "a", "suffix": 1}"#,
            Some("suffix"),
        ),
        (br#"{"model": "m", "prompt": "a", "n": 2}"#, Some("n")),
        (
            br#"{"model": "m", "prompt": "a", "best_of": 3}"#,
            Some("best_of"),
        ),
        (
            br#"{"model": "m", "prompt": "a", "echo": true}"#,
            Some("echo"),
        ),
        (
            br#"{"model": "m", "prompt": "a", "max_tokens": "9"}"#,
            Some("max_tokens"),
        ),
        (b"{\"model\": ", None),
    ];
    for (body, param) in refused {
        let err = decode(body).unwrap_err();
        assert_eq!(err.status, 400);
        assert_eq!(
            err.param.as_deref(),
            param,
            "{}",
            String::from_utf8_lossy(body)
        );
    }
}

#[test]
fn streams_and_bodies_decode_through_the_client_to_the_same_turn() {
    let usage = Usage {
        input_tokens: Some(30),
        output_tokens: Some(4),
        ..Usage::default()
    };
    let cases = [
        (vec!["a + b", "\n"], StopReason::EndTurn),
        (vec!["let x"], StopReason::MaxTokens),
    ];
    for (pieces, reason) in cases {
        let mut events: Vec<ResponseEvent> = (pieces.iter())
            .map(|t| ResponseEvent::TextDelta { text: (*t).into() })
            .collect();
        events.push(ResponseEvent::Usage { usage });
        events.push(ResponseEvent::Stop {
            reason: reason.clone(),
        });
        let outcome = fold(&events);
        let want = pieces.concat();
        for include_usage in [false, true] {
            let mut encoder = TextCompletionEncoder::new(meta(include_usage));
            let mut out = Vec::new();
            encoder.start(&mut out);
            events.iter().for_each(|e| encoder.event(e, &mut out));
            encoder.finish(&outcome, None, &mut out);
            assert!(out.ends_with(b"data: [DONE]\n\n"));
            for step in [1, 9, out.len()] {
                let (decoded, end) = client_events(&out, step);
                end.unwrap();
                let StreamOutcome::Finished {
                    message,
                    stop_reason,
                    usage: got,
                } = fold(&decoded)
                else {
                    panic!("{decoded:?}");
                };
                assert_eq!(message.text(), want);
                assert_eq!(stop_reason, Some(reason.clone()));
                assert_eq!(
                    got,
                    if include_usage {
                        usage
                    } else {
                        Usage::default()
                    }
                );
            }
        }
        let body = response(&meta(false), &outcome);
        assert_eq!(body["object"], "text_completion");
        assert_eq!(body["id"], "cmpl-1");
        let mut decoder = ClientChat::default().fim_decoder();
        let mut decoded = VecDeque::new();
        decoder
            .body(&serde_json::to_vec(&body).unwrap(), &mut decoded)
            .unwrap();
        let decoded: Vec<ResponseEvent> = decoded.into();
        let StreamOutcome::Finished {
            message,
            stop_reason,
            usage: got,
        } = fold(&decoded)
        else {
            panic!("{decoded:?}");
        };
        assert_eq!(
            (message.text(), stop_reason, got),
            (want, Some(reason), usage)
        );
    }
}

#[test]
fn a_failed_completion_ends_with_an_error_chunk() {
    let events = [
        ResponseEvent::TextDelta { text: "x".into() },
        ResponseEvent::Error {
            error: ErrorInfo::provider("model crashed"),
        },
    ];
    let mut encoder = TextCompletionEncoder::new(meta(true));
    let mut out = Vec::new();
    events.iter().for_each(|e| encoder.event(e, &mut out));
    encoder.finish(&fold(&events), None, &mut out);
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(!text.contains("[DONE]"), "{text}");
    let (decoded, _) = client_events(&out, 4);
    assert!(matches!(fold(&decoded), StreamOutcome::Failed { error, .. }
        if error.message.contains("model crashed")));
    assert!(new_id().starts_with("cmpl-"));
    assert_eq!(
        error_body(&ServeError::invalid("prompt", "no"))["error"]["param"],
        "prompt"
    );
}
