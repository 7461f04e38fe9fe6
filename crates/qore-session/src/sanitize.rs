//! Sanitizing history before a send: what the model is sent is always well-formed, whatever
//! history holds (an imported transcript, a turn cut short, an earlier failed turn).
//!
//! Promises ([`sanitize`]; history itself is never changed, the result is a view):
//! - a tool call without its result in the next message is dropped, and so is a result that
//!   answers no call of the message before. Dropping, not answering "not run": the call may
//!   have run before the process died (a file written), so a made-up result could lie to
//!   the model, where a missing call only loses what the model meant to do;
//! - thinking without a signature is dropped where the wire needs one to accept thinking
//!   back ([`Wire::thinking_needs_signature`]: Anthropic); signed and redacted thinking stay;
//! - a message left empty is dropped; messages of the same role in a row (a failed turn's
//!   unanswered user message, then the next one) are merged into one, in order, so the
//!   earlier words are kept and no wire sees two user messages in a row;
//! - nothing to change: the history is borrowed, not copied.
//!
//! [`settle_turn`] applies the same rule to a turn before it is kept: a turn's last
//! assistant message has nothing after it, so its tool calls (made while no tools were
//! offered) are dropped; they never ran, and the store keeps only well-formed turns.

use std::borrow::Cow;
use std::collections::HashSet;

use qore_client::Protocol;
use qore_core::{ContentBlock, History, Message, Role};

/// What the wire requires of history.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wire {
    /// Thinking sent back must carry its signature (Anthropic).
    pub thinking_needs_signature: bool,
}

impl Wire {
    /// The requirements of `protocol`.
    pub fn of(protocol: &dyn Protocol) -> Wire {
        Wire {
            thinking_needs_signature: protocol.thinking_needs_signature(),
        }
    }
}

/// History as it can be sent on `wire` (see the module doc).
pub fn sanitize<'h>(history: &'h History, wire: Wire) -> Cow<'h, History> {
    let messages = history.messages();
    let mut changed = false;
    // Blocks are borrowed while deciding; only a history that changes is copied.
    let mut out: Vec<(Role, Vec<&ContentBlock>)> = Vec::with_capacity(messages.len());
    for (index, message) in messages.iter().enumerate() {
        let answered = answered_ids(messages.get(index + 1));
        let asked = asked_ids(index.checked_sub(1).map(|i| &messages[i]));
        let keep = |block: &ContentBlock| match block {
            ContentBlock::Thinking { signature, .. } => {
                signature.is_some() || !wire.thinking_needs_signature
            }
            ContentBlock::ToolUse { id, .. } => {
                message.role == Role::Assistant && answered.contains(id.as_str())
            }
            ContentBlock::ToolResult { tool_use_id, .. } => {
                message.role == Role::User && asked.contains(tool_use_id.as_str())
            }
            _ => true,
        };
        let blocks: Vec<&ContentBlock> = message.blocks.iter().filter(|b| keep(b)).collect();
        if blocks.len() != message.blocks.len() {
            changed = true;
        }
        if blocks.is_empty() {
            changed = true;
            continue;
        }
        match out.last_mut() {
            Some((role, last)) if *role == message.role && message.role != Role::System => {
                changed = true;
                last.extend(blocks);
            }
            _ => out.push((message.role, blocks)),
        }
    }
    match changed {
        true => Cow::Owned(History::from(
            (out.into_iter())
                .map(|(role, blocks)| Message::new(role, blocks.into_iter().cloned().collect()))
                .collect::<Vec<_>>(),
        )),
        false => Cow::Borrowed(history),
    }
}

/// Drop the tool calls of a turn's last message when it is the assistant's: nothing
/// answers them (see the module doc).
pub fn settle_turn(replies: &mut [Message]) {
    if let Some(last) = replies.last_mut().filter(|m| m.role == Role::Assistant) {
        (last.blocks).retain(|b| !matches!(b, ContentBlock::ToolUse { .. }));
    }
}

/// The ids of the tool results in `next` when it is a user message.
fn answered_ids(next: Option<&Message>) -> HashSet<&str> {
    ids(next, Role::User, |block| match block {
        ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id),
        _ => None,
    })
}

/// The ids of the tool calls in `previous` when it is an assistant message.
fn asked_ids(previous: Option<&Message>) -> HashSet<&str> {
    ids(previous, Role::Assistant, |block| match block {
        ContentBlock::ToolUse { id, .. } => Some(id),
        _ => None,
    })
}

/// The ids `pick` finds in the blocks of `message` when it has `role`.
fn ids(
    message: Option<&Message>,
    role: Role,
    pick: fn(&ContentBlock) -> Option<&String>,
) -> HashSet<&str> {
    (message.filter(|m| m.role == role).into_iter())
        .flat_map(|m| &m.blocks)
        .filter_map(|block| pick(block).map(String::as_str))
        .collect()
}

#[cfg(test)]
#[path = "sanitize_tests.rs"]
mod tests;
