//! Events -> `chat.completion.chunk` SSE frames, in OpenAI's order.
//!
//! Promises:
//! - the first chunk's delta is `{"role": "assistant", "content": ""}`; text goes out as
//!   `content` deltas, thinking as `reasoning_content` deltas;
//! - each tool call has an `index` (0, 1, … in the order they start); its first delta
//!   carries `id`, `type` and `function.name` with empty `arguments`, the later ones
//!   `function.arguments` pieces only; a call whose arguments never came as deltas gets them
//!   whole when it ends;
//! - a finished turn ends with a chunk holding an empty delta and `finish_reason`, then (when
//!   [`ReplyMeta::include_usage`]) a chunk with `choices: []` and `usage`, then
//!   `data: [DONE]`;
//! - a failed turn ends with `data: {"error": {...}}` in OpenAI's error shape and no
//!   `[DONE]` (OpenAI's SDKs raise `APIError` on it; a client that ignores it still sees a
//!   stream that never finished); a cancelled one ends with nothing more.
//!
//! Every chunk carries the reply's `id`, `object`, `created` and `model`.

use qore_core::{ResponseEvent, StreamOutcome, ToolCallInput};
use serde_json::{json, Value};

use super::{error, response};
use crate::dialect::splice::{self, Fill, Template};
use crate::dialect::{sse, StreamEncoder};
use crate::{ReplyMeta, ServeError};

/// The encoder of one streamed reply.
pub struct ChatEncoder {
    meta: ReplyMeta,
    /// Tool calls started so far, in order (their position is their `index`): the call id
    /// and whether any of its arguments went out.
    calls: Vec<(String, bool)>,
    /// The content delta's frame, made at the first one (see [`splice`]).
    content: Option<Template>,
}

impl ChatEncoder {
    pub fn new(meta: ReplyMeta) -> Self {
        ChatEncoder {
            meta,
            calls: Vec::new(),
            content: None,
        }
    }

    fn chunk(&self, choices: Value) -> Value {
        json!({
            "id": self.meta.id,
            "object": "chat.completion.chunk",
            "created": self.meta.created,
            "model": self.meta.model,
            "choices": choices,
        })
    }

    fn delta(&self, delta: Value, out: &mut Vec<u8>) {
        let choice = json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]);
        sse::frame(out, None, &self.chunk(choice));
    }

    /// A content delta: the same bytes as [`Self::delta`] with `{"content": text}`, from a
    /// template.
    fn content(&mut self, text: &str, out: &mut Vec<u8>) {
        if self.content.is_none() {
            let choice = json!([{"index": 0, "delta": {"content": splice::marker(0)},
                "logprobs": null, "finish_reason": null}]);
            self.content = Template::new(None, &self.chunk(choice), 1);
        }
        match &self.content {
            Some(template) => template.write(out, &[Fill::Text(text)]),
            None => self.delta(json!({"content": text}), out),
        }
    }

    fn arguments(&self, index: usize, arguments: &str, out: &mut Vec<u8>) {
        let call = json!({"index": index, "function": {"arguments": arguments}});
        self.delta(json!({"tool_calls": [call]}), out);
    }
}

impl StreamEncoder for ChatEncoder {
    fn start(&mut self, out: &mut Vec<u8>) {
        self.delta(json!({"role": "assistant", "content": ""}), out);
    }

    fn event(&mut self, event: &ResponseEvent, out: &mut Vec<u8>) {
        match event {
            ResponseEvent::TextDelta { text } if !text.is_empty() => self.content(text, out),
            ResponseEvent::ThinkingDelta { text } if !text.is_empty() => {
                self.delta(json!({"reasoning_content": text.as_str()}), out)
            }
            ResponseEvent::ToolCallStart { id, name } => {
                let index = self.calls.len();
                self.calls.push((id.clone(), false));
                let call = json!({"index": index, "id": id, "type": "function",
                    "function": {"name": name, "arguments": ""}});
                self.delta(json!({"tool_calls": [call]}), out);
            }
            ResponseEvent::ToolCallArgsDelta { id, delta } if !delta.is_empty() => {
                if let Some(index) = self.calls.iter().rposition(|(c, _)| c == id.as_str()) {
                    self.calls[index].1 = true;
                    self.arguments(index, delta, out);
                }
            }
            ResponseEvent::ToolCallEnd { id, input } => {
                let Some(index) = self.calls.iter().rposition(|(c, _)| c == id) else {
                    return;
                };
                if self.calls[index].1 {
                    return;
                }
                self.calls[index].1 = true;
                let arguments = match input {
                    ToolCallInput::Parsed(value) => value.to_string(),
                    ToolCallInput::Invalid(err) => err.raw.clone(),
                };
                self.arguments(index, &arguments, out);
            }
            // Usage and the stop reason go out at the end (the outcome has both); the rest
            // has no place on this wire.
            _ => {}
        }
    }

    fn finish(&mut self, outcome: &StreamOutcome, error: Option<&ServeError>, out: &mut Vec<u8>) {
        let calls = !self.calls.is_empty();
        let finish = |reason: &str| {
            let choice = json!([{"index": 0, "delta": {}, "logprobs": null,
                "finish_reason": reason}]);
            self.chunk(choice)
        };
        let usage = self.meta.include_usage.then(|| self.chunk(json!([])));
        write_end(out, outcome, error, calls, finish, usage);
    }
}

/// The end every OpenAI-style stream shares: on a finished turn the chunk `finish` makes
/// for its finish reason, then (when asked: `usage` is the caller's empty-choices chunk)
/// the usage chunk, then `[DONE]`; on a failed one the error chunk (no `[DONE]`); on a
/// cancelled one nothing.
pub(crate) fn write_end(
    out: &mut Vec<u8>,
    outcome: &StreamOutcome,
    error: Option<&ServeError>,
    calls: bool,
    finish: impl FnOnce(&str) -> Value,
    usage: Option<Value>,
) {
    match outcome {
        StreamOutcome::Finished {
            stop_reason,
            usage: counts,
            ..
        } => {
            let reason = response::finish_reason(stop_reason.as_ref(), calls);
            sse::frame(out, None, &finish(reason));
            if let Some(mut chunk) = usage {
                chunk["usage"] = response::usage_json(counts);
                sse::frame(out, None, &chunk);
            }
            sse::raw(out, "[DONE]");
        }
        StreamOutcome::Failed { error: info, .. } => {
            let error = match error {
                Some(error) => error.clone(),
                None => ServeError::from_upstream(info),
            };
            sse::frame(out, None, &json!({"error": error::object(&error)}));
        }
        StreamOutcome::Cancelled { .. } => {}
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
