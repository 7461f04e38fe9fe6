//! A streamed reply as Responses API events: `event: <type>` and one `data:` line each,
//! every event numbered by `sequence_number` from 0.
//!
//! Promises:
//! - `response.created` and `response.in_progress` open the stream (status `in_progress`,
//!   no output yet);
//! - each output item is announced by `response.output_item.added` and finished by
//!   `response.output_item.done`, under its `output_index` (items numbered in the order
//!   they open) and its id (derived as in `response.rs`, so `response.completed` and a
//!   stored read-back name the same items):
//!   text -> a `message` item: `content_part.added`, `output_text.delta`s,
//!   `output_text.done`, `content_part.done`; thinking -> a `reasoning` item:
//!   `reasoning_summary_part.added`, `reasoning_summary_text.delta`s, `.done`,
//!   `reasoning_summary_part.done`, the signature as the finished item's
//!   `encrypted_content`; redacted thinking -> a finished reasoning item at once; a tool
//!   call -> a `function_call` item with the model's `call_id` and `name`,
//!   `function_call_arguments.delta`s and `.done` with the whole arguments;
//! - items open and close as the message folds (qore-core's `MessageAssembler`): text
//!   closes thinking and the reverse, a tool call closes both, calls close at their end;
//! - a finished turn closes what is open and ends with `response.completed` (or
//!   `response.incomplete` when the model ran out of tokens or refused) carrying the whole
//!   response object; a failed turn ends with `response.failed` whose response carries the
//!   error and the items finished so far; a cancelled turn ends with nothing more.

use qore_core::{ResponseEvent, StreamOutcome, ToolCallInput};
use serde_json::{json, Value};

use super::error::failed_error;
use super::response::{
    call_item, ending, envelope, item_id, message_item, output_text_part, reasoning_item,
    usage_json,
};
use crate::dialect::splice::{self, Fill, Template};
use crate::dialect::{sse, StreamEncoder};
use crate::{ReplyMeta, ServeError};

/// The encoder of one streamed reply.
pub struct ResponsesEncoder {
    meta: ReplyMeta,
    sequence: u64,
    /// Output items by `output_index`; `None` while open.
    items: Vec<Option<Value>>,
    text: Option<OpenText>,
    reasoning: Option<OpenReasoning>,
    calls: Vec<OpenCall>,
}

struct OpenText {
    index: usize,
    id: String,
    text: String,
    /// Its `response.output_text.delta` frame (holes: the delta, the sequence number).
    delta: Option<Template>,
}

struct OpenReasoning {
    index: usize,
    id: String,
    text: String,
    part_open: bool,
    encrypted: Option<String>,
}

struct OpenCall {
    index: usize,
    id: String,
    call_id: String,
    name: String,
    args: String,
}

impl ResponsesEncoder {
    pub fn new(meta: &ReplyMeta) -> Self {
        ResponsesEncoder {
            meta: meta.clone(),
            sequence: 0,
            items: Vec::new(),
            text: None,
            reasoning: None,
            calls: Vec::new(),
        }
    }

    fn emit(&mut self, out: &mut Vec<u8>, kind: &str, mut data: Value) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        sse::frame(out, Some(kind), &data);
    }

    /// A new output item: its index and id.
    fn open_item(&mut self, prefix: &str) -> (usize, String) {
        let index = self.items.len();
        self.items.push(None);
        (index, item_id(prefix, &self.meta.id, index))
    }

    fn item_added(&mut self, out: &mut Vec<u8>, index: usize, item: &Value) {
        let data = json!({"output_index": index, "item": item});
        self.emit(out, "response.output_item.added", data);
    }

    fn item_done(&mut self, out: &mut Vec<u8>, index: usize, item: Value) {
        self.emit(
            out,
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
        if let Some(slot) = self.items.get_mut(index) {
            *slot = Some(item);
        }
    }

    fn text_delta(&mut self, out: &mut Vec<u8>, delta: &str) {
        if delta.is_empty() {
            return;
        }
        self.close_reasoning(out);
        if self.text.is_none() {
            self.open_text(out);
        }
        let Some(open) = &mut self.text else {
            return;
        };
        open.text.push_str(delta);
        match &open.delta {
            Some(template) => {
                template.write(out, &[Fill::Text(delta), Fill::Number(self.sequence)]);
                self.sequence += 1;
            }
            None => {
                let data = json!({"item_id": open.id, "output_index": open.index,
                    "content_index": 0, "delta": delta, "logprobs": []});
                self.emit(out, "response.output_text.delta", data);
            }
        }
    }

    /// A message item with one text part, its delta frame made once (see [`splice`]).
    fn open_text(&mut self, out: &mut Vec<u8>) {
        let (index, id) = self.open_item("msg");
        let item = message_item(&id, "", false);
        self.item_added(out, index, &item);
        let at = json!({"item_id": id, "output_index": index, "content_index": 0});
        let mut added = at.clone();
        added["part"] = output_text_part("");
        self.emit(out, "response.content_part.added", added);
        let mut frame = at;
        frame["delta"] = json!(splice::marker(0));
        frame["logprobs"] = json!([]);
        frame["type"] = json!("response.output_text.delta");
        frame["sequence_number"] = json!(splice::marker(1));
        self.text = Some(OpenText {
            index,
            id,
            text: String::new(),
            delta: Template::new(Some("response.output_text.delta"), &frame, 2),
        });
    }

    fn close_text(&mut self, out: &mut Vec<u8>) {
        let Some(OpenText {
            index, id, text, ..
        }) = self.text.take()
        else {
            return;
        };
        let at = json!({"item_id": id, "output_index": index, "content_index": 0});
        let mut done = at.clone();
        done["text"] = json!(text);
        done["logprobs"] = json!([]);
        self.emit(out, "response.output_text.done", done);
        let mut part = at;
        part["part"] = output_text_part(&text);
        self.emit(out, "response.content_part.done", part);
        self.item_done(out, index, message_item(&id, &text, true));
    }

    /// The open reasoning item, opened (closing text) when there is none.
    fn reasoning_open(&mut self, out: &mut Vec<u8>) -> &mut OpenReasoning {
        self.close_text(out);
        let open = match self.reasoning.take() {
            Some(open) => open,
            None => {
                let (index, id) = self.open_item("rs");
                let item = reasoning_item(&id, "", None);
                self.item_added(out, index, &item);
                OpenReasoning {
                    index,
                    id,
                    text: String::new(),
                    part_open: false,
                    encrypted: None,
                }
            }
        };
        self.reasoning.insert(open)
    }

    fn thinking_delta(&mut self, out: &mut Vec<u8>, delta: &str) {
        // Thinking after a signature is a new block (as qore-core folds it).
        if self
            .reasoning
            .as_ref()
            .is_some_and(|r| r.encrypted.is_some())
        {
            self.close_reasoning(out);
        }
        let open = self.reasoning_open(out);
        if delta.is_empty() {
            return;
        }
        let at = json!({"item_id": open.id, "output_index": open.index, "summary_index": 0});
        let first = !open.part_open;
        open.part_open = true;
        open.text.push_str(delta);
        if first {
            let mut added = at.clone();
            added["part"] = json!({"type": "summary_text", "text": ""});
            self.emit(out, "response.reasoning_summary_part.added", added);
        }
        let mut data = at;
        data["delta"] = json!(delta);
        self.emit(out, "response.reasoning_summary_text.delta", data);
    }

    fn close_reasoning(&mut self, out: &mut Vec<u8>) {
        let Some(open) = self.reasoning.take() else {
            return;
        };
        if open.part_open {
            let at = json!({"item_id": open.id, "output_index": open.index, "summary_index": 0});
            let mut done = at.clone();
            done["text"] = json!(open.text);
            self.emit(out, "response.reasoning_summary_text.done", done);
            let mut part = at;
            part["part"] = json!({"type": "summary_text", "text": open.text});
            self.emit(out, "response.reasoning_summary_part.done", part);
        }
        let item = reasoning_item(&open.id, &open.text, open.encrypted.as_deref());
        self.item_done(out, open.index, item);
    }

    fn whole_item(&mut self, out: &mut Vec<u8>, prefix: &str, item: impl Fn(&str) -> Value) {
        self.close_text(out);
        self.close_reasoning(out);
        let (index, id) = self.open_item(prefix);
        let item = item(&id);
        self.item_added(out, index, &item);
        self.item_done(out, index, item);
    }

    fn call_start(&mut self, out: &mut Vec<u8>, call_id: &str, name: &str) {
        self.close_text(out);
        self.close_reasoning(out);
        let (index, id) = self.open_item("fc");
        let item = call_item(&id, call_id, name, "", false);
        self.item_added(out, index, &item);
        self.calls.push(OpenCall {
            index,
            id,
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            args: String::new(),
        });
    }

    fn call_delta(&mut self, out: &mut Vec<u8>, call_id: &str, delta: &str) {
        let Some(call) = self.calls.iter_mut().find(|c| c.call_id == call_id) else {
            return;
        };
        if delta.is_empty() {
            return;
        }
        call.args.push_str(delta);
        let data = json!({"item_id": call.id, "output_index": call.index, "delta": delta});
        self.emit(out, "response.function_call_arguments.delta", data);
    }

    /// End the call `call_id` (its arguments from `input` when none streamed).
    fn call_end(&mut self, out: &mut Vec<u8>, call_id: &str, input: Option<&ToolCallInput>) {
        let Some(pos) = self.calls.iter().position(|c| c.call_id == call_id) else {
            return;
        };
        if self.calls[pos].args.is_empty() {
            let args = match input {
                Some(ToolCallInput::Parsed(value)) => value.to_string(),
                Some(ToolCallInput::Invalid(error)) => error.raw.clone(),
                None => String::new(),
            };
            self.call_delta(out, call_id, &args);
        }
        let call = self.calls.remove(pos);
        let data = json!({"item_id": call.id, "output_index": call.index, "name": call.name,
            "arguments": call.args});
        self.emit(out, "response.function_call_arguments.done", data);
        let item = call_item(&call.id, &call.call_id, &call.name, &call.args, true);
        self.item_done(out, call.index, item);
    }

    /// Close every open item (calls whose end never came keep what streamed).
    fn close_all(&mut self, out: &mut Vec<u8>) {
        self.close_text(out);
        self.close_reasoning(out);
        while let Some(call) = self.calls.first() {
            let call_id = call.call_id.clone();
            self.call_end(out, &call_id, None);
        }
    }

    fn finished_items(&self) -> Vec<Value> {
        self.items.iter().flatten().cloned().collect()
    }
}

impl StreamEncoder for ResponsesEncoder {
    fn start(&mut self, out: &mut Vec<u8>) {
        let response = envelope(
            &self.meta,
            "in_progress",
            None,
            Vec::new(),
            Value::Null,
            Value::Null,
        );
        self.emit(out, "response.created", json!({"response": response}));
        self.emit(out, "response.in_progress", json!({"response": response}));
    }

    fn event(&mut self, event: &ResponseEvent, out: &mut Vec<u8>) {
        match event {
            ResponseEvent::TextDelta { text } => self.text_delta(out, text),
            ResponseEvent::ThinkingDelta { text } => self.thinking_delta(out, text),
            ResponseEvent::ThinkingSignature { signature } => {
                let open = self.reasoning_open(out);
                match &mut open.encrypted {
                    Some(existing) => existing.push_str(signature),
                    None => open.encrypted = Some(signature.clone()),
                }
            }
            ResponseEvent::RedactedThinking { data } => {
                self.whole_item(out, "rs", |id| reasoning_item(id, "", Some(data)))
            }
            ResponseEvent::ToolCallStart { id, name } => self.call_start(out, id, name),
            ResponseEvent::ToolCallArgsDelta { id, delta } => self.call_delta(out, id, delta),
            ResponseEvent::ToolCallEnd { id, input } => self.call_end(out, id, Some(input)),
            // Said by the closing response (usage, status) or not at all on this wire.
            ResponseEvent::MessageStart { .. }
            | ResponseEvent::PartSignature { .. }
            | ResponseEvent::Usage { .. }
            | ResponseEvent::Stop { .. }
            | ResponseEvent::Error { .. } => {}
        }
    }

    fn finish(&mut self, outcome: &StreamOutcome, error: Option<&ServeError>, out: &mut Vec<u8>) {
        match outcome {
            StreamOutcome::Finished {
                stop_reason, usage, ..
            } => {
                self.close_all(out);
                let (status, incomplete) = ending(stop_reason.as_ref());
                let output = self.finished_items();
                let response = envelope(
                    &self.meta,
                    status,
                    incomplete,
                    output,
                    usage_json(usage),
                    Value::Null,
                );
                let kind = match status {
                    "incomplete" => "response.incomplete",
                    _ => "response.completed",
                };
                self.emit(out, kind, json!({"response": response}));
            }
            StreamOutcome::Failed { error: info, usage } => {
                let error = match error {
                    Some(error) => failed_error(error),
                    None => failed_error(&ServeError::from_upstream(info)),
                };
                let output = self.finished_items();
                let response =
                    envelope(&self.meta, "failed", None, output, usage_json(usage), error);
                self.emit(out, "response.failed", json!({"response": response}));
            }
            StreamOutcome::Cancelled { .. } => {}
        }
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
