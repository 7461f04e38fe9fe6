//! The parse floor of each wire: what a minimal correct client of that stream must at least
//! do, with the algorithm of `chat_stream/floor.rs`.
//!
//! One buffer: append the piece, split on '\n' with memchr, strip a '\r', keep the
//! unterminated tail. On SSE wires every `data:` line (one optional space stripped) is a
//! payload and every other line is skipped; on NDJSON every non-blank line is one.
//! `serde_json::from_slice` of each payload into a minimal borrowed struct holding just that
//! wire's delta text and its end-of-answer marker (so the floor, like qore, knows the stream
//! finished), then `push_str` of the text into one `String`. Everything else is skipped
//! by serde without being built.

use std::borrow::Cow;

use memchr::memchr;
use serde::Deserialize;
use smallvec::SmallVec;

/// What a floor pass produced.
#[derive(Debug, Default)]
pub struct Outcome {
    pub deltas: usize,
    pub text: String,
    /// The wire's end-of-answer marker was seen.
    pub done: bool,
}

impl Outcome {
    fn text(&mut self, text: Option<Cow<'_, str>>) {
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            self.deltas += 1;
            self.text.push_str(&text);
        }
    }
}

/// One wire's payload reader.
pub trait Wire {
    /// `data:` lines of an SSE body (`true`) or NDJSON lines (`false`).
    const SSE: bool;

    fn payload(out: &mut Outcome, payload: &[u8]) -> Result<(), String>;
}

fn parse<'a, T: Deserialize<'a>>(payload: &'a [u8]) -> Result<T, String> {
    serde_json::from_slice(payload).map_err(|e| e.to_string())
}

fn line<W: Wire>(out: &mut Outcome, line: &[u8]) -> Result<(), String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if W::SSE {
        if let Some(payload) = line.strip_prefix(b"data:") {
            let payload = payload.strip_prefix(b" ").unwrap_or(payload);
            W::payload(out, payload)?;
        }
    } else if !line.is_empty() {
        W::payload(out, line)?;
    }
    Ok(())
}

/// Handle every complete line of `buf`, then drop them and keep the unterminated tail.
fn split_lines<W: Wire>(out: &mut Outcome, buf: &mut Vec<u8>) -> Result<(), String> {
    let mut start = 0;
    while let Some(i) = memchr(b'\n', &buf[start..]) {
        line::<W>(out, &buf[start..start + i])?;
        start += i + 1;
    }
    buf.drain(..start);
    Ok(())
}

/// One pass over a body given in pieces.
pub fn run<W: Wire>(pieces: &[&[u8]]) -> Result<Outcome, String> {
    let mut buf: Vec<u8> = Vec::new();
    let mut out = Outcome::default();
    for piece in pieces {
        buf.extend_from_slice(piece);
        split_lines::<W>(&mut out, &mut buf)?;
    }
    if !buf.is_empty() {
        line::<W>(&mut out, &buf)?;
    }
    Ok(out)
}

/// Chat Completions: `choices[0].delta.content`, `finish_reason`; `[DONE]` ends.
pub struct OpenAiChat;

impl Wire for OpenAiChat {
    const SSE: bool = true;

    fn payload(out: &mut Outcome, payload: &[u8]) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Chunk<'a> {
            #[serde(borrow, default)]
            choices: SmallVec<[Choice<'a>; 1]>,
        }
        #[derive(Deserialize)]
        struct Choice<'a> {
            #[serde(borrow, default)]
            delta: Option<Delta<'a>>,
            #[serde(borrow, default)]
            finish_reason: Option<Cow<'a, str>>,
        }
        #[derive(Deserialize)]
        struct Delta<'a> {
            #[serde(borrow, default)]
            content: Option<Cow<'a, str>>,
        }
        if payload == b"[DONE]" {
            out.done = true;
            return Ok(());
        }
        let chunk: Chunk<'_> = parse(payload)?;
        if let Some(choice) = chunk.choices.into_iter().next() {
            out.text(choice.delta.and_then(|d| d.content));
            black_box_reason(choice.finish_reason);
        }
        Ok(())
    }
}

/// Anthropic Messages: `delta.text`; `type: message_stop` ends.
pub struct Anthropic;

impl Wire for Anthropic {
    const SSE: bool = true;

    fn payload(out: &mut Outcome, payload: &[u8]) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Event<'a> {
            #[serde(rename = "type", borrow)]
            kind: Cow<'a, str>,
            #[serde(borrow, default)]
            delta: Option<Delta<'a>>,
        }
        #[derive(Deserialize)]
        struct Delta<'a> {
            #[serde(borrow, default)]
            text: Option<Cow<'a, str>>,
        }
        let event: Event<'_> = parse(payload)?;
        out.text(event.delta.and_then(|d| d.text));
        if event.kind == "message_stop" {
            out.done = true;
        }
        Ok(())
    }
}

/// Gemini: `candidates[0].content.parts[].text`; a `finishReason` ends.
pub struct Gemini;

impl Wire for Gemini {
    const SSE: bool = true;

    fn payload(out: &mut Outcome, payload: &[u8]) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Chunk<'a> {
            #[serde(borrow, default)]
            candidates: SmallVec<[Candidate<'a>; 1]>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Candidate<'a> {
            #[serde(borrow, default)]
            content: Option<Content<'a>>,
            #[serde(borrow, default)]
            finish_reason: Option<Cow<'a, str>>,
        }
        #[derive(Deserialize)]
        struct Content<'a> {
            #[serde(borrow, default)]
            parts: SmallVec<[Part<'a>; 1]>,
        }
        #[derive(Deserialize)]
        struct Part<'a> {
            #[serde(borrow, default)]
            text: Option<Cow<'a, str>>,
        }
        let chunk: Chunk<'_> = parse(payload)?;
        if let Some(candidate) = chunk.candidates.into_iter().next() {
            for part in candidate.content.into_iter().flat_map(|c| c.parts) {
                out.text(part.text);
            }
            if candidate.finish_reason.is_some() {
                out.done = true;
            }
        }
        Ok(())
    }
}

/// Ollama `/api/chat` (NDJSON): `message.content`; `done: true` ends.
pub struct Ollama;

impl Wire for Ollama {
    const SSE: bool = false;

    fn payload(out: &mut Outcome, payload: &[u8]) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Line<'a> {
            #[serde(borrow, default)]
            message: Option<Message<'a>>,
            #[serde(default)]
            done: bool,
        }
        #[derive(Deserialize)]
        struct Message<'a> {
            #[serde(borrow, default)]
            content: Option<Cow<'a, str>>,
        }
        let line: Line<'_> = parse(payload)?;
        out.text(line.message.and_then(|m| m.content));
        out.done |= line.done;
        Ok(())
    }
}

/// llama.cpp `/completion`: `content`; `stop: true` ends.
pub struct LlamaCppFim;

impl Wire for LlamaCppFim {
    const SSE: bool = true;

    fn payload(out: &mut Outcome, payload: &[u8]) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Chunk<'a> {
            #[serde(borrow, default)]
            content: Option<Cow<'a, str>>,
            #[serde(default)]
            stop: bool,
        }
        let chunk: Chunk<'_> = parse(payload)?;
        out.text(chunk.content);
        out.done |= chunk.stop;
        Ok(())
    }
}

/// OpenAI Responses: `delta` of `response.output_text.delta` events; `response.completed`
/// ends.
pub struct OpenAiResponses;

impl Wire for OpenAiResponses {
    const SSE: bool = true;

    fn payload(out: &mut Outcome, payload: &[u8]) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Event<'a> {
            #[serde(rename = "type", borrow)]
            kind: Cow<'a, str>,
            #[serde(borrow, default)]
            delta: Option<Cow<'a, str>>,
        }
        let event: Event<'_> = parse(payload)?;
        match &*event.kind {
            "response.output_text.delta" => out.text(event.delta),
            "response.completed" => out.done = true,
            _ => {}
        }
        Ok(())
    }
}

/// The finish reason is read (a client needs it) but this floor has no use for it.
fn black_box_reason(reason: Option<Cow<'_, str>>) {
    std::hint::black_box(reason);
}
