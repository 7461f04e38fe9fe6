//! Decoding Gemini answers (`GenerateContentResponse`) into [`ResponseEvent`]s.
//!
//! Streamed (`:streamGenerateContent?alt=sse`, one response object per SSE frame) and whole
//! answers (`:generateContent`: one object, or an array of them) go through the same
//! [`GeminiStreamDecoder`]. Only the first candidate (`index` 0) is the assistant's turn.
//! A streamed frame of the common delta shape (text or thought parts, usage, no finish
//! reason) is read by [`fast`] and goes through the same steps (`GeminiStreamDecoder::head`,
//! `GeminiStreamDecoder::part`); anything else, and every whole body, through serde.
//!
//! Promises, per part of that candidate, in order:
//! - `text` becomes [`ResponseEvent::TextDelta`], or [`ResponseEvent::ThinkingDelta`] when
//!   the part is a thought (`thought: true`);
//! - `functionCall {name, args, id?}` becomes a whole tool call (start, the arguments as
//!   one JSON delta, end with the parsed object); a call without `id` gets one from
//!   [`super::ids`] (unique across the conversation);
//! - `thoughtSignature` stays on the part it came with: the part's events, then
//!   [`ResponseEvent::PartSignature`], which the assembler attaches to the block just
//!   folded and after which it starts a new block. A signature on an empty text part (the
//!   last chunk of a streamed answer) signs the text streamed before it; when nothing of
//!   that kind is open, an empty block of the part's kind carries it;
//! - code execution parts and generated media are not represented in the content model:
//!   they are skipped, with any signature they carry (they are not replayed either).
//!
//! `finishReason`: the last one a stream reports is the turn's (a stream with code
//! execution may report `STOP` mid-way and go on). `STOP` is `EndTurn`, or `ToolUse` when
//! function calls were made; `MAX_TOKENS` is `MaxTokens`; filters and unusable answers fail
//! the turn ([`super::finish`]); so does `promptFeedback.blockReason`. An error object
//! inside a 200 answer fails it with the provider's message and code. A body that ends
//! without any `finishReason` was cut: a Network error.
//!
//! Usage (cumulative in every chunk; reported once, at the end): `input_tokens` = the
//! prompt (`promptTokenCount`, cached part included) plus tool-use prompt tokens (code
//! execution results fed back, billed as input); `output_tokens` = what is billed as output:
//! the answer (`candidatesTokenCount`, which excludes thoughts) plus the thoughts
//! (`thoughtsTokenCount`), so input + output = Gemini's `totalTokenCount`;
//! `reasoning_tokens` = the thoughts; `cached_input_tokens` = `cachedContentTokenCount`.

use std::borrow::Cow;
use std::collections::VecDeque;

use qore_core::{ErrorInfo, ResponseEvent, ToolCallInput, Usage};
use serde_json::Value;

use super::fast::{self, FastChunk};
use super::finish::{self, Finish};
use super::wire::{Chunk, FunctionCall, Part, UsageMetadata};
use super::{error, ids};
use crate::codec::StreamDecoder;
use crate::protocols::shared;
use crate::transport::sse::SseFrame;

/// The last block the assembler holds, as far as the events sent so far tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Open {
    /// Nothing yet, or a block later deltas do not extend (signed, or a tool call).
    #[default]
    Closed,
    /// An unsigned text block: the next text delta extends it.
    Text,
    /// An unsigned thinking block.
    Thinking,
}

/// Decoder state for one response.
#[derive(Debug, Default)]
pub struct GeminiStreamDecoder {
    started: bool,
    open: Open,
    /// Function calls made so far (STOP with calls is ToolUse).
    calls: usize,
    /// The last `finishReason` reported (normal ends only; blocks fail at once).
    finish_reason: Option<String>,
    /// The turn already failed (error chunk, blocked answer or prompt).
    failed: bool,
    /// [`StreamDecoder::finish`] ran.
    finished: bool,
    usage: Usage,
    /// Decode every frame through serde, never [`fast`] (to compare the two in tests).
    serde_only: bool,
}

impl GeminiStreamDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that never takes the fast path (for differential tests and benchmarks).
    pub fn serde_only() -> Self {
        Self {
            serde_only: true,
            ..Self::default()
        }
    }

    /// Decode one response object; `raw` is the text it came in (kept in errors).
    fn chunk(&mut self, chunk: Chunk<'_>, raw: &str, out: &mut VecDeque<ResponseEvent>) {
        if self.failed {
            return;
        }
        if let Some(error) = chunk.error.as_ref().filter(|e| !e.is_null()) {
            return self.fail(error::in_stream(error, raw), out);
        }
        self.head(
            chunk.response_id,
            chunk.model_version,
            chunk.usage_metadata.as_ref(),
            out,
        );
        if let Some(feedback) = chunk.prompt_feedback {
            if let Some(reason) = feedback.block_reason {
                let detail = feedback.block_reason_message.as_deref();
                return self.fail(finish::blocked_prompt(&reason, detail, raw), out);
            }
        }
        for (position, candidate) in chunk.candidates.into_iter().flatten().enumerate() {
            if candidate.index.unwrap_or(position as u32) != 0 {
                continue; // candidateCount > 1: only the first candidate is the turn
            }
            let parts = candidate.content.and_then(|c| c.parts);
            for part in parts.into_iter().flatten() {
                self.part(part, out);
                if self.failed {
                    return;
                }
            }
            if let Some(reason) = candidate.finish_reason {
                match finish::finish(&reason, self.calls > 0) {
                    Finish::Blocked(why) => {
                        let detail = candidate.finish_message.as_deref();
                        let error = finish::blocked_error(&reason, why, detail, raw);
                        return self.fail(error, out);
                    }
                    Finish::Stop(_) => self.finish_reason = Some(reason.into_owned()),
                }
            }
        }
    }

    /// What every chunk starts with: the message start (first chunk only) and its usage.
    fn head(
        &mut self,
        response_id: Option<Cow<'_, str>>,
        model_version: Option<Cow<'_, str>>,
        usage_metadata: Option<&UsageMetadata>,
        out: &mut VecDeque<ResponseEvent>,
    ) {
        if !self.started {
            self.started = true;
            out.push_back(ResponseEvent::MessageStart {
                id: response_id.map(Into::into),
                model: model_version.map(Into::into),
            });
        }
        if let Some(metadata) = usage_metadata {
            self.usage.merge(&usage(metadata));
        }
    }

    /// A chunk [`fast::parse`] read: the same steps as [`Self::chunk`] takes for that shape
    /// (no error, no prompt feedback, the first candidate's parts, no finish reason).
    fn fast_chunk(&mut self, chunk: FastChunk<'_>, out: &mut VecDeque<ResponseEvent>) {
        self.head(
            chunk.response_id,
            chunk.model_version,
            chunk.usage_metadata.as_ref(),
            out,
        );
        for part in chunk.parts {
            self.part(part, out);
            if self.failed {
                return;
            }
        }
    }

    fn part(&mut self, part: Part<'_>, out: &mut VecDeque<ResponseEvent>) {
        if part.is_unrepresented() {
            return;
        }
        let signature = part.thought_signature.filter(|s| !s.is_empty());
        if let Some(call) = part.function_call {
            self.function_call(*call, out);
        } else {
            let thought = part.thought == Some(true);
            let kind = if thought { Open::Thinking } else { Open::Text };
            let text = part.text.unwrap_or_default();
            // An empty part still makes a block when its signature has nothing to sign.
            if !text.is_empty() || (signature.is_some() && self.open != kind) {
                out.push_back(if thought {
                    ResponseEvent::ThinkingDelta { text: text.into() }
                } else {
                    ResponseEvent::TextDelta { text: text.into() }
                });
                self.open = kind;
            }
        }
        if let Some(signature) = signature {
            out.push_back(ResponseEvent::PartSignature {
                signature: signature.into_owned(),
            });
            self.open = Open::Closed;
        }
    }

    fn function_call(&mut self, call: FunctionCall<'_>, out: &mut VecDeque<ResponseEvent>) {
        let Some(name) = call.name.filter(|n| !n.is_empty()) else {
            let error = ErrorInfo::provider("Gemini sent a function call without a name");
            return self.fail(error, out);
        };
        let id = match call.id.filter(|id| !id.is_empty()) {
            Some(id) => id.into_owned(),
            None => ids::synthesize(),
        };
        let args = match call.args {
            None | Some(Value::Null) => Value::Object(Default::default()),
            Some(args) => args,
        };
        self.calls += 1;
        self.open = Open::Closed;
        out.push_back(ResponseEvent::ToolCallStart {
            id: id.clone(),
            name: name.into_owned(),
        });
        out.push_back(ResponseEvent::ToolCallArgsDelta {
            id: id.as_str().into(),
            delta: args.to_string().into(),
        });
        out.push_back(ResponseEvent::ToolCallEnd {
            id,
            input: ToolCallInput::Parsed(args),
        });
    }

    /// The turn failed: report the usage so far, then the error; later chunks are ignored.
    fn fail(&mut self, error: ErrorInfo, out: &mut VecDeque<ResponseEvent>) {
        self.push_usage(out);
        out.push_back(ResponseEvent::Error { error });
        self.failed = true;
    }

    fn push_usage(&mut self, out: &mut VecDeque<ResponseEvent>) {
        if !self.usage.is_empty() {
            out.push_back(ResponseEvent::Usage { usage: self.usage });
            self.usage = Usage::default();
        }
    }

    fn decode_text(
        &mut self,
        text: &str,
        out: &mut VecDeque<ResponseEvent>,
    ) -> Result<(), ErrorInfo> {
        let chunk: Chunk<'_> = serde_json::from_str(text).map_err(|err| undecodable(err, text))?;
        self.chunk(chunk, text, out);
        Ok(())
    }
}

fn usage(metadata: &UsageMetadata) -> Usage {
    let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    Usage {
        input_tokens: sum(
            metadata.prompt_token_count,
            metadata.tool_use_prompt_token_count,
        ),
        output_tokens: sum(
            metadata.candidates_token_count,
            metadata.thoughts_token_count,
        ),
        cached_input_tokens: metadata.cached_content_token_count,
        cache_creation_input_tokens: None,
        reasoning_tokens: metadata.thoughts_token_count,
    }
}

fn undecodable(err: serde_json::Error, raw: &str) -> ErrorInfo {
    shared::undecodable("Gemini data", &err, raw)
}

impl StreamDecoder for GeminiStreamDecoder {
    fn body(&mut self, body: &[u8], out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        let text = String::from_utf8_lossy(body);
        if text.trim_start().starts_with('[') {
            let chunks: Vec<Chunk<'_>> =
                serde_json::from_str(&text).map_err(|err| undecodable(err, &text))?;
            for chunk in chunks {
                self.chunk(chunk, &text, out);
            }
        } else {
            self.decode_text(&text, out)?;
        }
        self.finish(out)
    }

    fn frame(
        &mut self,
        frame: SseFrame<'_>,
        out: &mut VecDeque<ResponseEvent>,
    ) -> Result<(), ErrorInfo> {
        if self.failed || frame.data.trim().is_empty() || frame.is_done() {
            return Ok(());
        }
        if !self.serde_only {
            if let Some(chunk) = fast::parse(frame.data) {
                self.fast_chunk(chunk, out);
                return Ok(());
            }
        }
        self.decode_text(frame.data, out)
    }

    fn finish(&mut self, out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo> {
        if self.failed || self.finished {
            return Ok(());
        }
        self.finished = true;
        self.push_usage(out);
        match self.finish_reason.take() {
            Some(reason) => {
                if let Finish::Stop(reason) = finish::finish(&reason, self.calls > 0) {
                    out.push_back(ResponseEvent::Stop { reason });
                }
                Ok(())
            }
            None => Err(ErrorInfo::network(
                "the stream ended before the response was complete (no finishReason)",
            )),
        }
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
