//! The output items of one response, from `response.output_item.added` to `.done`.
//!
//! Promises:
//! - events find their item by `output_index`, else by `item_id`, else the latest item
//!   (llama.cpp sends no `output_index`); ids are labels, not keys: some proxies (GitHub
//!   Copilot's Responses endpoint) send a different `item_id` on every event of one item. An
//!   event for an item never announced opens it;
//! - messages: `output_text`/`refusal` deltas become text as they arrive, each content part
//!   keyed by `content_index`; a `.done` event or the finished item supplies a part's text
//!   only when no delta did (servers that send only `.done`, whole bodies), so a turn's text
//!   is its deltas, once;
//! - reasoning: summary parts (`summary_text`) and reasoning text (`reasoning_text`) become
//!   one thinking block per item, parts separated by a blank line; the finished item's
//!   `encrypted_content` (else the one it was announced with) becomes the block's signature,
//!   for stateless replay; an item with a signature and no text still opens its own block;
//! - function calls: announced with their `call_id` (what `function_call_output` refers to,
//!   not the item id `fc_…`) once the name is known; argument deltas accumulate; the
//!   finished item's `arguments` (else `function_call_arguments.done`'s, else the deltas)
//!   are parsed once, in [`ResponseEvent::ToolCallEnd`].

use std::borrow::Cow;
use std::collections::VecDeque;

use qore_core::{ErrorInfo, ResponseEvent, ToolCallInput};

use super::wire::{WireItem, WirePart};

#[path = "reasoning.rs"]
mod reasoning;
pub use reasoning::Channel;
use reasoning::{push_reasoning, reasoning_done, ReasoningState};

/// How an event names its item (and, for message text, its content part).
#[derive(Debug, Clone, Copy)]
pub struct ItemRef<'e> {
    pub item_id: Option<&'e str>,
    pub output_index: Option<u32>,
    pub content_index: Option<u32>,
}

/// The content parts of a message whose text already came as deltas.
#[derive(Debug, Default)]
struct Streamed {
    /// `content_index` of each part that had a delta.
    parts: Vec<u32>,
    /// A delta named no part: every part counts as streamed (the whole message).
    unindexed: bool,
}

impl Streamed {
    fn mark(&mut self, part: Option<u32>) {
        match part {
            Some(index) if !self.parts.contains(&index) => self.parts.push(index),
            Some(_) => {}
            None => self.unindexed = true,
        }
    }

    fn has(&self, part: Option<u32>) -> bool {
        self.unindexed || self.parts.contains(&part.unwrap_or(0))
    }
}

#[derive(Debug)]
struct OpenItem {
    output_index: Option<u32>,
    id: String,
    state: ItemState,
}

#[derive(Debug)]
enum ItemState {
    Message(Streamed),
    Reasoning(ReasoningState),
    Call(CallState),
    Other,
}

#[derive(Debug, Default)]
struct CallState {
    call_id: String,
    name: String,
    args: String,
    final_args: Option<String>,
    announced: bool,
}

/// The items of one response.
#[derive(Debug, Default)]
pub struct Items {
    open: Vec<OpenItem>,
    /// Some item event was decoded (a terminal `output` is then not decoded again).
    pub seen: bool,
    pub calls_made: bool,
    pub refused: bool,
    synthesized_ids: u32,
}

impl Items {
    fn find(&self, at: ItemRef<'_>) -> Option<usize> {
        if let Some(index) = at.output_index {
            return self
                .open
                .iter()
                .rposition(|item| item.output_index == Some(index));
        }
        match at.item_id.filter(|id| !id.is_empty()) {
            Some(id) => self.open.iter().rposition(|item| item.id == id),
            None => self.open.len().checked_sub(1),
        }
    }

    /// The item `at` names, opened with `state` when it was never announced.
    fn find_or_open(&mut self, at: ItemRef<'_>, state: impl FnOnce() -> ItemState) -> usize {
        self.seen = true;
        self.find(at).unwrap_or_else(|| {
            self.open.push(OpenItem {
                output_index: at.output_index,
                id: at.item_id.unwrap_or_default().to_owned(),
                state: state(),
            });
            self.open.len() - 1
        })
    }

    /// `response.output_item.added`.
    pub fn added(
        &mut self,
        output_index: Option<u32>,
        item: WireItem<'_>,
        out: &mut VecDeque<ResponseEvent>,
    ) {
        self.seen = true;
        let state = match item.kind.as_deref() {
            Some("message") => ItemState::Message(Streamed::default()),
            Some("reasoning") => ItemState::Reasoning(ReasoningState {
                encrypted: item
                    .encrypted_content
                    .filter(|e| !e.is_empty())
                    .map(Cow::into_owned),
                ..ReasoningState::default()
            }),
            Some("function_call") => {
                let mut call = CallState::default();
                self.fill_call(&mut call, &item);
                if let Some(args) = item.arguments.filter(|a| !a.0.is_empty()) {
                    call.args.push_str(&args.0);
                }
                if !call.name.is_empty() {
                    announce(&mut call, out);
                }
                ItemState::Call(call)
            }
            _ => ItemState::Other,
        };
        self.open.push(OpenItem {
            output_index,
            id: item.id.map(Cow::into_owned).unwrap_or_default(),
            state,
        });
    }

    /// Take the call's ids and name from an item, where still unknown.
    fn fill_call(&mut self, call: &mut CallState, item: &WireItem<'_>) {
        if call.call_id.is_empty() {
            let id = [&item.call_id, &item.id]
                .into_iter()
                .find_map(|id| id.as_deref().filter(|id| !id.is_empty()));
            call.call_id = match id {
                Some(id) => id.to_owned(),
                None => {
                    self.synthesized_ids += 1;
                    format!("call_{}", self.synthesized_ids)
                }
            };
        }
        if call.name.is_empty() {
            if let Some(name) = &item.name {
                call.name = name.clone().into_owned();
            }
        }
    }

    /// An `output_text` (or `refusal`) delta.
    pub fn text_delta(
        &mut self,
        at: ItemRef<'_>,
        text: Cow<'_, str>,
        refusal: bool,
        out: &mut VecDeque<ResponseEvent>,
    ) {
        let pos = self.find_or_open(at, || ItemState::Message(Streamed::default()));
        if let ItemState::Message(streamed) = &mut self.open[pos].state {
            streamed.mark(at.content_index);
        }
        self.push_text(text, refusal, out);
    }

    /// `response.output_text.done` / `response.refusal.done`: the text, if no delta gave it.
    pub fn text_done(
        &mut self,
        at: ItemRef<'_>,
        text: Cow<'_, str>,
        refusal: bool,
        out: &mut VecDeque<ResponseEvent>,
    ) {
        let pos = self.find_or_open(at, || ItemState::Message(Streamed::default()));
        if let ItemState::Message(streamed) = &mut self.open[pos].state {
            if streamed.has(at.content_index) {
                return;
            }
            streamed.mark(Some(at.content_index.unwrap_or(0)));
        }
        self.push_text(text, refusal, out);
    }

    fn push_text(&mut self, text: Cow<'_, str>, refusal: bool, out: &mut VecDeque<ResponseEvent>) {
        if text.is_empty() {
            return;
        }
        self.refused |= refusal;
        out.push_back(ResponseEvent::TextDelta { text: text.into() });
    }

    /// A reasoning summary or reasoning text delta (`done`: the part's whole text, used only
    /// when no delta gave it).
    pub fn reasoning(
        &mut self,
        at: ItemRef<'_>,
        part: (Channel, u32),
        text: Cow<'_, str>,
        done: bool,
        out: &mut VecDeque<ResponseEvent>,
    ) {
        let pos = self.find_or_open(at, || ItemState::Reasoning(ReasoningState::default()));
        if let ItemState::Reasoning(state) = &mut self.open[pos].state {
            if done && state.part == Some(part) {
                return;
            }
            push_reasoning(state, part, text, out);
        }
    }

    /// `response.function_call_arguments.delta`.
    pub fn call_args_delta(
        &mut self,
        at: ItemRef<'_>,
        delta: Cow<'_, str>,
        out: &mut VecDeque<ResponseEvent>,
    ) {
        let pos = self.find_or_open(at, || ItemState::Call(CallState::default()));
        if let ItemState::Call(call) = &mut self.open[pos].state {
            if delta.is_empty() {
                return;
            }
            call.args.push_str(&delta);
            if call.announced {
                out.push_back(ResponseEvent::ToolCallArgsDelta {
                    id: call.call_id.as_str().into(),
                    delta: delta.into(),
                });
            }
        }
    }

    /// `response.function_call_arguments.done`: the final arguments.
    pub fn call_args_done(&mut self, at: ItemRef<'_>, arguments: Cow<'_, str>) {
        let pos = self.find_or_open(at, || ItemState::Call(CallState::default()));
        if let ItemState::Call(call) = &mut self.open[pos].state {
            call.final_args = Some(arguments.into_owned());
        }
    }

    /// A finished item: `response.output_item.done`, or an item of a whole body.
    pub fn done(
        &mut self,
        output_index: Option<u32>,
        item: WireItem<'_>,
        out: &mut VecDeque<ResponseEvent>,
    ) {
        self.seen = true;
        let at = ItemRef {
            item_id: item.id.as_deref(),
            output_index,
            content_index: None,
        };
        let state = self.find(at).map(|pos| self.open.remove(pos).state);
        match item.kind.as_deref() {
            Some("message") => {
                let streamed = match state {
                    Some(ItemState::Message(streamed)) => streamed,
                    _ => Streamed::default(),
                };
                for (index, part) in (0u32..).zip(item.content.into_iter().flatten()) {
                    if !streamed.has(Some(index)) {
                        self.message_part(part, out);
                    }
                }
            }
            Some("reasoning") => {
                let state = match state {
                    Some(ItemState::Reasoning(state)) => state,
                    _ => ReasoningState::default(),
                };
                reasoning_done(state, item, out);
            }
            Some("function_call") => {
                let mut call = match state {
                    Some(ItemState::Call(call)) => call,
                    _ => CallState::default(),
                };
                self.fill_call(&mut call, &item);
                if let Some(args) = item.arguments {
                    call.final_args = Some(args.0.into_owned());
                }
                self.end_call(call, out);
            }
            _ => {}
        }
    }

    fn message_part(&mut self, part: WirePart<'_>, out: &mut VecDeque<ResponseEvent>) {
        match part.kind.as_deref() {
            Some("refusal") => {
                if let Some(text) = part.refusal.and_then(|r| r.take()) {
                    self.push_text(text, true, out);
                }
            }
            Some("output_text" | "text" | "input_text") | None => {
                if let Some(text) = part.text.and_then(|t| t.take()) {
                    self.push_text(text, false, out);
                }
            }
            Some(_) => {}
        }
    }

    fn end_call(&mut self, mut call: CallState, out: &mut VecDeque<ResponseEvent>) {
        if !call.announced {
            if call.name.is_empty() {
                out.push_back(ResponseEvent::Error {
                    error: ErrorInfo::provider(format!(
                        "function call {} never received a name",
                        call.call_id
                    )),
                });
                return;
            }
            if call.args.is_empty() {
                if let Some(args) = &call.final_args {
                    call.args.push_str(args);
                }
            }
            announce(&mut call, out);
        }
        self.calls_made = true;
        let args = call.final_args.as_deref().unwrap_or(&call.args);
        let input = ToolCallInput::parse(args);
        out.push_back(ResponseEvent::ToolCallEnd {
            id: call.call_id,
            input,
        });
    }

    /// The response ended: end the calls whose item never finished.
    pub fn close(&mut self, out: &mut VecDeque<ResponseEvent>) {
        for item in std::mem::take(&mut self.open) {
            if let ItemState::Call(mut call) = item.state {
                if call.call_id.is_empty() {
                    call.call_id = item.id;
                }
                self.end_call(call, out);
            }
        }
    }
}

fn announce(call: &mut CallState, out: &mut VecDeque<ResponseEvent>) {
    call.announced = true;
    out.push_back(ResponseEvent::ToolCallStart {
        id: call.call_id.clone(),
        name: call.name.clone(),
    });
    if !call.args.is_empty() {
        out.push_back(ResponseEvent::ToolCallArgsDelta {
            id: call.call_id.as_str().into(),
            delta: call.args.as_str().into(),
        });
    }
}
