//! Decoding llama.cpp `/completion` and `/infill` answers (fill-in-the-middle) into
//! [`ResponseEvent`]s.
//!
//! Both endpoints answer with the same chunk: SSE `data:` frames when streamed, one JSON
//! body otherwise; [`CompletionDecoder`] reads both the same way.
//!
//! Promises: `content` → text deltas; the `"stop": true` chunk gives usage
//! (`tokens_evaluated` → input, `tokens_predicted` → output, `timings.cache_n` → cached
//! input) and the stop reason (`stop_type` `eos` → end of turn, `word` → stop sequence,
//! `limit` → max tokens, anything else verbatim; older servers' `stopped_word` /
//! `stopped_limit` flags are read when `stop_type` is absent); an `{"error": …}` frame
//! becomes a provider error that keeps the frame; an answer that ends without its stop
//! chunk is a network error. A `[DONE]` sentinel (proxies) is ignored.

use std::borrow::Cow;
use std::collections::VecDeque;

use qore_core::{ErrorInfo, ResponseEvent, StopReason, Usage};

use super::error;
use super::fast;
use super::wire::CompletionChunk;
use crate::codec::StreamDecoder;
use crate::protocols::shared;
use crate::transport::sse::SseFrame;

/// Decoder state for one fill-in-the-middle answer.
#[derive(Debug, Default)]
pub struct CompletionDecoder {
    started: bool,
    stopped: bool,
    failed: bool,
    /// Decode every chunk through serde, never [`fast`] (to compare the two in tests).
    serde_only: bool,
}

impl CompletionDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that never takes the fast path (for differential tests and benchmarks).
    pub fn serde_only() -> Self {
        CompletionDecoder {
            serde_only: true,
            ..Self::default()
        }
    }

    fn chunk(&mut self, data: &str, out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        if self.stopped || self.failed {
            return Ok(());
        }
        if !self.serde_only {
            if let Some(chunk) = fast::parse(data) {
                crate::protocols::shared::start_once(&mut self.started, chunk.model, out);
                push_text(chunk.content, out);
                return Ok(());
            }
        }
        let mut chunk: CompletionChunk<'_> =
            serde_json::from_str(data).map_err(|err| undecodable(&err, data))?;
        if let Some(err) = chunk.error.as_ref().filter(|e| !e.is_null()) {
            self.failed = true;
            out.push_back(ResponseEvent::Error {
                error: error::in_stream(err, data),
            });
            return Ok(());
        }
        crate::protocols::shared::start_once(&mut self.started, chunk.model.take(), out);
        push_text(chunk.content.take(), out);
        if chunk.stop {
            self.stopped = true;
            let usage = Usage {
                input_tokens: chunk.tokens_evaluated,
                output_tokens: chunk.tokens_predicted,
                cached_input_tokens: chunk.timings.as_ref().and_then(|t| t.cache_n),
                ..Usage::default()
            };
            if !usage.is_empty() {
                out.push_back(ResponseEvent::Usage { usage });
            }
            out.push_back(ResponseEvent::Stop {
                reason: stop_reason(&chunk),
            });
        }
        Ok(())
    }
}

/// A chunk's text delta (an empty one is not an event).
fn push_text(content: Option<Cow<'_, str>>, out: &mut VecDeque<ResponseEvent>) {
    if let Some(text) = content.filter(|t| !t.is_empty()) {
        out.push_back(ResponseEvent::TextDelta { text: text.into() });
    }
}

/// Why generation stopped, from the last chunk.
fn stop_reason(chunk: &CompletionChunk<'_>) -> StopReason {
    match chunk.stop_type.as_deref() {
        Some("eos") => StopReason::EndTurn,
        Some("word") => StopReason::StopSequence,
        Some("limit") => StopReason::MaxTokens,
        Some(other) => StopReason::Other(other.to_owned()),
        None if chunk.stopped_word => StopReason::StopSequence,
        None if chunk.stopped_limit => StopReason::MaxTokens,
        None => StopReason::EndTurn,
    }
}

fn undecodable(err: &serde_json::Error, raw: &str) -> ErrorInfo {
    shared::undecodable("llama.cpp completion data", err, raw)
}

impl StreamDecoder for CompletionDecoder {
    fn body(&mut self, body: &[u8], out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        let text = String::from_utf8_lossy(body);
        self.chunk(&text, out)?;
        self.finish(out)
    }

    fn frame(
        &mut self,
        frame: SseFrame<'_>,
        out: &mut VecDeque<ResponseEvent>,
    ) -> Result<(), ErrorInfo> {
        if frame.is_done() || frame.data.trim().is_empty() {
            return Ok(());
        }
        self.chunk(frame.data, out)
    }

    fn finish(&mut self, _out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        shared::stream_end(self.stopped || self.failed, "`stop: true` chunk")
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
