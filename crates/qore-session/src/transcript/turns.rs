//! A flat conversation (as other tools keep it) cut into qore's turns.
//!
//! Promises: every user message that is not tool results opens a turn; assistant messages
//! and tool results join the open turn, consecutive assistant messages merged into one (as
//! QodeAssist shows them); a turn is `finished` when it ends with the assistant, else
//! `failed` (no answer was recorded). System messages and replies before the first user
//! message cannot be kept: they are counted in the notes.

use std::time::SystemTime;

use qore_core::{ContentBlock, Message, Role, Usage};
use qore_store::{ImportTurn, TurnRecord, TurnStatus};

/// One message of a flat conversation and the usage reported for it, if any.
pub(super) struct FlatMessage {
    pub message: Message,
    pub usage: Option<Usage>,
}

/// Cut `messages` into turns, all timed `at`; notes say what was dropped.
pub(super) fn into_turns(
    messages: Vec<FlatMessage>,
    at: SystemTime,
    notes: &mut Vec<String>,
) -> Vec<ImportTurn> {
    let mut turns: Vec<TurnRecord> = Vec::new();
    let (mut systems, mut orphans) = (0, 0);
    for FlatMessage { message, usage } in messages {
        let opens = message.role == Role::User && !is_results(&message);
        if message.role == Role::System {
            systems += 1;
            continue;
        }
        if opens {
            turns.push(TurnRecord {
                user: message,
                replies: Vec::new(),
                usage: Usage::default(),
                model: None,
                agent: None,
                started_at: at,
                finished_at: at,
                status: TurnStatus::Finished,
                file_changes: Vec::new(),
            });
            continue;
        }
        let Some(turn) = turns.last_mut() else {
            orphans += 1;
            continue;
        };
        if let Some(usage) = &usage {
            turn.usage.merge(usage);
        }
        match turn.replies.last_mut() {
            Some(last) if last.role == Role::Assistant && message.role == Role::Assistant => {
                last.blocks.extend(message.blocks);
            }
            _ => turn.replies.push(message),
        }
    }
    if systems > 0 {
        notes.push(format!("dropped {systems} system message(s)"));
    }
    if orphans > 0 {
        notes.push(format!(
            "dropped {orphans} message(s) before the first user message"
        ));
    }
    (turns.into_iter())
        .map(|mut record| {
            let answered = record.replies.last().map(|m| m.role) == Some(Role::Assistant);
            if !answered {
                record.status = TurnStatus::Failed;
            }
            ImportTurn {
                record,
                undone: false,
            }
        })
        .collect()
}

fn is_results(message: &Message) -> bool {
    !message.blocks.is_empty()
        && (message.blocks.iter()).all(|b| matches!(b, ContentBlock::ToolResult { .. }))
}
