//! A finished turn -> one `chat.completion` body, and the pieces the stream shares with it
//! (`finish_reason`, `usage`).
//!
//! Promises: one choice at index 0 whose `message` has the text as `content` (`null` beside
//! tool calls when there is no text), the thinking as `reasoning_content` (DeepSeek's and
//! llama.cpp's field), the tool calls as `tool_calls` (arguments as JSON text, or the raw
//! text the model sent when it was not JSON); `finish_reason` in OpenAI's words; `usage`
//! with `prompt_tokens`, `completion_tokens`, `total_tokens` and the cached and reasoning
//! details, each only where known. `id`, `created` and `model` are the [`ReplyMeta`]'s.

use qore_client::protocols::openai_chat::assistant_message;
use qore_core::{StopReason, StreamOutcome, Usage};
use serde_json::{json, Map, Value};

use crate::ReplyMeta;

/// The whole reply of a finished turn. Another outcome (the server does not pass one)
/// gives an empty message.
pub fn body(meta: &ReplyMeta, outcome: &StreamOutcome) -> Value {
    let (blocks, stop_reason, usage) = match outcome {
        StreamOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => (message.blocks.as_slice(), stop_reason.as_ref(), *usage),
        StreamOutcome::Failed { usage, .. } | StreamOutcome::Cancelled { usage } => {
            (&[][..], None, *usage)
        }
    };
    let mut message = match assistant_message(blocks, true) {
        Value::Object(message) => message,
        _ => Map::new(),
    };
    let calls = message.contains_key("tool_calls");
    // OpenAI answers `null` content beside tool calls without text.
    if calls && message.get("content").is_some_and(|c| c == "") {
        message.insert("content".into(), Value::Null);
    }
    message.insert("refusal".into(), Value::Null);
    let reason = finish_reason(stop_reason, calls);
    json!({
        "id": meta.id,
        "object": "chat.completion",
        "created": meta.created,
        "model": meta.model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": reason,
        }],
        "usage": usage_json(&usage),
    })
}

/// OpenAI's `finish_reason` for how the turn stopped. A turn that made tool calls and
/// stopped for no other named reason is `tool_calls` (some upstreams say "stop" there,
/// and OpenAI's callers look for `tool_calls`).
pub fn finish_reason(reason: Option<&StopReason>, made_calls: bool) -> &'static str {
    match reason {
        Some(StopReason::MaxTokens) => "length",
        Some(StopReason::ToolUse) => "tool_calls",
        Some(StopReason::Refusal) => "content_filter",
        Some(StopReason::StopSequence) if !made_calls => "stop",
        _ if made_calls => "tool_calls",
        _ => "stop",
    }
}

/// `usage` in OpenAI's shape, each count only where known. `prompt_tokens` is the whole
/// input, cache reads and writes included: the sense the server gives every usage
/// (`crate::usage`).
pub fn usage_json(usage: &Usage) -> Value {
    let mut out = Map::new();
    let prompt = usage.input_tokens;
    if let Some(prompt) = prompt {
        out.insert("prompt_tokens".into(), json!(prompt));
    }
    if let Some(completion) = usage.output_tokens {
        out.insert("completion_tokens".into(), json!(completion));
    }
    if let (Some(prompt), Some(completion)) = (prompt, usage.output_tokens) {
        out.insert("total_tokens".into(), json!(prompt + completion));
    }
    if let Some(cached) = usage.cached_input_tokens {
        out.insert(
            "prompt_tokens_details".into(),
            json!({"cached_tokens": cached}),
        );
    }
    if let Some(reasoning) = usage.reasoning_tokens {
        out.insert(
            "completion_tokens_details".into(),
            json!({"reasoning_tokens": reasoning}),
        );
    }
    Value::Object(out)
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
