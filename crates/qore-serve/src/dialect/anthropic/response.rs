//! A finished turn as one Anthropic Messages body: `{"id", "type": "message", "role":
//! "assistant", "model", "content": [...], "stop_reason", "stop_sequence", "usage"}`.
//!
//! Promises:
//! - content blocks in the message's order: `text`, `thinking` with its `signature` (`""`
//!   when the upstream gave none), `redacted_thinking` with its `data`, `tool_use` with its
//!   input object (arguments that were not a JSON object go as `{"raw_input": "<text>"}`,
//!   the wire takes objects only); images and tool results are not the assistant's and
//!   are left out;
//! - stop reasons in Anthropic's words (`end_turn`, `max_tokens`, `tool_use`,
//!   `stop_sequence`, `refusal`, `pause_turn`, another verbatim); with none reported,
//!   `tool_use` when the message calls a tool, else `end_turn`; `stop_sequence` is `null`
//!   (no wire says which sequence matched);
//! - usage: `input_tokens` and `output_tokens` (0 when not reported), and
//!   `cache_read_input_tokens` / `cache_creation_input_tokens` when reported;
//! - the id is the reply's (`msg_…`), the model the one the caller named.
//!
//! The helpers for stop reasons and usage are shared with `stream.rs`.

use qore_core::{ContentBlock, Message, StopReason, StreamOutcome, Usage};
use serde_json::{json, Map, Value};

use super::error;
use crate::{ReplyMeta, ServeError};

/// The body of a finished turn; a failed one (never passed, see
/// [`crate::dialect::Dialect::response`]) is its error envelope, a cancelled one an empty
/// message.
pub fn body(meta: &ReplyMeta, outcome: &StreamOutcome) -> Value {
    let (blocks, stop, usage): (&[ContentBlock], _, _) = match outcome {
        StreamOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => (
            &message.blocks,
            stop_reason_name(stop_reason.as_ref(), message),
            usage,
        ),
        StreamOutcome::Failed { error, .. } => {
            return error::body(&ServeError::from_upstream(error))
        }
        StreamOutcome::Cancelled { usage } => (&[], "end_turn".into(), usage),
    };
    let content: Vec<Value> = blocks.iter().filter_map(content_block).collect();
    json!({
        "id": meta.id,
        "type": "message",
        "role": "assistant",
        "model": meta.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": Value::Null,
        "usage": usage_json(usage, true),
    })
}

/// One content block of the assistant's message, `None` for what it cannot hold.
fn content_block(block: &ContentBlock) -> Option<Value> {
    Some(match block {
        ContentBlock::Text { text, .. } => json!({"type": "text", "text": text}),
        ContentBlock::Thinking { text, signature } => json!({
            "type": "thinking",
            "thinking": text,
            "signature": signature.as_deref().unwrap_or(""),
        }),
        ContentBlock::RedactedThinking { data } => {
            json!({"type": "redacted_thinking", "data": data})
        }
        ContentBlock::ToolUse {
            id,
            name,
            input,
            raw_input,
            ..
        } => json!({
            "type": "tool_use",
            "id": id,
            "name": name,
            "input": tool_input(input, raw_input.as_deref()),
        }),
        ContentBlock::Image(_) | ContentBlock::ToolResult { .. } => return None,
    })
}

/// A tool call's input as the wire takes it: always an object.
pub(super) fn tool_input(input: &Value, raw_input: Option<&str>) -> Value {
    match (input, raw_input) {
        (Value::Object(_), _) => input.clone(),
        (_, Some(raw)) => json!({ "raw_input": raw }),
        (Value::Null, None) => json!({}),
        (other, None) => json!({ "raw_input": other.to_string() }),
    }
}

/// Anthropic's `stop_reason` for `reason`; with none, `tool_use` when `message` calls a
/// tool, else `end_turn`.
pub(super) fn stop_reason_name(reason: Option<&StopReason>, message: &Message) -> String {
    match reason {
        Some(reason) => wire_stop_reason(reason).to_owned(),
        None if (message.blocks.iter()).any(|b| matches!(b, ContentBlock::ToolUse { .. })) => {
            "tool_use".to_owned()
        }
        None => "end_turn".to_owned(),
    }
}

/// Anthropic's word for `reason`.
pub(super) fn wire_stop_reason(reason: &StopReason) -> &str {
    match reason {
        StopReason::EndTurn => "end_turn",
        StopReason::MaxTokens => "max_tokens",
        StopReason::ToolUse => "tool_use",
        StopReason::StopSequence => "stop_sequence",
        StopReason::Refusal => "refusal",
        StopReason::PauseTurn => "pause_turn",
        StopReason::Other(other) => other,
    }
}

/// Usage in Anthropic's words. `with_input`: `input_tokens` always (0 when unknown);
/// without, only when known (a `message_delta`'s usage). `output_tokens` is always there.
pub(super) fn usage_json(usage: &Usage, with_input: bool) -> Value {
    let mut out = Map::new();
    // The server's usage counts the whole prompt (`crate::usage`); Anthropic reports cache
    // reads and writes beside the input.
    let beside =
        usage.cached_input_tokens.unwrap_or(0) + usage.cache_creation_input_tokens.unwrap_or(0);
    match usage.input_tokens.map(|n| n.saturating_sub(beside)) {
        Some(n) => {
            out.insert("input_tokens".into(), n.into());
        }
        None if with_input => {
            out.insert("input_tokens".into(), 0.into());
        }
        None => {}
    }
    if let Some(n) = usage.cache_creation_input_tokens {
        out.insert("cache_creation_input_tokens".into(), n.into());
    }
    if let Some(n) = usage.cached_input_tokens {
        out.insert("cache_read_input_tokens".into(), n.into());
    }
    out.insert(
        "output_tokens".into(),
        usage.output_tokens.unwrap_or(0).into(),
    );
    Value::Object(out)
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
