//! Turns for the store's tests: a tool round trip with usage, sized as asked.
#![allow(dead_code)]

use std::time::{Duration, UNIX_EPOCH};

use qore_core::{ContentBlock, Message, Role, ToolResultPart, Usage};
use qore_store::{TurnRecord, TurnStatus};

/// Turn `n`: a question, a tool call, its result (`result_len` bytes), the answer.
pub fn tool_turn(n: u64, result_len: usize) -> TurnRecord {
    let call = format!("call-{n}");
    TurnRecord {
        user: Message::user(format!("question {n}\nsecond line")),
        replies: vec![
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::Thinking {
                        text: "let me look".into(),
                        signature: Some(format!("sig-{n}")),
                    },
                    ContentBlock::ToolUse {
                        id: call.clone(),
                        name: "read_file".into(),
                        input: serde_json::json!({"path": format!("f{n}.rs")}),
                        raw_input: None,
                        signature: None,
                    },
                ],
            ),
            Message::new(
                Role::User,
                vec![ContentBlock::ToolResult {
                    tool_use_id: call,
                    content: vec![ToolResultPart::Text {
                        text: "r".repeat(result_len),
                    }],
                    is_error: false,
                }],
            ),
            Message::assistant(format!("answer {n}")),
        ],
        usage: Usage {
            input_tokens: Some(100 + n),
            output_tokens: Some(n),
            ..Usage::default()
        },
        model: Some("m-1".into()),
        agent: Some("coder".into()),
        started_at: UNIX_EPOCH + Duration::from_secs(1_700_000_000 + n),
        finished_at: UNIX_EPOCH + Duration::from_secs(1_700_000_001 + n),
        status: TurnStatus::Finished,
    }
}

/// The messages a stored turn must give back, in order.
pub fn stored_messages(turn: &TurnRecord) -> Vec<Message> {
    std::iter::once(turn.user.clone())
        .chain(turn.replies.iter().cloned())
        .collect()
}
