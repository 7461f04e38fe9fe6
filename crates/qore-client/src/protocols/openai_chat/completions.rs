//! OpenAI's legacy Completions endpoint (`POST {base}/completions`) as a fill-in-the-middle
//! wire: what OpenAI-compatible servers that take a `suffix` speak (DeepSeek's
//! `/beta/completions`, vLLM, LM Studio, llama.cpp's `/v1/completions`).
//!
//! Promises:
//! - [`encode_fim`]: `{"model", "prompt" (the prefix), "suffix", "stream"}` (plus
//!   `stream_options.include_usage` when streaming), `max_tokens` and `temperature` when
//!   set, `extra` merged last at the top level; an empty model is a config error. Open
//!   files have no place on this wire and are not sent.
//! - [`TextCompletionDecoder`]: SSE `data:` chunks `{"id", "model", "choices": [{"text",
//!   "finish_reason"}], "usage"}` ended by `[DONE]`, or one whole body of the same shape:
//!   `choices[0].text` → text deltas, `finish_reason` → the stop reason (once, in
//!   `super::stream::stop_reason`'s vocabulary), `usage.prompt_tokens` /
//!   `completion_tokens` → usage; an `{"error": …}` chunk is a provider error keeping the
//!   frame; a stream with neither a finish reason nor `[DONE]` is incomplete.

use std::collections::VecDeque;

use qore_core::{ErrorInfo, ResponseEvent, Usage};
use serde_json::{json, Value};

use super::error;
use super::stream::stop_reason;
use crate::codec::{FimRequest, StreamDecoder};
use crate::protocols::shared;
use crate::transport::sse::SseFrame;

/// The body of a `POST /v1/completions` fill-in-the-middle request (`prompt` and `suffix`).
pub fn encode_fim(request: &FimRequest<'_>) -> Result<Value, ErrorInfo> {
    let mut body = shared::fim_prompt_body(request)?;
    let options = request.options;
    body.insert("stream".into(), json!(options.stream));
    if options.stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Ok(shared::finish_body(body, options, "max_tokens"))
}

/// Decoder state for one Completions answer.
#[derive(Debug, Default)]
pub struct TextCompletionDecoder {
    started: bool,
    stopped: bool,
    done: bool,
    failed: bool,
}

impl TextCompletionDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    fn chunk(&mut self, data: &str, out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        let chunk: Value = serde_json::from_str(data)
            .map_err(|err| shared::undecodable("Completions data", &err, data))?;
        if let Some(err) = chunk.get("error").filter(|e| !e.is_null()) {
            self.failed = true;
            out.push_back(ResponseEvent::Error {
                error: error::in_stream(err, data),
            });
            return Ok(());
        }
        let text = |key: &str| chunk.get(key).and_then(Value::as_str).map(str::to_owned);
        if !self.started {
            self.started = true;
            out.push_back(ResponseEvent::MessageStart {
                id: text("id"),
                model: text("model"),
            });
        }
        let choice = chunk.pointer("/choices/0");
        let delta = choice.and_then(|c| c.get("text")).and_then(Value::as_str);
        if let Some(delta) = delta.filter(|t| !t.is_empty()) {
            out.push_back(ResponseEvent::TextDelta {
                text: delta.to_owned().into(),
            });
        }
        let reason = choice.and_then(|c| c.get("finish_reason"));
        if let (Some(reason), false) = (reason.and_then(Value::as_str), self.stopped) {
            self.stopped = true;
            out.push_back(ResponseEvent::Stop {
                reason: stop_reason(reason, false),
            });
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let count = |key: &str| usage.get(key).and_then(Value::as_u64);
            let usage = Usage {
                input_tokens: count("prompt_tokens"),
                output_tokens: count("completion_tokens"),
                ..Usage::default()
            };
            if !usage.is_empty() {
                out.push_back(ResponseEvent::Usage { usage });
            }
        }
        Ok(())
    }
}

impl StreamDecoder for TextCompletionDecoder {
    fn body(&mut self, body: &[u8], out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        let text = String::from_utf8_lossy(body);
        self.chunk(&text, out)?;
        self.done = true;
        Ok(())
    }

    fn frame(
        &mut self,
        frame: SseFrame<'_>,
        out: &mut VecDeque<ResponseEvent>,
    ) -> Result<(), ErrorInfo> {
        let skip = self.done || self.failed || frame.data.trim().is_empty();
        self.done |= frame.is_done();
        match skip || self.done {
            true => Ok(()),
            false => self.chunk(frame.data, out),
        }
    }

    fn finish(&mut self, _out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        shared::stream_end(
            self.done || self.stopped || self.failed,
            "finish_reason, no [DONE]",
        )
    }
}

#[cfg(test)]
#[path = "completions_tests.rs"]
mod tests;
