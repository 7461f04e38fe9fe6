//! Decoding Anthropic Messages responses into [`ResponseEvent`]s.
//!
//! Streamed events and whole bodies go through the same [`MessagesStreamDecoder`]: a whole
//! body is a `message_start` whose blocks each start and stop at once.
//!
//! - content blocks are tracked by their `index`, so deltas of several blocks may interleave;
//!   text and thinking deltas become [`ResponseEvent::TextDelta`] /
//!   [`ResponseEvent::ThinkingDelta`], a `signature_delta` the signature of the thinking
//!   block it belongs to (a signed thinking block with no text still becomes a block of its
//!   own), `redacted_thinking` one [`ResponseEvent::RedactedThinking`] with its `data`;
//! - a `tool_use` is announced at its start; its `input_json_delta`s accumulate linearly and
//!   are parsed once, when the block stops (or, for a block that never stopped, at
//!   `message_stop`); a whole body's `input` object is taken as parsed;
//! - blocks of server tools (`server_tool_use`, `web_search_tool_result`, ...) and citation
//!   deltas are skipped: the provider ran those tools itself;
//! - usage from `message_start` and `message_delta` is reported as it comes; a later zero
//!   never replaces an earlier non-zero count;
//! - an `error` event fails the turn (status `None`, the provider's type and message), and so
//!   does a `message_start` of another message (or of one without an id) before the first
//!   message stopped (a spliced or replayed stream): both are provider errors, and the
//!   blocks still open are dropped, never finished (no tool call made up from half its
//!   arguments); a repeated `message_start` naming the open message's id is a duplicate and
//!   is ignored (no second start, no usage from it); a stream that ends without
//!   `message_stop` is a `Network` error; anything after `message_stop` (a gateway's
//!   `[DONE]`) is ignored.

use std::collections::VecDeque;

use qore_core::{ErrorInfo, ProviderDetail, ResponseEvent, StopReason, Usage};

use super::error;
use super::fast::{self, FastEvent};
use super::wire::{EventKind, MessageBody, StreamEvent, WireUsage};
use crate::codec::StreamDecoder;
use crate::protocols::shared;
use crate::transport::sse::SseFrame;

#[path = "blocks.rs"]
mod blocks;
use blocks::OpenBlock;

/// Decoder state for one response.
#[derive(Debug, Default)]
pub struct MessagesStreamDecoder {
    started: bool,
    /// A `message_start` event was decoded (a second one of another id means a spliced
    /// stream).
    message_started: bool,
    /// The id that `message_start` named (a repeat with this id is a duplicate).
    message_id: Option<String>,
    /// Content blocks started and not yet stopped, in start order.
    open: Vec<OpenBlock>,
    /// How many blocks started (the index of a block whose event names none).
    blocks_started: u32,
    /// Usage reported so far, merged.
    usage: Usage,
    stopped: bool,
    /// `message_stop` seen (or a whole body decoded).
    complete: bool,
    /// An `error` event ended the stream.
    failed: bool,
    /// Decode every frame through serde, never [`fast`] (to compare the two in tests).
    serde_only: bool,
}

impl MessagesStreamDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that never takes the fast path (for differential tests and benchmarks).
    pub fn serde_only() -> Self {
        MessagesStreamDecoder {
            serde_only: true,
            ..Self::default()
        }
    }

    fn start(&mut self, id: Option<String>, model: Option<String>, out: &mut Out) {
        self.started = true;
        out.push_back(ResponseEvent::MessageStart { id, model });
    }

    fn ensure_started(&mut self, out: &mut Out) {
        if !self.started {
            self.start(None, None, out);
        }
    }

    fn event(&mut self, event: StreamEvent<'_>, raw: &str, out: &mut Out) {
        match event.kind {
            EventKind::MessageStart => {
                let message = event.message;
                let id = message.as_ref().and_then(|m| m.id.as_deref());
                if self.message_started && id.is_some() && id == self.message_id.as_deref() {
                    return;
                }
                if self.message_started {
                    let error = ErrorInfo::provider(
                        "the stream started a second message before the first one ended \
                         (message_start of another id before message_stop: a spliced or \
                         replayed stream)",
                    );
                    self.fail(error, raw, out);
                    return;
                }
                self.message_started = true;
                self.message_id = id.map(str::to_owned);
                if !self.started {
                    let model = message.as_ref().and_then(|m| m.model.as_deref());
                    self.start(id.map(str::to_owned), model.map(str::to_owned), out);
                }
                if let Some(usage) = message.as_ref().and_then(|m| m.usage.as_ref()) {
                    self.report_usage(usage, out);
                }
            }
            EventKind::ContentBlockStart => {
                self.ensure_started(out);
                if let Some(block) = event.content_block {
                    let index = event.index.unwrap_or(self.blocks_started);
                    self.block_start(index, *block, out);
                }
            }
            EventKind::ContentBlockDelta => {
                if let Some(delta) = event.delta {
                    self.block_delta(event.index, delta, out);
                }
            }
            EventKind::ContentBlockStop => {
                let index = event.index.or_else(|| self.open.last().map(|b| b.index));
                if let Some(index) = index {
                    self.block_stop(index, out);
                }
            }
            EventKind::MessageDelta => {
                self.ensure_started(out);
                if let Some(reason) = event.delta.and_then(|d| d.stop_reason.take()) {
                    self.stop(&reason, out);
                }
                if let Some(usage) = &event.usage {
                    self.report_usage(usage, out);
                }
            }
            EventKind::MessageStop => {
                self.close_blocks(out);
                self.complete = true;
            }
            EventKind::Ping => {}
            EventKind::Error | EventKind::Unknown => {
                // An unknown event kind is skipped, unless it carries an error.
                if event.kind == EventKind::Error || event.error.is_some() {
                    let error = error::in_stream(event.error.as_deref(), raw);
                    self.fail(error, raw, out);
                }
            }
        }
    }

    /// The stream failed: open blocks are dropped, later frames ignored.
    fn fail(&mut self, mut error: ErrorInfo, raw: &str, out: &mut Out) {
        self.failed = true;
        self.open.clear();
        if error.provider.is_none() {
            error = error.with_detail(ProviderDetail {
                status: None,
                error_type: None,
                body: Some(raw.to_owned()),
            });
        }
        out.push_back(ResponseEvent::Error { error });
    }

    fn stop(&mut self, reason: &str, out: &mut Out) {
        if !self.stopped {
            self.stopped = true;
            out.push_back(ResponseEvent::Stop {
                reason: stop_reason(reason),
            });
        }
    }

    fn report_usage(&mut self, wire: &WireUsage, out: &mut Out) {
        let mut usage = wire.usage();
        let earlier = &self.usage;
        for (later, earlier) in [
            (&mut usage.input_tokens, earlier.input_tokens),
            (&mut usage.output_tokens, earlier.output_tokens),
            (&mut usage.cached_input_tokens, earlier.cached_input_tokens),
            (
                &mut usage.cache_creation_input_tokens,
                earlier.cache_creation_input_tokens,
            ),
            (&mut usage.reasoning_tokens, earlier.reasoning_tokens),
        ] {
            if *later == Some(0) && earlier.is_some_and(|n| n > 0) {
                *later = None;
            }
        }
        if !usage.is_empty() {
            self.usage.merge(&usage);
            out.push_back(ResponseEvent::Usage { usage });
        }
    }

    fn whole(&mut self, message: MessageBody<'_>, out: &mut Out) {
        self.start(
            message.id.map(|id| id.into_owned()),
            message.model.map(|model| model.into_owned()),
            out,
        );
        if let Some(usage) = &message.usage {
            self.report_usage(usage, out);
        }
        for (index, block) in (0u32..).zip(message.content) {
            self.block_start(index, block, out);
            self.block_stop(index, out);
        }
        if let Some(reason) = message.stop_reason {
            self.stop(&reason, out);
        }
        self.complete = true;
    }
}

type Out = VecDeque<ResponseEvent>;

/// The wire's `stop_reason` in our vocabulary. `model_context_window_exceeded` cut the answer
/// at a token limit, like `max_tokens`.
pub fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" => StopReason::EndTurn,
        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "tool_use" => StopReason::ToolUse,
        "pause_turn" => StopReason::PauseTurn,
        "refusal" => StopReason::Refusal,
        other => StopReason::Other(other.to_owned()),
    }
}

fn undecodable(err: serde_json::Error, raw: &str) -> ErrorInfo {
    shared::undecodable("Anthropic Messages data", &err, raw)
}

impl StreamDecoder for MessagesStreamDecoder {
    fn body(&mut self, body: &[u8], out: &mut Out) -> Result<(), ErrorInfo> {
        let text = String::from_utf8_lossy(body);
        let message: MessageBody<'_> =
            serde_json::from_str(&text).map_err(|err| undecodable(err, &text))?;
        match message.kind.as_deref() {
            Some("error") => return Err(error::in_stream(message.error.as_ref(), &text)),
            _ if message.error.is_some() => {
                return Err(error::in_stream(message.error.as_ref(), &text))
            }
            Some("message") => {}
            None if message.id.is_some() || !message.content.is_empty() => {}
            other => {
                return Err(ErrorInfo::provider(format!(
                    "the response is not a message (type {other:?})"
                ))
                .with_detail(ProviderDetail {
                    status: None,
                    error_type: None,
                    body: Some(text.clone().into_owned()),
                }))
            }
        }
        self.whole(message, out);
        Ok(())
    }

    fn frame(&mut self, frame: SseFrame<'_>, out: &mut Out) -> Result<(), ErrorInfo> {
        // Nearly every frame is a JSON object: only other data can be `[DONE]` or blank.
        let object = frame.data.starts_with('{');
        if self.complete
            || self.failed
            || (!object && (frame.is_done() || frame.data.trim().is_empty()))
        {
            return Ok(());
        }
        if !self.serde_only {
            match fast::parse(frame.data) {
                Some(FastEvent::BlockDelta(index, delta)) => {
                    self.block_delta(index, delta, out);
                    return Ok(());
                }
                Some(FastEvent::Nothing) => return Ok(()),
                None => {}
            }
        }
        let event: StreamEvent<'_> =
            serde_json::from_str(frame.data).map_err(|err| undecodable(err, frame.data))?;
        self.event(event, frame.data, out);
        Ok(())
    }

    fn finish(&mut self, _out: &mut Out) -> Result<(), ErrorInfo> {
        if self.complete || self.failed {
            return Ok(());
        }
        self.open.clear();
        Err(ErrorInfo::network(
            "the stream ended before the response was complete (no message_stop)",
        ))
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
