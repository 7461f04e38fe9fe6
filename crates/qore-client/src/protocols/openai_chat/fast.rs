//! The fast path for the one chunk shape that makes up nearly every streamed delta:
//! `{..., "choices": [{"index": 0, "delta": {...}, "finish_reason": ...}], ...}`.
//!
//! Read with the shared [`Scanner`] (see `protocols/json_scan.rs` for why it is
//! hand-written); it builds the same borrowed [`Delta`] the serde path builds.
//!
//! Contract: [`parse`] returns `Some` only when the whole payload is valid JSON (RFC 8259,
//! with the input already known to be UTF-8) of a shape it fully understands: one choice at
//! index 0, string or null `content`/`reasoning_content`/`reasoning`/`refusal`, tool-call
//! deltas with string arguments, no usage, no error, no duplicate keys it reads. Anything
//! else, invalid JSON included, returns `None` and the caller decodes the payload with the
//! serde path, which also reports errors. It has no side effects, so falling back is free.

use std::borrow::Cow;

use smallvec::SmallVec;

use super::wire::{Arguments, Content, Delta, FunctionDelta, ToolCallDelta};
use crate::protocols::json_scan::Scanner;

/// What the fast path read from a chunk.
pub struct FastChunk<'a> {
    pub delta: Option<Delta<'a>>,
    pub finish_reason: Option<Cow<'a, str>>,
}

/// Decode `data` if it has the common shape; `None` otherwise (see the module doc).
pub fn parse(data: &str) -> Option<FastChunk<'_>> {
    let mut r = Scanner::new(data);
    let mut chunk = FastChunk {
        delta: None,
        finish_reason: None,
    };
    let mut choices = false;
    r.object(|r, key| match key {
        b"choices" if !choices => {
            choices = true;
            r.choices(&mut chunk)
        }
        b"usage" | b"error" => r.null(),
        b"choices" => None,
        _ => r.skip(0),
    })?;
    (choices && r.at_end()).then_some(chunk)
}

/// The chunk's shape, read with the shared [`Scanner`].
trait ChunkShape<'a> {
    fn choices(&mut self, chunk: &mut FastChunk<'a>) -> Option<()>;
    fn choice(&mut self, chunk: &mut FastChunk<'a>) -> Option<()>;
    fn delta(&mut self, delta: &mut Delta<'a>) -> Option<()>;
    fn tool_calls(&mut self) -> Option<Option<SmallVec<[ToolCallDelta<'a>; 1]>>>;
    fn tool_call(&mut self) -> Option<ToolCallDelta<'a>>;
    fn function(&mut self) -> Option<FunctionDelta<'a>>;
}

impl<'a> ChunkShape<'a> for Scanner<'a> {
    /// `[choice]`: exactly one choice, at index 0.
    fn choices(&mut self, chunk: &mut FastChunk<'a>) -> Option<()> {
        let mut seen = false;
        self.array(|r| {
            (!seen).then_some(())?;
            seen = true;
            r.choice(chunk)
        })?;
        seen.then_some(())
    }

    fn choice(&mut self, chunk: &mut FastChunk<'a>) -> Option<()> {
        self.object_once(|r, key| match key {
            b"index" => (r.index()? == 0).then_some(1),
            b"delta" => {
                if r.peek()? == b'n' {
                    r.literal(b"null")?;
                } else {
                    r.delta(chunk.delta.insert(Delta {
                        content: None,
                        reasoning_content: None,
                        reasoning: None,
                        refusal: None,
                        tool_calls: None,
                    }))?;
                }
                Some(2)
            }
            b"finish_reason" => {
                chunk.finish_reason = r.opt_str()?;
                Some(4)
            }
            b"message" => None, // a whole response's shape: serde's job
            _ => r.skip(0).map(|()| 0),
        })
    }

    fn delta(&mut self, delta: &mut Delta<'a>) -> Option<()> {
        self.object_once(|r, key| match key {
            b"content" => {
                delta.content = r.opt_str()?.map(Content::Text);
                Some(1)
            }
            b"reasoning_content" => {
                delta.reasoning_content = r.opt_str()?;
                Some(2)
            }
            b"reasoning" => {
                delta.reasoning = r.opt_str()?;
                Some(4)
            }
            b"refusal" => {
                delta.refusal = r.opt_str()?;
                Some(8)
            }
            b"tool_calls" => {
                delta.tool_calls = r.tool_calls()?;
                Some(16)
            }
            _ => r.skip(0).map(|()| 0),
        })
    }

    fn tool_calls(&mut self) -> Option<Option<SmallVec<[ToolCallDelta<'a>; 1]>>> {
        self.nullable(|r| {
            let mut calls = SmallVec::new();
            r.array(|r| {
                calls.push(r.tool_call()?);
                Some(())
            })?;
            Some(calls)
        })
    }

    fn tool_call(&mut self) -> Option<ToolCallDelta<'a>> {
        let mut call = ToolCallDelta {
            index: None,
            id: None,
            function: None,
        };
        self.object_once(|r, key| match key {
            b"index" => {
                call.index = Some(r.index()?);
                Some(1)
            }
            b"id" => {
                call.id = r.opt_str()?;
                Some(2)
            }
            b"function" => {
                call.function = Some(r.function()?);
                Some(4)
            }
            _ => r.skip(0).map(|()| 0),
        })?;
        Some(call)
    }

    fn function(&mut self) -> Option<FunctionDelta<'a>> {
        let mut function = FunctionDelta {
            name: None,
            arguments: None,
        };
        self.object_once(|r, key| match key {
            b"name" => {
                function.name = r.opt_str()?;
                Some(1)
            }
            b"arguments" => {
                function.arguments = r.opt_str()?.map(Arguments);
                Some(2)
            }
            _ => r.skip(0).map(|()| 0),
        })?;
        Some(function)
    }
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
