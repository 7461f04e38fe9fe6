//! Text deltas, written from templates ([`super::splice`]), are byte for byte the frames
//! each vendor documents, for texts that test the escaping, in every dialect: the expected
//! frames are written out here by hand from the vendors' shapes.

use qore_core::ResponseEvent;
use serde_json::{json, Value};

use super::anthropic::stream::MessagesEncoder;
use super::openai_chat::stream::ChatEncoder;
use super::openai_responses::stream::ResponsesEncoder;
use super::splice::tests::TEXTS;
use super::StreamEncoder;
use crate::ReplyMeta;

fn meta(id: &str) -> ReplyMeta {
    ReplyMeta {
        id: id.into(),
        model: "agent/x".into(),
        created: 1_700_000_000,
        include_usage: false,
    }
}

/// The frames `encoder` writes for the text deltas in `TEXTS` (after `start`), split into
/// `(event, data)` pairs.
fn frames(mut encoder: Box<dyn StreamEncoder>) -> Vec<(Option<String>, String)> {
    let mut out = Vec::new();
    encoder.start(&mut out);
    for text in TEXTS {
        encoder.event(
            &ResponseEvent::TextDelta {
                text: (*text).into(),
            },
            &mut out,
        );
    }
    let text = String::from_utf8(out).unwrap();
    text.split_terminator("\n\n")
        .map(|frame| {
            let (event, data) = match frame.split_once('\n') {
                Some((event, data)) => (event.strip_prefix("event: ").map(str::to_owned), data),
                None => (None, frame),
            };
            (event, data.strip_prefix("data: ").unwrap().to_owned())
        })
        .collect()
}

/// The last `TEXTS.len()` frames, each checked against `expected(i, text)` byte for byte.
fn check(
    name: &str,
    frames: &[(Option<String>, String)],
    event: Option<&str>,
    expected: impl Fn(usize, &str) -> Value,
) {
    let deltas = &frames[frames.len() - TEXTS.len()..];
    for (i, ((got_event, data), text)) in deltas.iter().zip(TEXTS).enumerate() {
        assert_eq!(got_event.as_deref(), event, "{name}: delta {i}");
        assert_eq!(
            data,
            &expected(i, text).to_string(),
            "{name}: delta {i} ({text:?})"
        );
    }
}

#[test]
fn chat_content_deltas_are_openai_chunks() {
    let frames = frames(Box::new(ChatEncoder::new(meta("chatcmpl-1"))));
    check("chat", &frames, None, |_, text| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000,
            "model": "agent/x", "choices": [{"index": 0, "delta": {"content": text},
            "logprobs": null, "finish_reason": null}]})
    });
}

#[test]
fn messages_text_deltas_are_anthropic_events() {
    let frames = frames(Box::new(MessagesEncoder::new(&meta("msg_1"))));
    check(
        "messages",
        &frames,
        Some("content_block_delta"),
        |_, text| {
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": text}})
        },
    );
}

#[test]
fn responses_text_deltas_are_openai_events_numbered_in_order() {
    let frames = frames(Box::new(ResponsesEncoder::new(&meta("resp_1"))));
    // response.created, response.in_progress, output_item.added, content_part.added: 0–3.
    let first = frames.len() - TEXTS.len();
    assert_eq!(first, 4, "{frames:?}");
    check(
        "responses",
        &frames,
        Some("response.output_text.delta"),
        |i, text| {
            json!({"type": "response.output_text.delta", "sequence_number": first + i,
                "item_id": "msg_1_0", "output_index": 0, "content_index": 0, "delta": text,
                "logprobs": []})
        },
    );
}
