//! Decoding Ollama `/api/chat` answers, and `/api/generate` ones (fill-in-the-middle: the
//! same lines with the text in `response`), into [`ResponseEvent`]s.
//!
//! Streamed answers are NDJSON (one [`ChatLine`] per line, [`Framing::Ndjson`]); a whole body
//! (`"stream": false`) is the same object once, so [`OllamaStreamDecoder::body`] feeds it
//! through the same path, line by line.
//!
//! Promises:
//! - `message.content` (or `/api/generate`'s `response`) → text deltas, `message.thinking`
//!   → thinking deltas, in wire order;
//! - `message.tool_calls` arrive whole (arguments as a JSON object): each becomes a start,
//!   one arguments delta (the object's JSON text) and an end carrying the object as read;
//!   a call without an `id` gets a synthesized one ([`synthesize_call_id`]);
//! - the `done: true` line carries the stop reason (`stop` → end of turn, or tool use when
//!   the turn made calls; `length` → max tokens; anything else, e.g. `load`/`unload`, kept
//!   verbatim as [`StopReason::Other`]) and usage (`prompt_eval_count` → input,
//!   `eval_count` → output);
//! - `{"error": "..."}` inside a 200 answer becomes a provider error and ends the decoding;
//! - a body that ends without a `done: true` line is a network error (incomplete answer).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use qore_core::{ErrorInfo, ResponseEvent, StopReason, ToolCallInput, Usage};
use serde_json::Value;

use super::error;
use super::fast;
use super::wire::{ChatLine, WireToolCall};
use crate::codec::{Framing, StreamDecoder};
use crate::protocols::shared;
use crate::transport::sse::SseFrame;

/// Decoder state for one answer.
#[derive(Debug, Default)]
pub struct OllamaStreamDecoder {
    started: bool,
    made_calls: bool,
    done: bool,
    failed: bool,
    /// Decode every line through serde, never [`fast`] (to compare the two in tests).
    serde_only: bool,
}

impl OllamaStreamDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder for `/api/generate` answers (fill-in-the-middle): the text is each line's
    /// `response`. The fast path reads chat lines only, so these go through serde.
    pub fn generate() -> Self {
        Self::serde_only()
    }

    /// A decoder that never takes the fast path (for differential tests and benchmarks).
    pub fn serde_only() -> Self {
        OllamaStreamDecoder {
            serde_only: true,
            ..Self::default()
        }
    }

    /// Decode one line.
    fn line(&mut self, data: &str, out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        if self.done || self.failed || data.trim().is_empty() {
            return Ok(());
        }
        if !self.serde_only {
            if let Some(line) = fast::parse(data) {
                crate::protocols::shared::start_once(&mut self.started, line.model, out);
                push_deltas(line.thinking, line.content, out);
                return Ok(());
            }
        }
        let line: ChatLine<'_> =
            serde_json::from_str(data).map_err(|err| undecodable(&err, data))?;
        if let Some(err) = line.error.as_ref().filter(|e| !e.is_null()) {
            self.failed = true;
            out.push_back(ResponseEvent::Error {
                error: error::in_stream(err, data),
            });
            return Ok(());
        }
        crate::protocols::shared::start_once(&mut self.started, line.model, out);
        push_deltas(None, line.response, out);
        if let Some(message) = line.message {
            push_deltas(message.thinking, message.content, out);
            for call in message.tool_calls.into_iter().flatten() {
                self.tool_call(call, out);
            }
        }
        if line.done {
            self.done = true;
            let usage = Usage {
                input_tokens: line.prompt_eval_count,
                output_tokens: line.eval_count,
                ..Usage::default()
            };
            if !usage.is_empty() {
                out.push_back(ResponseEvent::Usage { usage });
            }
            let reason = stop_reason(line.done_reason.as_deref(), self.made_calls);
            out.push_back(ResponseEvent::Stop { reason });
        }
        Ok(())
    }

    fn tool_call(&mut self, call: WireToolCall<'_>, out: &mut VecDeque<ResponseEvent>) {
        let name = call.function.name.unwrap_or_default();
        if name.is_empty() {
            out.push_back(ResponseEvent::Error {
                error: ErrorInfo::provider("Ollama sent a tool call without a name"),
            });
            return;
        }
        self.made_calls = true;
        let id = match call.id.filter(|id| !id.is_empty()) {
            Some(id) => id.into_owned(),
            None => synthesize_call_id(),
        };
        out.push_back(ResponseEvent::ToolCallStart {
            id: id.clone(),
            name: name.into_owned(),
        });
        let input = match call.function.arguments {
            None | Some(Value::Null) => ToolCallInput::Parsed(Value::Object(Default::default())),
            // A JSON-encoded string (proxies that speak the OpenAI dialect here).
            Some(Value::String(text)) => {
                out.push_back(ResponseEvent::ToolCallArgsDelta {
                    id: id.as_str().into(),
                    delta: text.as_str().into(),
                });
                ToolCallInput::parse(&text)
            }
            Some(value) => {
                out.push_back(ResponseEvent::ToolCallArgsDelta {
                    id: id.as_str().into(),
                    delta: value.to_string().into(),
                });
                ToolCallInput::Parsed(value)
            }
        };
        out.push_back(ResponseEvent::ToolCallEnd { id, input });
    }
}

/// A line's thinking and text deltas, in that order (empty ones are not events).
fn push_deltas(
    thinking: Option<Cow<'_, str>>,
    content: Option<Cow<'_, str>>,
    out: &mut VecDeque<ResponseEvent>,
) {
    if let Some(thinking) = thinking.filter(|t| !t.is_empty()) {
        out.push_back(ResponseEvent::ThinkingDelta {
            text: thinking.into(),
        });
    }
    if let Some(text) = content.filter(|t| !t.is_empty()) {
        out.push_back(ResponseEvent::TextDelta { text: text.into() });
    }
}

/// `done_reason` in our vocabulary. `stop` after tool calls is a tool-use stop: Ollama
/// reports `stop` either way.
pub fn stop_reason(reason: Option<&str>, made_calls: bool) -> StopReason {
    match reason {
        None | Some("stop") if made_calls => StopReason::ToolUse,
        None | Some("stop") => StopReason::EndTurn,
        Some("length") => StopReason::MaxTokens,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

/// A tool-call id for a call the server sent without one: `call_<r>_<n>`, where `r` is a
/// random 32-bit value drawn once per process (from the standard library's randomly keyed
/// hasher, mixed with the clock and the process id) and `n` a process-wide counter. Ids are
/// therefore unique across every turn of every conversation of this process, and across
/// processes with overwhelming probability (a history saved by one run and continued by the
/// next does not repeat ids).
pub fn synthesize_call_id() -> String {
    static PREFIX: OnceLock<u32> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let prefix = *PREFIX.get_or_init(|| {
        use std::hash::{BuildHasher as _, Hasher as _};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        hasher.write_u128(now);
        hasher.write_u32(std::process::id());
        hasher.finish() as u32
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
    format!("call_{prefix:08x}_{n}")
}

fn undecodable(err: &serde_json::Error, raw: &str) -> ErrorInfo {
    shared::undecodable("Ollama chat line", err, raw)
}

impl StreamDecoder for OllamaStreamDecoder {
    fn framing(&self) -> Framing {
        Framing::Ndjson
    }

    fn body(&mut self, body: &[u8], out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        let text = String::from_utf8_lossy(body);
        let whole = text.trim();
        // One JSON document (however it is laid out), else NDJSON lines.
        if serde_json::from_str::<serde::de::IgnoredAny>(whole).is_ok() {
            self.line(whole, out)?;
        } else {
            for line in text.lines() {
                self.line(line, out)?;
            }
        }
        self.finish(out)
    }

    fn frame(
        &mut self,
        frame: SseFrame<'_>,
        out: &mut VecDeque<ResponseEvent>,
    ) -> Result<(), ErrorInfo> {
        self.line(frame.data, out)
    }

    fn finish(&mut self, _out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        shared::stream_end(self.done || self.failed, "`done: true` line")
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
