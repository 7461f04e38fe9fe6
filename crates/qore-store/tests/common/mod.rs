//! Turns for the store's tests: a tool round trip with usage, sized as asked.
#![allow(dead_code)]

use std::time::{Duration, UNIX_EPOCH};

use qore_core::{ContentBlock, Message, Role, ToolResultPart, Usage};
use qore_store::{TurnRecord, TurnStatus};

/// Turn `n`: a question, a tool call, its result (`result_len` bytes), the answer.
pub fn tool_turn(n: u64, result_len: usize) -> TurnRecord {
    tool_rounds_turn(n, 1, result_len)
}

/// Turn `n` with `rounds` tool calls one after another, each answered by a result of
/// `result_len` bytes, then the answer: `2 + 2 * rounds` messages.
pub fn tool_rounds_turn(n: u64, rounds: usize, result_len: usize) -> TurnRecord {
    let mut replies = Vec::new();
    for round in 0..rounds {
        let call = format!("call-{n}-{round}");
        replies.push(Message::new(
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
        ));
        replies.push(Message::new(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_use_id: call,
                content: vec![ToolResultPart::Text {
                    text: "r".repeat(result_len),
                }],
                is_error: false,
            }],
        ));
    }
    replies.push(Message::assistant(format!("answer {n}")));
    TurnRecord {
        user: Message::user(format!("question {n}\nsecond line")),
        replies,
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
        file_changes: Vec::new(),
    }
}

/// The messages a stored turn must give back, in order.
pub fn stored_messages(turn: &TurnRecord) -> Vec<Message> {
    std::iter::once(turn.user.clone())
        .chain(turn.replies.iter().cloned())
        .collect()
}

/// A key's hash: 64 lowercase hex digits, `n` repeated.
pub fn hash(n: u8) -> String {
    format!("{n:02x}").repeat(32)
}

/// A key named `name` whose hash is [`hash`]`(n)`, for local models, with a `tpm` limit.
pub fn new_key(name: &str, n: u8) -> qore_store::NewKey {
    qore_store::NewKey {
        name: name.into(),
        hash: hash(n),
        models: vec!["claude-*".into(), "local/*".into()],
        tpm: Some(1000),
        ..qore_store::NewKey::default()
    }
}

/// One request of `key_id` on `day` with `tokens_in` tokens in and 2 out.
pub fn usage_row(day: &str, key_id: &str, tokens_in: u64) -> qore_store::UsageRow {
    qore_store::UsageRow {
        day: day.into(),
        key_id: key_id.into(),
        model: "local/m".into(),
        agent: String::new(),
        requests: 1,
        errors: 0,
        tokens_in,
        tokens_out: 2,
    }
}

/// A file change as a turn records it.
pub fn change(
    path: &str,
    before: Option<&[u8]>,
    after: Option<&str>,
    restorable: bool,
) -> qore_store::FileChange {
    qore_store::FileChange {
        path: path.into(),
        before: before.map(<[u8]>::to_vec),
        after_hash: after.map(str::to_owned),
        restorable,
    }
}
