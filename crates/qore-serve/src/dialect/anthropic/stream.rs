//! One streamed reply as Anthropic Messages SSE: `message_start`, then content blocks
//! (`content_block_start`, `content_block_delta`, `content_block_stop`), then
//! `message_delta` and `message_stop`; each frame with its `event:` name.
//!
//! Promises:
//! - `message_start` is written at the first event after the upstream's own start (a usage
//!   report or content; at the end of a turn with neither), so the input tokens an upstream
//!   reports at its start (Anthropic) are in its usage; unknown, they are 0 there and come
//!   in `message_delta`;
//! - block indexes count from 0 in the order blocks start; a text delta goes to an open
//!   text block, a thinking delta to an open unsigned thinking block (`thinking_delta`), a
//!   signature to the open thinking block (`signature_delta`; with none open, a thinking
//!   block of its own); when the next kind of block starts, the open one is stopped first;
//!   redacted thinking is a block started (with its `data`) and stopped at once;
//! - a tool call is a `tool_use` block from its start to its end, its argument deltas as
//!   `input_json_delta`s (tool calls may be open together, addressed by index, as
//!   Anthropic's SDKs read them); a call whose arguments came only at its end gets them
//!   in one delta; an opaque part signature (Gemini's) becomes the signature of an open
//!   thinking block and is dropped elsewhere (the wire has no place for it);
//! - a finished turn stops the blocks still open and ends with `message_delta`
//!   (`stop_reason` in Anthropic's words, usage with `output_tokens`, and input and cache
//!   counts when known) and `message_stop`; a failed turn ends with `event: error` and
//!   Anthropic's error envelope; a cancelled one with nothing more.

use qore_core::{ResponseEvent, StopReason, StreamOutcome, ToolCallInput, Usage};
use serde_json::{json, Value};

use super::{error, response};
use crate::dialect::splice::{self, Fill, Template};
use crate::dialect::{sse, StreamEncoder};
use crate::{ReplyMeta, ServeError};

/// Writes one streamed Messages reply.
#[derive(Debug)]
pub struct MessagesEncoder {
    id: String,
    model: String,
    /// `message_start` written.
    started: bool,
    /// The index the next block gets.
    next_index: u32,
    /// Blocks started and not stopped, in start order.
    open: Vec<Open>,
    usage: Usage,
    stop: Option<StopReason>,
    /// A tool call was streamed (the stop reason when none is reported).
    called_tool: bool,
    /// The text delta's frame for the block of that index (see [`splice`]).
    text_delta: Option<(u32, Template)>,
}

#[derive(Debug)]
struct Open {
    index: u32,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Text,
    Thinking { signed: bool },
    Tool { id: String, sent_args: bool },
}

impl MessagesEncoder {
    pub fn new(meta: &ReplyMeta) -> Self {
        MessagesEncoder {
            id: meta.id.clone(),
            model: meta.model.clone(),
            started: false,
            next_index: 0,
            open: Vec::new(),
            usage: Usage::default(),
            stop: None,
            called_tool: false,
            text_delta: None,
        }
    }

    fn ensure_started(&mut self, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        let message = json!({
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": Value::Null,
            "stop_sequence": Value::Null,
            "usage": response::usage_json(&self.usage, true),
        });
        let data = json!({"type": "message_start", "message": message});
        sse::frame(out, Some("message_start"), &data);
    }

    /// Start a block: stop what is open first (all of it, or only the text and thinking
    /// blocks when `keep_tools`), then `content_block_start` with `block`. Its index.
    fn start_block(&mut self, block: Value, keep_tools: bool, out: &mut Vec<u8>) -> u32 {
        self.ensure_started(out);
        self.close(
            |open| !(keep_tools && matches!(open.kind, Kind::Tool { .. })),
            out,
        );
        let index = self.next_index;
        self.next_index += 1;
        let data = json!({"type": "content_block_start", "index": index, "content_block": block});
        sse::frame(out, Some("content_block_start"), &data);
        index
    }

    /// [`Self::start_block`], the block left open as `kind`.
    fn open_block(&mut self, kind: Kind, block: Value, keep_tools: bool, out: &mut Vec<u8>) -> u32 {
        let index = self.start_block(block, keep_tools, out);
        self.open.push(Open { index, kind });
        index
    }

    /// Stop the open blocks `which` picks, in the order they started.
    fn close(&mut self, which: impl Fn(&Open) -> bool, out: &mut Vec<u8>) {
        let mut kept = Vec::new();
        for open in std::mem::take(&mut self.open) {
            if which(&open) {
                block_stop(open.index, out);
            } else {
                kept.push(open);
            }
        }
        self.open = kept;
    }

    /// The index of the only open block, when it is text.
    fn open_text(&self) -> Option<u32> {
        match self.open.as_slice() {
            [Open {
                index,
                kind: Kind::Text,
            }] => Some(*index),
            _ => None,
        }
    }

    /// The only open block when it is thinking: its index and whether it is signed.
    fn open_thinking(&mut self) -> Option<(u32, &mut bool)> {
        match self.open.as_mut_slice() {
            [Open {
                index,
                kind: Kind::Thinking { signed },
            }] => Some((*index, signed)),
            _ => None,
        }
    }

    fn text(&mut self, text: &str, out: &mut Vec<u8>) {
        if text.is_empty() {
            return;
        }
        let index = match self.open_text() {
            Some(index) => index,
            None => {
                let block = json!({"type": "text", "text": ""});
                self.open_block(Kind::Text, block, false, out)
            }
        };
        if self.text_delta.as_ref().is_none_or(|(at, _)| *at != index) {
            let delta = json!({"type": "text_delta", "text": splice::marker(0)});
            let data = json!({"type": "content_block_delta", "index": index, "delta": delta});
            let template = Template::new(Some("content_block_delta"), &data, 1);
            self.text_delta = template.map(|t| (index, t));
        }
        match &self.text_delta {
            Some((_, template)) => template.write(out, &[Fill::Text(text)]),
            None => block_delta(out, index, json!({"type": "text_delta", "text": text})),
        }
    }

    fn thinking(&mut self, text: &str, out: &mut Vec<u8>) {
        let index = match self.open_thinking() {
            Some((index, false)) => index,
            _ => {
                let block = json!({"type": "thinking", "thinking": "", "signature": ""});
                self.open_block(Kind::Thinking { signed: false }, block, false, out)
            }
        };
        if !text.is_empty() {
            let delta = json!({"type": "thinking_delta", "thinking": text});
            block_delta(out, index, delta);
        }
    }

    /// A signature for the open thinking block; `own_block`: with none open, open one.
    fn signature(&mut self, signature: &str, own_block: bool, out: &mut Vec<u8>) {
        let index = match self.open_thinking() {
            Some((index, signed)) => {
                *signed = true;
                index
            }
            None if own_block => {
                let block = json!({"type": "thinking", "thinking": "", "signature": ""});
                self.open_block(Kind::Thinking { signed: true }, block, false, out)
            }
            None => return,
        };
        let delta = json!({"type": "signature_delta", "signature": signature});
        block_delta(out, index, delta);
    }

    fn tool_end(&mut self, id: &str, input: &ToolCallInput, out: &mut Vec<u8>) {
        let Some(pos) = (self.open.iter())
            .position(|open| matches!(&open.kind, Kind::Tool { id: open_id, .. } if open_id == id))
        else {
            return;
        };
        let open = self.open.remove(pos);
        if let Kind::Tool {
            sent_args: false, ..
        } = open.kind
        {
            let args = match input {
                ToolCallInput::Parsed(value) => response::tool_input(value, None).to_string(),
                ToolCallInput::Invalid(err) => err.raw.clone(),
            };
            if args != "{}" {
                let delta = json!({"type": "input_json_delta", "partial_json": args});
                block_delta(out, open.index, delta);
            }
        }
        block_stop(open.index, out);
    }
}

fn block_delta(out: &mut Vec<u8>, index: u32, delta: Value) {
    let data = json!({"type": "content_block_delta", "index": index, "delta": delta});
    sse::frame(out, Some("content_block_delta"), &data);
}

fn block_stop(index: u32, out: &mut Vec<u8>) {
    let data = json!({"type": "content_block_stop", "index": index});
    sse::frame(out, Some("content_block_stop"), &data);
}

impl StreamEncoder for MessagesEncoder {
    /// Nothing yet: `message_start` waits for the upstream's first report (see the module
    /// doc).
    fn start(&mut self, _out: &mut Vec<u8>) {}

    fn event(&mut self, event: &ResponseEvent, out: &mut Vec<u8>) {
        match event {
            ResponseEvent::TextDelta { text } => self.text(text, out),
            ResponseEvent::ThinkingDelta { text } => self.thinking(text, out),
            ResponseEvent::ThinkingSignature { signature } => self.signature(signature, true, out),
            ResponseEvent::PartSignature { signature } => self.signature(signature, false, out),
            ResponseEvent::RedactedThinking { data } => {
                let block = json!({"type": "redacted_thinking", "data": data});
                let index = self.start_block(block, false, out);
                block_stop(index, out);
            }
            ResponseEvent::ToolCallStart { id, name } => {
                self.called_tool = true;
                let block = json!({"type": "tool_use", "id": id, "name": name, "input": {}});
                let kind = Kind::Tool {
                    id: id.clone(),
                    sent_args: false,
                };
                self.open_block(kind, block, true, out);
            }
            ResponseEvent::ToolCallArgsDelta { id, delta } => {
                if delta.is_empty() {
                    return;
                }
                let open = self.open.iter_mut().find(
                    |open| matches!(&open.kind, Kind::Tool { id: open_id, .. } if open_id == id.as_str()),
                );
                if let Some(Open {
                    index,
                    kind: Kind::Tool { sent_args, .. },
                }) = open
                {
                    *sent_args = true;
                    let delta = json!({"type": "input_json_delta", "partial_json": delta});
                    block_delta(out, *index, delta);
                }
            }
            ResponseEvent::ToolCallEnd { id, input } => self.tool_end(id, input, out),
            ResponseEvent::Usage { usage } => {
                self.usage.merge(usage);
                self.ensure_started(out);
            }
            ResponseEvent::Stop { reason } => self.stop = Some(reason.clone()),
            // The id and model are the reply's; an error ends the turn in `finish`.
            ResponseEvent::MessageStart { .. } | ResponseEvent::Error { .. } => {}
        }
    }

    fn finish(&mut self, outcome: &StreamOutcome, error: Option<&ServeError>, out: &mut Vec<u8>) {
        match outcome {
            StreamOutcome::Finished {
                message,
                stop_reason,
                usage,
            } => {
                self.usage.merge(usage);
                self.ensure_started(out);
                self.close(|_| true, out);
                let reason = stop_reason.as_ref().or(self.stop.as_ref());
                let mut stop = response::stop_reason_name(reason, message);
                if reason.is_none() && self.called_tool {
                    stop = "tool_use".to_owned();
                }
                let data = json!({
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": Value::Null},
                    "usage": response::usage_json(&self.usage, false),
                });
                sse::frame(out, Some("message_delta"), &data);
                sse::frame(out, Some("message_stop"), &json!({"type": "message_stop"}));
            }
            StreamOutcome::Failed { error: failure, .. } => {
                let error = match error {
                    Some(error) => error.clone(),
                    None => ServeError::from_upstream(failure),
                };
                error::stream_event(&error, out);
            }
            StreamOutcome::Cancelled { .. } => {}
        }
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
