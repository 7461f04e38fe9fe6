//! Decoding Responses API answers into [`ResponseEvent`]s.
//!
//! Streamed: each SSE frame's data is one event, dispatched on its `type` field (the
//! `event:` line only stands in when the data has no `type`), so both framings seen in the
//! wild decode alike: `event:` + `data:` lines ending with the terminal event (OpenAI, the
//! ChatGPT Codex backend, llama.cpp) and `data:`-only lines ending in `[DONE]`
//! (OpenRouter). Output items are followed by [`super::items`]. The small events (every
//! delta) are read by [`super::fast`] when it understands them, else by serde; both build
//! the same [`WireEvent`], handled alike from there.
//!
//! The response ends with exactly one terminal event: `response.completed` (stop reason
//! `ToolUse` when function calls were made, `Refusal` after a refusal, else `EndTurn`),
//! `response.incomplete` (`max_output_tokens` → `MaxTokens`, `content_filter` → `Refusal`),
//! `response.failed` (an error with the response's `error.code`/`message`) or an `error`
//! event; after a failure, items still open (a half-streamed function call) are dropped,
//! not finished. Usage comes from the terminal response (cached and reasoning tokens
//! included).
//! Events after the terminal one are ignored; a stream that ends without one is a Network
//! error, `[DONE]` or not.
//!
//! Whole bodies (`stream: false`) are the terminal response itself: its `output` items are
//! decoded as finished items, giving the same events as the stream. A terminal event whose
//! stream carried no item events is decoded the same way from its `output`.

use std::borrow::Cow;
use std::collections::VecDeque;

use qore_core::{ErrorInfo, ProviderDetail, ResponseEvent, StopReason, Usage};

use super::error;
use super::fast;
use super::items::{Channel, ItemRef, Items};
use super::wire::{WireEvent, WireResponse, WireUsage};
use crate::codec::StreamDecoder;
use crate::protocols::shared;
use crate::transport::sse::SseFrame;

/// Decoder state for one response.
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    started: bool,
    items: Items,
    /// The terminal event (or an error event) was decoded.
    ended: bool,
    /// Decode every event through serde, never [`fast`] (to compare the two in tests).
    serde_only: bool,
}

impl ResponsesDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that never takes the fast path (for differential tests and benchmarks).
    pub fn serde_only() -> Self {
        ResponsesDecoder {
            serde_only: true,
            ..Self::default()
        }
    }

    fn start(&mut self, id: Option<Cow<'_, str>>, model: Option<Cow<'_, str>>, out: &mut Out) {
        if !self.started {
            self.started = true;
            out.push_back(ResponseEvent::MessageStart {
                id: id.map(Cow::into_owned),
                model: model.map(Cow::into_owned),
            });
        }
    }

    /// Decode one event (the data of one frame): with [`fast`] when it reads the event's
    /// shape, else with serde; both give the same [`WireEvent`].
    fn event(&mut self, data: &str, name: Option<&str>, out: &mut Out) -> Result<(), ErrorInfo> {
        let fast = if self.serde_only {
            None
        } else {
            fast::parse(data)
        };
        let event: WireEvent<'_> = match fast {
            Some(event) => event,
            None => serde_json::from_str(data).map_err(|err| undecodable(&err, data))?,
        };
        let kind = event.kind.as_deref().or(name).unwrap_or("");
        if kind == "error" {
            out.push_back(ResponseEvent::Error {
                error: error::in_stream(data),
            });
            self.ended = true;
            return Ok(());
        }
        if let Some(status) = terminal_status(kind) {
            return self.terminal(status, event.response.map(|r| *r), data, out);
        }
        if let Some(response) = event.response {
            let response = *response;
            self.start(response.id, response.model, out);
            return Ok(());
        }
        self.start(None, None, out);
        let at = ItemRef {
            item_id: event.item_id.as_deref(),
            output_index: event.output_index,
            content_index: event.content_index,
        };
        let text = event.text.and_then(|t| t.take());
        let delta = event.delta.and_then(|d| d.take());
        let items = &mut self.items;
        match kind {
            "response.output_item.added" => {
                if let Some(item) = event.item {
                    items.added(event.output_index, *item, out);
                }
            }
            "response.output_item.done" => {
                if let Some(item) = event.item {
                    items.done(event.output_index, *item, out);
                }
            }
            "response.output_text.delta" => {
                if let Some(delta) = delta {
                    items.text_delta(at, delta, false, out);
                }
            }
            "response.refusal.delta" => {
                if let Some(delta) = delta {
                    items.text_delta(at, delta, true, out);
                }
            }
            "response.output_text.done" => {
                if let Some(text) = text {
                    items.text_done(at, text, false, out);
                }
            }
            "response.refusal.done" => {
                if let Some(text) = event.refusal.and_then(|r| r.take()) {
                    items.text_done(at, text, true, out);
                }
            }
            // `reasoning_summary.*` and `reasoning.*`: names of early API versions.
            "response.reasoning_summary_text.delta" | "response.reasoning_summary.delta" => {
                let part = (Channel::Summary, event.summary_index.unwrap_or(0));
                if let Some(delta) = delta {
                    items.reasoning(at, part, delta, false, out);
                }
            }
            "response.reasoning_summary_text.done" | "response.reasoning_summary.done" => {
                let part = (Channel::Summary, event.summary_index.unwrap_or(0));
                if let Some(text) = text {
                    items.reasoning(at, part, text, true, out);
                }
            }
            "response.reasoning_text.delta" | "response.reasoning.delta" => {
                let part = (Channel::Text, event.content_index.unwrap_or(0));
                if let Some(delta) = delta {
                    items.reasoning(at, part, delta, false, out);
                }
            }
            "response.reasoning_text.done" | "response.reasoning.done" => {
                let part = (Channel::Text, event.content_index.unwrap_or(0));
                if let Some(text) = text {
                    items.reasoning(at, part, text, true, out);
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(delta) = delta {
                    items.call_args_delta(at, delta, out);
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(arguments) = event.arguments {
                    items.call_args_done(at, arguments.0);
                }
            }
            // Content and summary parts opening and closing, annotations, built-in tools:
            // nothing the deltas and finished items do not already say.
            _ => {}
        }
        Ok(())
    }

    /// A terminal event: its response says how the turn ended.
    fn terminal(
        &mut self,
        default_status: &str,
        response: Option<WireResponse<'_>>,
        raw: &str,
        out: &mut Out,
    ) -> Result<(), ErrorInfo> {
        let response = response.unwrap_or_default();
        let status = response
            .status
            .as_deref()
            .unwrap_or(default_status)
            .to_owned();
        self.finish_response(&status, response, raw, out);
        Ok(())
    }

    /// Report a final response: its items (when none streamed), usage, and how it ended.
    fn finish_response(
        &mut self,
        status: &str,
        response: WireResponse<'_>,
        raw: &str,
        out: &mut Out,
    ) {
        self.ended = true;
        self.start(response.id, response.model, out);
        if matches!(status, "completed" | "incomplete") {
            if !self.items.seen {
                for item in response.output.into_iter().flatten() {
                    self.items.done(None, item, out);
                }
            }
            self.items.close(out);
        } else {
            // A failed response: what was left open is dropped, never finished as if whole
            // (no tool call made up from half its arguments).
            self.items = Items::default();
        }
        if let Some(usage) = response.usage.as_ref().map(usage) {
            if !usage.is_empty() {
                out.push_back(ResponseEvent::Usage { usage });
            }
        }
        let reason = match status {
            "completed" if self.items.refused => StopReason::Refusal,
            "completed" if self.items.calls_made => StopReason::ToolUse,
            "completed" => StopReason::EndTurn,
            "incomplete" => {
                let reason = response.incomplete_details.and_then(|d| d.reason);
                match reason.as_deref() {
                    Some("max_output_tokens" | "max_tokens") => StopReason::MaxTokens,
                    Some("content_filter") => StopReason::Refusal,
                    Some(other) => StopReason::Other(other.to_owned()),
                    None => StopReason::Other("incomplete".to_owned()),
                }
            }
            "failed" => {
                let error = error::failed(response.error.as_ref(), raw);
                out.push_back(ResponseEvent::Error { error });
                return;
            }
            other => {
                let error = ErrorInfo::provider(format!(
                    "the response ended with status {other:?}, not completed"
                ))
                .with_detail(ProviderDetail {
                    status: None,
                    error_type: Some(other.to_owned()),
                    body: Some(raw.to_owned()),
                });
                out.push_back(ResponseEvent::Error { error });
                return;
            }
        };
        out.push_back(ResponseEvent::Stop { reason });
    }
}

type Out = VecDeque<ResponseEvent>;

/// The status a terminal event stands for, when its response does not say.
fn terminal_status(kind: &str) -> Option<&'static str> {
    match kind {
        "response.completed" | "response.done" => Some("completed"),
        "response.incomplete" => Some("incomplete"),
        "response.failed" => Some("failed"),
        "response.cancelled" => Some("cancelled"),
        _ => None,
    }
}

fn usage(wire: &WireUsage) -> Usage {
    let input = wire.input_tokens_details.as_ref();
    Usage {
        input_tokens: wire.input_tokens,
        output_tokens: wire.output_tokens,
        cached_input_tokens: input.and_then(|d| d.cached_tokens),
        cache_creation_input_tokens: input.and_then(|d| d.cache_write_tokens),
        reasoning_tokens: wire
            .output_tokens_details
            .as_ref()
            .and_then(|d| d.reasoning_tokens),
    }
}

fn undecodable(err: &serde_json::Error, raw: &str) -> ErrorInfo {
    shared::undecodable("Responses API data", err, raw)
}

impl StreamDecoder for ResponsesDecoder {
    fn body(&mut self, body: &[u8], out: &mut Out) -> Result<(), ErrorInfo> {
        let text = String::from_utf8_lossy(body);
        let response: WireResponse<'_> =
            serde_json::from_str(&text).map_err(|err| undecodable(&err, &text))?;
        let failed = response.error.is_some();
        let status = match (response.status.as_deref(), failed) {
            (Some(status), _) => status.to_owned(),
            (None, true) => "failed".to_owned(),
            (None, false) => "completed".to_owned(),
        };
        self.finish_response(&status, response, &text, out);
        Ok(())
    }

    fn frame(&mut self, frame: SseFrame<'_>, out: &mut Out) -> Result<(), ErrorInfo> {
        // An event starts with `{`: no need to trim it to know it is neither `[DONE]` nor
        // blank.
        let event = frame.data.starts_with('{');
        if self.ended || (!event && (frame.is_done() || frame.data.trim().is_empty())) {
            return Ok(());
        }
        self.event(frame.data, frame.event, out)
    }

    fn finish(&mut self, _out: &mut Out) -> Result<(), ErrorInfo> {
        shared::stream_end(self.ended, "response.completed")
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
