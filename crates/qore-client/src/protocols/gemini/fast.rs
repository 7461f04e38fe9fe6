//! The fast path for the chunk that makes up nearly every streamed Gemini delta:
//! `{"candidates": [{"content": {"parts": [{"text": ...}], "role": "model"}, "index": 0}],
//! "usageMetadata": {...}, "modelVersion": ..., "responseId": ...}`.
//!
//! Read with the shared [`Scanner`] (see `protocols/json_scan.rs` for why it is
//! hand-written); it builds the same borrowed wire values the serde path builds: the
//! [`Part`]s of the first candidate and the chunk's [`UsageMetadata`], which the decoder
//! then hands to the same methods the serde path calls.
//!
//! Contract: [`parse`] returns `Some` only when the whole payload is valid JSON (RFC 8259,
//! with the input already known to be UTF-8) of a shape it fully understands: an object with
//! at most one candidate, at index 0 (or without an index), whose `finishReason` is absent or
//! null and whose parts hold only `text`, `thought` and `thoughtSignature` (strings, a bool,
//! or null); `usageMetadata` with non-negative integer (or null) counts; string or null
//! `modelVersion` and `responseId`; `promptFeedback` and `error` absent or null; no duplicate
//! keys it reads. Unknown keys are skipped (their values checked with [`Scanner::skip`]).
//! Anything else (function calls, code execution and media parts, finish reasons, blocked
//! prompts, errors, several candidates, invalid JSON) returns `None` and the caller decodes
//! the payload with the serde path, which also reports errors. It has no side effects, so
//! falling back is free.

use std::borrow::Cow;

use smallvec::SmallVec;

use super::wire::{Part, UsageMetadata};
use crate::protocols::json_scan::Scanner;

/// What the fast path read from a chunk.
pub struct FastChunk<'a> {
    pub response_id: Option<Cow<'a, str>>,
    pub model_version: Option<Cow<'a, str>>,
    pub usage_metadata: Option<UsageMetadata>,
    /// The parts of the first candidate, in order.
    pub parts: SmallVec<[Part<'a>; 2]>,
}

/// Decode `data` if it has the common shape; `None` otherwise (see the module doc).
pub fn parse(data: &str) -> Option<FastChunk<'_>> {
    let mut r = Scanner::new(data);
    let mut chunk = FastChunk {
        response_id: None,
        model_version: None,
        usage_metadata: None,
        parts: SmallVec::new(),
    };
    r.object_once(|r, key| match key {
        b"candidates" => {
            r.nullable(|r| r.candidates(&mut chunk.parts))?;
            Some(1)
        }
        b"usageMetadata" => {
            chunk.usage_metadata = r.nullable(|r| r.usage())?;
            Some(2)
        }
        b"modelVersion" => {
            chunk.model_version = r.opt_str()?;
            Some(4)
        }
        b"responseId" => {
            chunk.response_id = r.opt_str()?;
            Some(8)
        }
        // A blocked prompt or an error object: serde's job (null is their absence).
        b"promptFeedback" => r.null().map(|()| 16),
        b"error" => r.null().map(|()| 32),
        _ => r.skip(0).map(|()| 0),
    })?;
    r.at_end().then_some(chunk)
}

/// The chunk's shape, read with the shared [`Scanner`].
trait ChunkShape<'a> {
    fn candidates(&mut self, parts: &mut SmallVec<[Part<'a>; 2]>) -> Option<()>;
    fn candidate(&mut self, parts: &mut SmallVec<[Part<'a>; 2]>) -> Option<()>;
    fn content(&mut self, parts: &mut SmallVec<[Part<'a>; 2]>) -> Option<()>;
    fn part(&mut self) -> Option<Part<'a>>;
    fn usage(&mut self) -> Option<UsageMetadata>;
    fn count(&mut self) -> Option<Option<u64>>;
}

impl<'a> ChunkShape<'a> for Scanner<'a> {
    /// `[]` or `[candidate]`: several candidates are serde's job.
    fn candidates(&mut self, parts: &mut SmallVec<[Part<'a>; 2]>) -> Option<()> {
        let mut seen = false;
        self.array(|r| {
            (!seen).then_some(())?;
            seen = true;
            r.candidate(parts)
        })
    }

    fn candidate(&mut self, parts: &mut SmallVec<[Part<'a>; 2]>) -> Option<()> {
        self.object_once(|r, key| match key {
            b"content" => {
                r.nullable(|r| r.content(parts))?;
                Some(1)
            }
            // The end of the turn (or a blocked answer): serde's job.
            b"finishReason" => r.null().map(|()| 2),
            // Only read with a finish reason; its type is still checked.
            b"finishMessage" => r.opt_str().map(|_| 4),
            // The only candidate is at position 0: index 0, or none, is the turn's.
            b"index" => (r.nullable(Scanner::index)?.unwrap_or(0) == 0).then_some(8),
            _ => r.skip(0).map(|()| 0),
        })
    }

    fn content(&mut self, parts: &mut SmallVec<[Part<'a>; 2]>) -> Option<()> {
        self.object_once(|r, key| match key {
            b"parts" => {
                r.nullable(|r| {
                    r.array(|r| {
                        parts.push(r.part()?);
                        Some(())
                    })
                })?;
                Some(1)
            }
            _ => r.skip(0).map(|()| 0),
        })
    }

    fn part(&mut self) -> Option<Part<'a>> {
        let mut part = Part {
            text: None,
            thought: None,
            thought_signature: None,
            function_call: None,
            executable_code: None,
            code_execution_result: None,
            inline_data: None,
            file_data: None,
        };
        self.object_once(|r, key| match key {
            b"text" => {
                part.text = r.opt_str()?;
                Some(1)
            }
            b"thought" => {
                part.thought = r.nullable(Scanner::bool)?;
                Some(2)
            }
            b"thoughtSignature" => {
                part.thought_signature = r.opt_str()?;
                Some(4)
            }
            // Function calls and the kinds the content model does not represent.
            b"functionCall"
            | b"executableCode"
            | b"codeExecutionResult"
            | b"inlineData"
            | b"fileData" => None,
            _ => r.skip(0).map(|()| 0),
        })?;
        Some(part)
    }

    fn usage(&mut self) -> Option<UsageMetadata> {
        let mut usage = UsageMetadata::default();
        self.object_once(|r, key| match key {
            b"promptTokenCount" => {
                usage.prompt_token_count = r.count()?;
                Some(1)
            }
            b"cachedContentTokenCount" => {
                usage.cached_content_token_count = r.count()?;
                Some(2)
            }
            b"candidatesTokenCount" => {
                usage.candidates_token_count = r.count()?;
                Some(4)
            }
            b"thoughtsTokenCount" => {
                usage.thoughts_token_count = r.count()?;
                Some(8)
            }
            b"toolUsePromptTokenCount" => {
                usage.tool_use_prompt_token_count = r.count()?;
                Some(16)
            }
            _ => r.skip(0).map(|()| 0),
        })?;
        Some(usage)
    }

    /// A token count: `null` or a non-negative integer that fits a `u64` (no fraction, no
    /// exponent, no sign: serde rejects the first two and reads the third differently).
    fn count(&mut self) -> Option<Option<u64>> {
        self.nullable(|r| {
            let text = r.number()?;
            text.bytes().all(|b| b.is_ascii_digit()).then_some(())?;
            text.parse().ok()
        })
    }
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
