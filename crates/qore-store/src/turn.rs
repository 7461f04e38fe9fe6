//! What one turn holds, and the rule that keeps stored history well-formed.
//!
//! Promises: [`TurnRecord::checked_messages`] is the only way a turn's messages reach the
//! database. It drops the partial assistant message of a failed or cancelled turn, then
//! refuses (with the reason) a turn where a tool call lacks its result in the next message, a
//! result answers no call, the opening message is not a user message, a reply is a system
//! message, or a finished turn does not end with the assistant's answer; it refuses, too,
//! file changes that cannot be stored as given (see the `file_changes` module).

use std::collections::HashSet;
use std::time::SystemTime;

use qore_core::{ContentBlock, Message, Role, Usage};
use serde::{Deserialize, Serialize};

use crate::file_changes::{self, FileChange};
use crate::StoreError;

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    Finished,
    Failed,
    Cancelled,
}

impl TurnStatus {
    /// The word stored in `turns.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Finished => "finished",
            TurnStatus::Failed => "failed",
            TurnStatus::Cancelled => "cancelled",
        }
    }
}

/// The status whose stored word ([`TurnStatus::as_str`]) this is.
pub(crate) fn status_of(word: &str) -> Option<TurnStatus> {
    [
        TurnStatus::Finished,
        TurnStatus::Failed,
        TurnStatus::Cancelled,
    ]
    .into_iter()
    .find(|status| status.as_str() == word)
}

/// One whole turn: the user's message, what followed it, and how it went.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRecord {
    /// The message that opened the turn (role user).
    pub user: Message,
    /// Assistant messages and the user-side tool results between them, in order.
    pub replies: Vec<Message>,
    pub usage: Usage,
    pub model: Option<String>,
    pub agent: Option<String>,
    pub started_at: SystemTime,
    pub finished_at: SystemTime,
    pub status: TurnStatus,
    /// The files the turn's tools changed, with their prior content (for undo); written in
    /// the turn's transaction.
    pub file_changes: Vec<FileChange>,
}

impl TurnRecord {
    /// The messages to store, in order, or why the turn is refused.
    pub fn checked_messages(&self) -> Result<Vec<&Message>, StoreError> {
        let mut replies: &[Message] = &self.replies;
        if self.status != TurnStatus::Finished {
            if let Some((last, rest)) = replies.split_last() {
                if last.role == Role::Assistant {
                    replies = rest;
                }
            }
        }
        file_changes::check(&self.file_changes)?;
        let messages: Vec<&Message> = std::iter::once(&self.user).chain(replies).collect();
        check_well_formed(&messages)?;
        if self.status == TurnStatus::Finished
            && messages.last().map(|m| m.role) != Some(Role::Assistant)
        {
            return Err(malformed(
                "a finished turn must end with an assistant message",
            ));
        }
        Ok(messages)
    }
}

fn malformed(reason: impl Into<String>) -> StoreError {
    StoreError::MalformedTurn(reason.into())
}

/// Check one turn's messages: a user message first, then assistant messages whose tool calls
/// are all answered by the next message (a user message of tool results only), with no result
/// that answers nothing.
pub fn check_well_formed(messages: &[&Message]) -> Result<(), StoreError> {
    let Some((first, rest)) = messages.split_first() else {
        return Err(malformed("a turn has no messages"));
    };
    if first.role != Role::User || has_results(first) {
        return Err(malformed(
            "a turn must open with a user message without tool results",
        ));
    }
    let mut open: HashSet<&str> = HashSet::new();
    for (index, message) in rest.iter().enumerate() {
        let at = index + 1;
        match message.role {
            Role::System => return Err(malformed(format!("message {at} is a system message"))),
            Role::Assistant => {
                if let Some(id) = open.iter().next() {
                    return Err(malformed(format!("tool call '{id}' has no result")));
                }
                for block in &message.blocks {
                    if let ContentBlock::ToolUse { id, .. } = block {
                        if !open.insert(id) {
                            return Err(malformed(format!("tool call id '{id}' is repeated")));
                        }
                    }
                }
            }
            Role::User => {
                if open.is_empty() {
                    return Err(malformed(format!(
                        "message {at} is a user message but no tool call is open"
                    )));
                }
                for block in &message.blocks {
                    match block {
                        ContentBlock::ToolResult { tool_use_id, .. } => {
                            if !open.remove(tool_use_id.as_str()) {
                                return Err(malformed(format!(
                                    "tool result '{tool_use_id}' in message {at} answers no open call"
                                )));
                            }
                        }
                        _ => {
                            return Err(malformed(format!(
                                "message {at} mixes other content into tool results"
                            )))
                        }
                    }
                }
                if let Some(id) = open.iter().next() {
                    return Err(malformed(format!("tool call '{id}' has no result")));
                }
            }
        }
    }
    match open.iter().next() {
        Some(id) => Err(malformed(format!("tool call '{id}' has no result"))),
        None => Ok(()),
    }
}

fn has_results(message: &Message) -> bool {
    (message.blocks.iter()).any(|b| matches!(b, ContentBlock::ToolResult { .. }))
}

/// The title a session gets from its first user message: its first non-blank line, trimmed,
/// at most 80 characters.
pub fn title_of(message: &Message) -> Option<String> {
    let text = message.text();
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(
        line.chars()
            .take(80)
            .collect::<String>()
            .trim_end()
            .to_owned(),
    )
}

#[cfg(test)]
#[path = "turn_tests.rs"]
mod tests;
