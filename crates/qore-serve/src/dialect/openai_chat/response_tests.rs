use std::collections::VecDeque;

use qore_client::protocols::openai_chat::OpenAiChat as ClientChat;
use qore_client::Protocol as _;
use qore_core::{ContentBlock, Message, MessageAssembler, Role, StopReason, Usage};
use serde_json::json;

use super::*;

fn meta() -> ReplyMeta {
    ReplyMeta {
        id: "chatcmpl-9".into(),
        model: "coder".into(),
        created: 42,
        include_usage: false,
    }
}

fn finished(blocks: Vec<ContentBlock>, reason: Option<StopReason>, usage: Usage) -> StreamOutcome {
    StreamOutcome::Finished {
        message: Message::new(Role::Assistant, blocks),
        stop_reason: reason,
        usage,
    }
}

#[test]
fn bodies_decode_through_the_client_to_the_same_turn() {
    let usage = Usage {
        input_tokens: Some(7),
        output_tokens: Some(3),
        cached_input_tokens: Some(2),
        reasoning_tokens: Some(1),
        ..Usage::default()
    };
    let cases = [
        (vec![ContentBlock::text("hello")], StopReason::EndTurn),
        (
            vec![
                ContentBlock::Thinking {
                    text: "think".into(),
                    signature: None,
                },
                ContentBlock::text("let me add"),
                ContentBlock::tool_use("c1", "add", json!({"x": 1})),
                ContentBlock::ToolUse {
                    id: "c2".into(),
                    name: "add".into(),
                    input: serde_json::Value::Null,
                    raw_input: Some("{bad".into()),
                    signature: None,
                },
            ],
            StopReason::ToolUse,
        ),
        (vec![ContentBlock::text("cut")], StopReason::MaxTokens),
    ];
    for (blocks, reason) in cases {
        let outcome = finished(blocks.clone(), Some(reason.clone()), usage);
        let value = body(&meta(), &outcome);
        let mut decoder = ClientChat::default().decoder();
        let mut events = VecDeque::new();
        decoder
            .body(&serde_json::to_vec(&value).unwrap(), &mut events)
            .unwrap();
        let mut assembler = MessageAssembler::new();
        events.iter().for_each(|e| assembler.apply(e));
        match assembler.finish() {
            StreamOutcome::Finished {
                message,
                stop_reason,
                usage: got,
            } => {
                assert_eq!(message.blocks, blocks, "{value}");
                assert_eq!(stop_reason, Some(reason));
                assert_eq!(got, usage);
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn the_body_has_openai_shape() {
    let outcome = finished(
        vec![ContentBlock::tool_use("c1", "add", json!({}))],
        Some(StopReason::EndTurn),
        Usage {
            input_tokens: Some(5),
            output_tokens: Some(1),
            ..Usage::default()
        },
    );
    let value = body(&meta(), &outcome);
    assert_eq!(value["id"], "chatcmpl-9");
    assert_eq!(value["object"], "chat.completion");
    assert_eq!(value["created"], 42);
    assert_eq!(value["model"], "coder");
    let choice = &value["choices"][0];
    assert_eq!(choice["index"], 0);
    assert!(choice["message"]["content"].is_null());
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(
        choice["message"]["tool_calls"][0]["function"]["arguments"],
        "{}"
    );
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(
        value["usage"],
        json!({"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6})
    );
    let empty = body(&meta(), &finished(vec![], None, Usage::default()));
    assert_eq!(empty["choices"][0]["message"]["content"], "");
    assert_eq!(empty["choices"][0]["finish_reason"], "stop");
    assert_eq!(empty["usage"], json!({}));
}

#[test]
fn finish_reasons_and_usage_follow_openai() {
    let reasons = [
        (Some(StopReason::EndTurn), false, "stop"),
        (Some(StopReason::MaxTokens), false, "length"),
        (Some(StopReason::MaxTokens), true, "length"),
        (Some(StopReason::ToolUse), true, "tool_calls"),
        (Some(StopReason::StopSequence), false, "stop"),
        (Some(StopReason::Refusal), false, "content_filter"),
        (Some(StopReason::PauseTurn), false, "stop"),
        (Some(StopReason::Other("x".into())), false, "stop"),
        (Some(StopReason::EndTurn), true, "tool_calls"),
        (None, false, "stop"),
    ];
    for (reason, calls, want) in reasons {
        assert_eq!(
            finish_reason(reason.as_ref(), calls),
            want,
            "{reason:?} {calls}"
        );
    }
    // The server's usage counts the whole prompt in `input_tokens` (crate::usage), as
    // OpenAI does.
    let anthropic = Usage {
        input_tokens: Some(113),
        output_tokens: Some(2),
        cached_input_tokens: Some(100),
        cache_creation_input_tokens: Some(10),
        reasoning_tokens: None,
    };
    assert_eq!(
        usage_json(&anthropic),
        json!({"prompt_tokens": 113, "completion_tokens": 2, "total_tokens": 115,
            "prompt_tokens_details": {"cached_tokens": 100}})
    );
    let openai = Usage {
        input_tokens: Some(300),
        cached_input_tokens: Some(100),
        reasoning_tokens: Some(9),
        ..Usage::default()
    };
    assert_eq!(
        usage_json(&openai),
        json!({"prompt_tokens": 300, "prompt_tokens_details": {"cached_tokens": 100},
            "completion_tokens_details": {"reasoning_tokens": 9}})
    );
}
