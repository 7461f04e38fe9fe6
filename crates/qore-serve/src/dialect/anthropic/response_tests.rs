use std::collections::VecDeque;

use super::*;
use qore_client::protocols::anthropic::Anthropic;
use qore_client::Protocol;
use qore_core::{ErrorInfo, MessageAssembler, ProviderDetail, Role};

fn meta() -> ReplyMeta {
    ReplyMeta {
        id: "msg_01BODY".into(),
        model: "claude-x".into(),
        created: 0,
        include_usage: false,
    }
}

/// What qore-client's Anthropic decoder folds a whole body into.
fn client_read(body: &Value) -> StreamOutcome {
    let mut decoder = Anthropic::default().decoder();
    let mut events = VecDeque::new();
    decoder
        .body(body.to_string().as_bytes(), &mut events)
        .unwrap();
    let mut assembler = MessageAssembler::new();
    events.iter().for_each(|e| assembler.apply(e));
    // Back in the server's sense: the whole prompt in `input_tokens`.
    match assembler.finish() {
        StreamOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => StreamOutcome::Finished {
            message,
            stop_reason,
            usage: qore_session::tokens::whole_prompt(
                &usage,
                &qore_client::protocols::anthropic::Anthropic::default(),
            ),
        },
        other => other,
    }
}

fn finished(blocks: Vec<ContentBlock>, stop: Option<StopReason>, usage: Usage) -> StreamOutcome {
    StreamOutcome::Finished {
        message: Message::new(Role::Assistant, blocks),
        stop_reason: stop,
        usage,
    }
}

#[test]
fn bodies_decode_through_the_client_to_the_same_turn() {
    let usage = Usage {
        input_tokens: Some(11),
        output_tokens: Some(22),
        cached_input_tokens: Some(5),
        cache_creation_input_tokens: Some(6),
        ..Usage::default()
    };
    let signed = ContentBlock::Thinking {
        text: "hmm".into(),
        signature: Some("sig==".into()),
    };
    let table: Vec<(&str, Vec<ContentBlock>, StopReason)> = vec![
        (
            "text",
            vec![ContentBlock::text("hello")],
            StopReason::EndTurn,
        ),
        (
            "thinking and text",
            vec![signed.clone(), ContentBlock::text("42")],
            StopReason::MaxTokens,
        ),
        (
            "redacted",
            vec![
                ContentBlock::RedactedThinking { data: "enc".into() },
                ContentBlock::text("ok"),
            ],
            StopReason::Refusal,
        ),
        (
            "tool calls",
            vec![
                signed,
                ContentBlock::text("calling"),
                ContentBlock::tool_use("toolu_1", "add", json!({"x": 1})),
                ContentBlock::tool_use("toolu_2", "noop", json!({})),
            ],
            StopReason::ToolUse,
        ),
        (
            "pause",
            vec![ContentBlock::text("a")],
            StopReason::PauseTurn,
        ),
        (
            "stop sequence",
            vec![ContentBlock::text("a")],
            StopReason::StopSequence,
        ),
    ];
    for (name, blocks, stop) in table {
        let outcome = finished(blocks, Some(stop), usage);
        let body = body(&meta(), &outcome);
        assert_eq!(body["id"], "msg_01BODY");
        assert_eq!(body["type"], "message");
        assert_eq!(body["role"], "assistant");
        assert_eq!(body["model"], "claude-x");
        assert!(body["stop_sequence"].is_null());
        assert_eq!(client_read(&body), outcome, "{name}: {body}");
    }
}

#[test]
fn stop_reasons_and_usage_in_anthropics_words() {
    let table = [
        (Some(StopReason::EndTurn), "end_turn"),
        (Some(StopReason::MaxTokens), "max_tokens"),
        (Some(StopReason::ToolUse), "tool_use"),
        (Some(StopReason::StopSequence), "stop_sequence"),
        (Some(StopReason::Refusal), "refusal"),
        (Some(StopReason::PauseTurn), "pause_turn"),
        (Some(StopReason::Other("weird".into())), "weird"),
        (None, "end_turn"),
    ];
    for (stop, name) in table {
        let outcome = finished(vec![ContentBlock::text("a")], stop, Usage::default());
        let body = body(&meta(), &outcome);
        assert_eq!(body["stop_reason"], name);
        assert_eq!(
            body["usage"],
            json!({"input_tokens": 0, "output_tokens": 0})
        );
    }
    let call = ContentBlock::tool_use("t", "add", json!({}));
    let body = body(&meta(), &finished(vec![call], None, Usage::default()));
    assert_eq!(body["stop_reason"], "tool_use");
    // The server's usage counts the whole prompt (8); Anthropic's input is what is left
    // beside the cache reads and writes.
    let usage = Usage {
        input_tokens: Some(8),
        output_tokens: Some(2),
        cached_input_tokens: Some(3),
        cache_creation_input_tokens: Some(4),
        reasoning_tokens: Some(5),
    };
    assert_eq!(
        usage_json(&usage, true),
        json!({"input_tokens": 1, "output_tokens": 2, "cache_read_input_tokens": 3,
            "cache_creation_input_tokens": 4})
    );
}

#[test]
fn unsigned_thinking_and_arguments_that_are_not_an_object_still_fit_the_wire() {
    let blocks = vec![
        ContentBlock::Thinking {
            text: "from another provider".into(),
            signature: None,
        },
        ContentBlock::ToolUse {
            id: "t".into(),
            name: "add".into(),
            input: Value::Null,
            raw_input: Some("{oops".into()),
            signature: None,
        },
        ContentBlock::tool_result("t", "not the assistant's", false),
    ];
    let body = body(&meta(), &finished(blocks, None, Usage::default()));
    assert_eq!(
        body["content"],
        json!([
            {"type": "thinking", "thinking": "from another provider", "signature": ""},
            {"type": "tool_use", "id": "t", "name": "add", "input": {"raw_input": "{oops"}},
        ])
    );
}

#[test]
fn a_failed_outcome_is_an_error_envelope() {
    let error = ErrorInfo::provider("slow down").with_detail(ProviderDetail {
        status: Some(429),
        error_type: None,
        body: None,
    });
    let outcome = StreamOutcome::Failed {
        error,
        usage: Usage::default(),
    };
    assert_eq!(
        body(&meta(), &outcome),
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
    );
}
