//! The parse floor: what a minimal correct stream client must at least do (Chat Completions
//! or Anthropic Messages, whichever the workload is written in).
//!
//! reqwest's `bytes_stream()`, a memchr line splitter over one buffer (append the chunk,
//! split on '\n', keep the unterminated tail), `serde_json::from_slice` of each `data:`
//! payload into a minimal borrowed struct, counting the deltas. To produce the same result
//! as qore it also appends each delta to one `String` and parses the finished tool-call
//! arguments once (both are O(bytes) and tiny next to the per-delta parse). On Anthropic the
//! struct holds the event type and the delta's `text`, `partial_json` and `stop_reason`;
//! `event:` lines are skipped like any non-`data:` line.

use std::borrow::Cow;

use futures_util::StreamExt as _;
use memchr::memchr;
use serde::Deserialize;
use smallvec::SmallVec;

use crate::workload::Wire;

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
    #[serde(borrow, default)]
    tool_calls: Option<SmallVec<[ToolCall<'a>; 1]>>,
}

#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
}

/// An Anthropic Messages event, as much as the floor reads of it.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    delta: Option<EventDelta<'a>>,
}

#[derive(Deserialize)]
struct EventDelta<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
}

#[derive(Debug, Default)]
pub struct Outcome {
    /// The wire the payloads are read as.
    pub wire: Wire,
    pub deltas: usize,
    pub text: String,
    pub args: String,
    pub input: Option<serde_json::Value>,
    pub finish_reason: Option<String>,
    pub done: bool,
}

impl Outcome {
    pub fn new(wire: Wire) -> Self {
        Outcome {
            wire,
            ..Outcome::default()
        }
    }

    /// The body ended: parse the finished tool-call arguments.
    pub fn finish(&mut self) -> Result<(), String> {
        if !self.args.is_empty() {
            self.input = Some(serde_json::from_str(&self.args).map_err(|e| e.to_string())?);
        }
        Ok(())
    }

    /// Handle every complete line of `buf`, then drop them and keep the unterminated tail.
    pub fn split_lines(&mut self, buf: &mut Vec<u8>) -> Result<(), String> {
        let mut start = 0;
        while let Some(i) = memchr(b'\n', &buf[start..]) {
            let line = &buf[start..start + i];
            start += i + 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if let Some(payload) = line.strip_prefix(b"data:") {
                let payload = payload.strip_prefix(b" ").unwrap_or(payload);
                self.payload(payload)?;
            }
        }
        buf.drain(..start);
        Ok(())
    }

    fn payload(&mut self, payload: &[u8]) -> Result<(), String> {
        match self.wire {
            Wire::OpenAiChat => self.chunk(payload),
            Wire::Anthropic => self.event(payload),
        }
    }

    fn event(&mut self, payload: &[u8]) -> Result<(), String> {
        let event: Event<'_> = serde_json::from_slice(payload).map_err(|e| e.to_string())?;
        if let Some(delta) = event.delta {
            if let Some(text) = delta.text.filter(|t| !t.is_empty()) {
                self.deltas += 1;
                self.text.push_str(&text);
            }
            if let Some(args) = delta.partial_json.filter(|a| !a.is_empty()) {
                self.deltas += 1;
                self.args.push_str(&args);
            }
            if let Some(reason) = delta.stop_reason {
                self.finish_reason = Some(reason.into_owned());
            }
        }
        if event.kind == "message_stop" {
            self.done = true;
        }
        Ok(())
    }

    fn chunk(&mut self, payload: &[u8]) -> Result<(), String> {
        if payload == b"[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Chunk<'_> = serde_json::from_slice(payload).map_err(|e| e.to_string())?;
        let Some(choice) = chunk.choices.into_iter().next() else {
            return Ok(());
        };
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.deltas += 1;
                self.text.push_str(&text);
            }
            for call in delta.tool_calls.into_iter().flatten() {
                if let Some(args) = call.function.and_then(|f| f.arguments) {
                    if !args.is_empty() {
                        self.deltas += 1;
                        self.args.push_str(&args);
                    }
                }
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(reason.into_owned());
        }
        Ok(())
    }
}

/// One request, the whole answer read and parsed; with `pause`, the client sleeps that long
/// after the first chunk (returned: how long it slept).
pub async fn run(
    http: &reqwest::Client,
    url: &str,
    wire: Wire,
    pause: Option<std::time::Duration>,
) -> Result<(Outcome, std::time::Duration), String> {
    let response = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(wire.request().to_vec())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let mut bytes = response.bytes_stream();
    let mut buf: Vec<u8> = Vec::new();
    let mut out = Outcome::new(wire);
    let mut paused = std::time::Duration::ZERO;
    let mut pause = pause;
    while let Some(chunk) = bytes.next().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        buf.extend_from_slice(&chunk);
        out.split_lines(&mut buf)?;
        if let Some(wait) = pause.take() {
            let at = std::time::Instant::now();
            tokio::time::sleep(wait).await;
            paused = at.elapsed();
        }
    }
    out.finish()?;
    Ok((out, paused))
}
