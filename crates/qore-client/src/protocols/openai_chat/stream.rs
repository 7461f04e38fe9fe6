//! Decoding Chat Completions responses into [`ResponseEvent`]s.
//!
//! Streamed chunks and whole responses go through the same [`ChatStreamDecoder`]: a whole
//! response is one chunk whose choice has `message` instead of `delta`.
//!
//! Tool calls are merged by `index`: the id and name may come only in the first chunk of a
//! call (OpenAI) or again in every chunk (llama.cpp); a different id at an index that is
//! already open starts a new call (servers that put every call at index 0). A call is
//! announced ([`ResponseEvent::ToolCallStart`]) once its name is known, and ended, with its
//! arguments parsed once, when the choice finishes or the stream ends.

use std::collections::VecDeque;

use qore_core::{
    CallId, ErrorInfo, ProviderDetail, ResponseEvent, StopReason, ToolCallInput, Usage,
};

use super::error;
use std::borrow::Cow;

use serde::de::DeserializeSeed as _;

use super::chunk::{ChoiceSink, ChunkSeed};
use super::fast;
use super::wire::{Content, Delta, ToolCallDelta, WireUsage};
use crate::codec::StreamDecoder;
use crate::protocols::shared;
use crate::transport::sse::SseFrame;

/// Decoder state for one response.
#[derive(Debug, Default)]
pub struct ChatStreamDecoder {
    started: bool,
    calls: Vec<PendingCall>,
    stopped: bool,
    done: bool,
    refused: bool,
    synthesized_ids: u32,
    /// Decode every chunk through serde, never [`fast`] (to compare the two in tests).
    serde_only: bool,
}

#[derive(Debug)]
struct PendingCall {
    index: u32,
    id: String,
    /// `id` once the call is announced, shared by its argument deltas (no allocation each).
    shared_id: CallId,
    name: String,
    args: String,
    announced: bool,
}

impl ChatStreamDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that never takes the fast path (for differential tests and benchmarks).
    pub fn serde_only() -> Self {
        ChatStreamDecoder {
            serde_only: true,
            ..Self::default()
        }
    }

    /// Decode one chunk (or a whole response body) into `out`.
    fn chunk(
        &mut self,
        data: &str,
        out: &mut VecDeque<ResponseEvent>,
    ) -> Result<(), serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_str(data);
        let tail = ChunkSeed { decoder: self, out }.deserialize(&mut deserializer)?;
        deserializer.end()?;
        if let Some(err) = &tail.error {
            out.push_back(ResponseEvent::Error {
                error: error::in_stream(err, data),
            });
            return Ok(());
        }
        let start_at = match tail.start_at {
            Some(at) => Some(at),
            None if !self.started => Some(self.start(out)),
            None => None,
        };
        if let Some(ResponseEvent::MessageStart { id, model }) =
            start_at.and_then(|at| out.get_mut(at))
        {
            *id = tail.id.map(Cow::into_owned);
            *model = tail.model.map(Cow::into_owned);
        }
        if let Some(usage) = tail.usage.as_ref().map(usage) {
            if !usage.is_empty() {
                out.push_back(ResponseEvent::Usage { usage });
            }
        }
        Ok(())
    }

    fn tool_call(&mut self, delta: &ToolCallDelta<'_>, out: &mut VecDeque<ResponseEvent>) {
        let id = delta.id.as_deref().filter(|id| !id.is_empty());
        let index = delta.index.unwrap_or_else(|| match &id {
            Some(id) if !self.calls.iter().any(|c| c.id == *id) => self.calls.len() as u32,
            _ => self.calls.last().map_or(0, |c| c.index),
        });
        let open = self.calls.iter().rposition(|c| c.index == index);
        let pos = match (open, &id) {
            (Some(pos), Some(id))
                if !self.calls[pos].id.is_empty() && self.calls[pos].id != *id =>
            {
                // A new call at an index still open: the previous one is complete.
                let call = self.calls.remove(pos);
                end_call(call, out);
                None
            }
            (open, _) => open,
        };
        let pos = pos.unwrap_or_else(|| {
            self.calls.push(PendingCall {
                index,
                id: String::new(),
                shared_id: CallId::default(),
                name: String::new(),
                args: String::new(),
                announced: false,
            });
            self.calls.len() - 1
        });
        let call = &mut self.calls[pos];
        if let Some(id) = id {
            if call.id.is_empty() {
                call.id = id.to_owned();
            }
        }
        let (name, args) = match &delta.function {
            Some(function) => (
                function.name.as_deref(),
                function.arguments.as_ref().map(|a| a.0.as_ref()),
            ),
            None => (None, None),
        };
        if let Some(name) = name {
            if call.name.is_empty() {
                call.name = name.to_owned();
            }
        }
        if call.announced {
            if let Some(args) = args.filter(|a| !a.is_empty()) {
                call.args.push_str(args);
                out.push_back(ResponseEvent::ToolCallArgsDelta {
                    id: call.shared_id.clone(),
                    delta: args.into(),
                });
            }
            return;
        }
        if let Some(args) = args {
            call.args.push_str(args);
        }
        if !call.name.is_empty() {
            if call.id.is_empty() {
                self.synthesized_ids += 1;
                call.id = format!("call_{}_{}", call.index, self.synthesized_ids);
            }
            announce(call, out);
        }
    }

    /// End every open call, in the order they started.
    fn close_calls(&mut self, out: &mut VecDeque<ResponseEvent>) {
        for mut call in self.calls.drain(..) {
            if !call.announced {
                if call.name.is_empty() {
                    out.push_back(ResponseEvent::Error {
                        error: ErrorInfo::provider(format!(
                            "tool call at index {} never received a name",
                            call.index
                        )),
                    });
                    continue;
                }
                announce(&mut call, out);
            }
            end_call(call, out);
        }
    }
}

fn announce(call: &mut PendingCall, out: &mut VecDeque<ResponseEvent>) {
    call.announced = true;
    call.shared_id = CallId::from(call.id.as_str());
    out.push_back(ResponseEvent::ToolCallStart {
        id: call.id.clone(),
        name: call.name.clone(),
    });
    if !call.args.is_empty() {
        out.push_back(ResponseEvent::ToolCallArgsDelta {
            id: call.shared_id.clone(),
            delta: call.args.as_str().into(),
        });
    }
}

fn end_call(call: PendingCall, out: &mut VecDeque<ResponseEvent>) {
    let input = ToolCallInput::parse(&call.args);
    out.push_back(ResponseEvent::ToolCallEnd { id: call.id, input });
}

fn push_thinking(content: &Content<'_>, out: &mut VecDeque<ResponseEvent>) {
    match content {
        Content::Text(text) if !text.is_empty() => out.push_back(ResponseEvent::ThinkingDelta {
            text: text.as_ref().into(),
        }),
        Content::Text(_) => {}
        Content::Parts(parts) => {
            for text in parts.iter().filter_map(|p| p.text.as_deref()) {
                if !text.is_empty() {
                    out.push_back(ResponseEvent::ThinkingDelta { text: text.into() });
                }
            }
        }
    }
}

fn usage(wire: &WireUsage) -> Usage {
    Usage {
        input_tokens: wire.prompt_tokens,
        output_tokens: wire.completion_tokens,
        cached_input_tokens: wire
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .or(wire.prompt_cache_hit_tokens),
        cache_creation_input_tokens: None,
        reasoning_tokens: wire
            .completion_tokens_details
            .as_ref()
            .and_then(|d| d.reasoning_tokens),
    }
}

/// The wire's `finish_reason` in our vocabulary.
pub fn stop_reason(reason: &str, refused: bool) -> StopReason {
    match reason {
        "stop" if refused => StopReason::Refusal,
        "stop" | "end_turn" | "eos" => StopReason::EndTurn,
        "length" | "max_tokens" | "model_length" => StopReason::MaxTokens,
        "tool_calls" | "function_call" | "tool_use" => StopReason::ToolUse,
        "stop_sequence" => StopReason::StopSequence,
        "content_filter" | "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_owned()),
    }
}

fn undecodable(err: serde_json::Error, raw: &str) -> ErrorInfo {
    ErrorInfo::provider(format!("undecodable Chat Completions data: {err}")).with_detail(
        ProviderDetail {
            status: None,
            error_type: None,
            body: Some(raw.to_owned()),
        },
    )
}

impl ChoiceSink for ChatStreamDecoder {
    fn started(&self) -> bool {
        self.started
    }

    /// Queue the `MessageStart` of this response; returns its position in `out`.
    fn start(&mut self, out: &mut VecDeque<ResponseEvent>) -> usize {
        self.started = true;
        out.push_back(ResponseEvent::MessageStart {
            id: None,
            model: None,
        });
        out.len() - 1
    }

    /// The choice finished: end its tool calls and report why (once).
    fn finish_reason(&mut self, reason: &str, out: &mut VecDeque<ResponseEvent>) {
        self.close_calls(out);
        if !self.stopped {
            self.stopped = true;
            let reason = stop_reason(reason, self.refused);
            out.push_back(ResponseEvent::Stop { reason });
        }
    }

    fn delta(&mut self, delta: &Delta<'_>, out: &mut VecDeque<ResponseEvent>) {
        if let Some(text) = delta
            .reasoning_content
            .as_ref()
            .or(delta.reasoning.as_ref())
        {
            if !text.is_empty() {
                out.push_back(ResponseEvent::ThinkingDelta {
                    text: text.as_ref().into(),
                });
            }
        }
        match &delta.content {
            Some(Content::Text(text)) if !text.is_empty() => {
                out.push_back(ResponseEvent::TextDelta {
                    text: text.as_ref().into(),
                })
            }
            Some(Content::Parts(parts)) => {
                for part in parts {
                    match (part.kind.as_deref(), &part.text, &part.thinking) {
                        (Some("thinking"), _, Some(thinking)) => push_thinking(thinking, out),
                        (Some("text") | None, Some(text), _) if !text.is_empty() => {
                            out.push_back(ResponseEvent::TextDelta {
                                text: text.as_ref().into(),
                            })
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        if let Some(refusal) = &delta.refusal {
            if !refusal.is_empty() {
                self.refused = true;
                out.push_back(ResponseEvent::TextDelta {
                    text: refusal.as_ref().into(),
                });
            }
        }
        for call in delta.tool_calls.iter().flatten() {
            self.tool_call(call, out);
        }
    }
}

impl StreamDecoder for ChatStreamDecoder {
    fn body(&mut self, body: &[u8], out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        let text = String::from_utf8_lossy(body);
        self.chunk(&text, out)
            .map_err(|err| undecodable(err, &text))?;
        self.close_calls(out);
        Ok(())
    }

    fn frame(
        &mut self,
        frame: SseFrame<'_>,
        out: &mut VecDeque<ResponseEvent>,
    ) -> Result<(), ErrorInfo> {
        if self.done {
            return Ok(());
        }
        if frame.is_done() {
            self.done = true;
            self.close_calls(out);
            return Ok(());
        }
        if frame.data.trim().is_empty() {
            return Ok(());
        }
        if self.started && !self.serde_only {
            if let Some(chunk) = fast::parse(frame.data) {
                if let Some(delta) = &chunk.delta {
                    self.delta(delta, out);
                }
                if let Some(reason) = chunk.finish_reason {
                    self.finish_reason(&reason, out);
                }
                return Ok(());
            }
        }
        self.chunk(frame.data, out)
            .map_err(|err| undecodable(err, frame.data))
    }

    fn finish(&mut self, out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        self.close_calls(out);
        shared::stream_end(self.done || self.stopped, "finish_reason, no [DONE]")
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
