//! A finished turn as a Responses `response` object, the whole body of a non-streamed
//! reply, the payload of a stream's `response.completed`, and what a stored response reads
//! back as (`GET /v1/responses/{id}`, through [`response_object`]).
//!
//! Promises:
//! - `output` holds the assistant messages' blocks as items, in order: text in a row ->
//!   one `message` item (`output_text`), thinking -> a `reasoning` item with its text as one
//!   `summary_text` and its signature as `encrypted_content` (redacted thinking: its data as
//!   `encrypted_content`), a tool call -> a `function_call` item whose `call_id` is the
//!   model's call id and `arguments` the text it sent; other roles and blocks are not output;
//! - item ids are derived from the response id and the item's place (`msg_<id>_<n>`,
//!   `rs_…`, `fc_…`), so the stream, the body and a stored read-back agree;
//! - `status` is `incomplete` with `incomplete_details.reason` `max_output_tokens` when the
//!   model ran out of tokens, `content_filter` when it refused, else `completed`;
//! - `usage` has every count OpenAI sends (an unreported count is 0, `total_tokens` is input
//!   plus output);
//! - the request-echo fields OpenAI's clients expect (`tools`, `tool_choice`, `metadata` …)
//!   hold neutral values; the server may overwrite them with what the request said.

use qore_core::{ContentBlock, Message, Role, StopReason, StreamOutcome, Usage};
use serde_json::{json, Value};

use super::error::failed_error;
use crate::{ReplyMeta, ServeError};

/// The id of the output item at `index` of response `response_id` (`msg`, `rs`, `fc`).
pub fn item_id(prefix: &str, response_id: &str, index: usize) -> String {
    let base = response_id.strip_prefix("resp_").unwrap_or(response_id);
    format!("{prefix}_{base}_{index}")
}

/// The response id and output index an id made by [`item_id`] names (`None` for others).
pub fn item_origin(item_id: &str) -> Option<(String, usize)> {
    let (_, rest) = item_id.split_once('_')?;
    let (base, index) = rest.rsplit_once('_')?;
    Some((format!("resp_{base}"), index.parse().ok()?))
}

pub fn output_text_part(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
}

/// A `message` item; a finished one holds its text as one `output_text` part.
pub fn message_item(id: &str, text: &str, done: bool) -> Value {
    let content = match done {
        true => json!([output_text_part(text)]),
        false => json!([]),
    };
    json!({"id": id, "type": "message", "status": status(done), "role": "assistant",
        "content": content})
}

/// A `reasoning` item: the text as one summary part, the signature as encrypted content.
pub fn reasoning_item(id: &str, text: &str, encrypted: Option<&str>) -> Value {
    let summary = match text {
        "" => json!([]),
        text => json!([{"type": "summary_text", "text": text}]),
    };
    let mut item = json!({"id": id, "type": "reasoning", "summary": summary});
    if let Some(encrypted) = encrypted {
        item["encrypted_content"] = json!(encrypted);
    }
    item
}

pub fn call_item(id: &str, call_id: &str, name: &str, arguments: &str, done: bool) -> Value {
    json!({"id": id, "type": "function_call", "status": status(done), "call_id": call_id,
        "name": name, "arguments": arguments})
}

fn status(done: bool) -> &'static str {
    match done {
        true => "completed",
        false => "in_progress",
    }
}

/// The arguments of a tool call as the model sent them.
pub fn call_arguments(input: &Value, raw_input: Option<&str>) -> String {
    match raw_input {
        Some(raw) => raw.to_owned(),
        None => input.to_string(),
    }
}

/// The output items of the assistant messages in `messages`.
pub fn output_items(response_id: &str, messages: &[Message]) -> Vec<Value> {
    let mut items = Vec::new();
    let mut text = String::new();
    let flush = |text: &mut String, items: &mut Vec<Value>| {
        if !text.is_empty() {
            let id = item_id("msg", response_id, items.len());
            items.push(message_item(&id, &std::mem::take(text), true));
        }
    };
    for message in messages.iter().filter(|m| m.role == Role::Assistant) {
        for block in &message.blocks {
            match block {
                ContentBlock::Text { text: t, .. } => text.push_str(t),
                ContentBlock::Thinking { text: t, signature } => {
                    flush(&mut text, &mut items);
                    let id = item_id("rs", response_id, items.len());
                    items.push(reasoning_item(&id, t, signature.as_deref()));
                }
                ContentBlock::RedactedThinking { data } => {
                    flush(&mut text, &mut items);
                    let id = item_id("rs", response_id, items.len());
                    items.push(reasoning_item(&id, "", Some(data)));
                }
                ContentBlock::ToolUse {
                    id: call_id,
                    name,
                    input,
                    raw_input,
                    ..
                } => {
                    flush(&mut text, &mut items);
                    let id = item_id("fc", response_id, items.len());
                    let arguments = call_arguments(input, raw_input.as_deref());
                    items.push(call_item(&id, call_id, name, &arguments, true));
                }
                ContentBlock::Image(_) | ContentBlock::ToolResult { .. } => {}
            }
        }
        flush(&mut text, &mut items);
    }
    items
}

/// The `status` and `incomplete_details.reason` a stop reason stands for.
pub fn ending(stop: Option<&StopReason>) -> (&'static str, Option<&'static str>) {
    match stop {
        Some(StopReason::MaxTokens) => ("incomplete", Some("max_output_tokens")),
        Some(StopReason::Refusal) => ("incomplete", Some("content_filter")),
        _ => ("completed", None),
    }
}

pub fn usage_json(usage: &Usage) -> Value {
    let input = usage.input_tokens.unwrap_or(0);
    let output = usage.output_tokens.unwrap_or(0);
    json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": usage.cached_input_tokens.unwrap_or(0)},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens.unwrap_or(0)},
        "total_tokens": input.saturating_add(output),
    })
}

/// The `response` object around `output` (`usage` and `error` as JSON, `null` when none).
pub fn envelope(
    meta: &ReplyMeta,
    status: &str,
    incomplete: Option<&str>,
    output: Vec<Value>,
    usage: Value,
    error: Value,
) -> Value {
    json!({
        "id": meta.id,
        "object": "response",
        "created_at": meta.created,
        "status": status,
        "error": error,
        "incomplete_details": incomplete.map(|reason| json!({"reason": reason})),
        "instructions": null,
        "max_output_tokens": null,
        "model": meta.model,
        "output": output,
        "parallel_tool_calls": true,
        "previous_response_id": null,
        "reasoning": {"effort": null, "summary": null},
        "temperature": null,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": null,
        "truncation": "disabled",
        "usage": usage,
        "metadata": {},
    })
}

/// The response object of a finished turn whose assistant messages are `messages`.
pub fn response_object(
    meta: &ReplyMeta,
    messages: &[Message],
    usage: &Usage,
    stop: Option<&StopReason>,
) -> Value {
    let (status, incomplete) = ending(stop);
    let output = output_items(&meta.id, messages);
    envelope(
        meta,
        status,
        incomplete,
        output,
        usage_json(usage),
        Value::Null,
    )
}

/// The body of a non-streamed reply ([`crate::dialect::Dialect::response`]); an outcome
/// that is not finished (never passed by the server) reads as a failed response.
pub fn from_outcome(meta: &ReplyMeta, outcome: &StreamOutcome) -> Value {
    match outcome {
        StreamOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => response_object(
            meta,
            std::slice::from_ref(message),
            usage,
            stop_reason.as_ref(),
        ),
        StreamOutcome::Failed { error, usage } => {
            let error = failed_error(&ServeError::from_upstream(error));
            envelope(meta, "failed", None, Vec::new(), usage_json(usage), error)
        }
        StreamOutcome::Cancelled { usage } => envelope(
            meta,
            "cancelled",
            None,
            Vec::new(),
            usage_json(usage),
            Value::Null,
        ),
    }
}
