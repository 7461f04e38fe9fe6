//! The token estimate: how much of the model's context window a request takes, before it is
//! sent.
//!
//! Promises:
//! - [`estimate_message`] counts one message with a byte heuristic, no tokenizer: ASCII text
//!   at 4 bytes a token, other UTF-8 at 3 bytes a token (a CJK character is about one token,
//!   a Cyrillic one about two thirds), plus [`MESSAGE_OVERHEAD`] a message and
//!   [`BLOCK_OVERHEAD`] a tool call or result; a tool call counts its name and its arguments
//!   as JSON, a tool result its parts, an image [`IMAGE_TOKENS`] whatever its size;
//!   signatures are not counted. Why a heuristic: every provider tokenizes differently
//!   (Claude, Gemini, GPT, Llama, Qwen), no one crate covers them all, and the per-session
//!   calibration below removes most of the error after one turn. It is one pass over the
//!   bytes and allocates nothing.
//! - [`TokenEstimator`] is per session. After a request, [`TokenEstimator::observe`] takes
//!   the input tokens the provider reported for it: their ratio to the heuristic becomes the
//!   session's factor, and the request becomes the anchor, so the next estimate of a
//!   history that starts with the same messages is the reported count plus the factor times
//!   the heuristic of what was added. A report outside [`FACTOR_RANGE`] of the heuristic is
//!   ignored (a count of only the uncached part, as Ollama's `prompt_eval_count` is after a
//!   cache hit, says nothing about the tokenizer).
//! - [`prompt_tokens`] reads a request's whole input from [`Usage`] per wire: Anthropic
//!   reports cache reads and writes beside `input_tokens`, the others include them in it.
//! - [`TokenUse`] is what a front end shows (`/tokens`, `sessions list`): used, window,
//!   percentage; [`context_window`] picks the window (the profile's `context_window` wins
//!   over the model listing's `context_length`).

use std::io::Write;

use qore_client::ModelInfo;
use qore_core::{ContentBlock, ImageSource, Message, ToolResultPart, ToolSpec, Usage};
use serde::Serialize;

/// Tokens a message costs beyond its content (role markers, separators).
pub const MESSAGE_OVERHEAD: u64 = 4;
/// Tokens a tool call, a tool result or a tool definition costs beyond its content.
pub const BLOCK_OVERHEAD: u64 = 8;
/// Tokens an image costs, whatever its size: Anthropic's figure for a large image (about
/// 1,600; OpenAI's high detail 1024×1024 is 765, Gemini's 258), so the estimate errs high.
pub const IMAGE_TOKENS: u64 = 1_600;
/// Reported input over heuristic ratios that calibrate; any other report is ignored.
pub const FACTOR_RANGE: (f64, f64) = (0.4, 2.5);

/// Bytes counted by kind; tokens are `ascii / 4 + other / 3`, rounded up.
#[derive(Debug, Default, Clone, Copy)]
struct Bytes {
    ascii: u64,
    other: u64,
}

impl Bytes {
    fn add(&mut self, text: &str) {
        let other = text.bytes().filter(|b| !b.is_ascii()).count() as u64;
        self.other += other;
        self.ascii += text.len() as u64 - other;
    }

    fn tokens(self) -> u64 {
        (self.ascii * 3 + self.other * 4).div_ceil(12)
    }
}

impl Write for Bytes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let other = buf.iter().filter(|b| !b.is_ascii()).count() as u64;
        self.other += other;
        self.ascii += buf.len() as u64 - other;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn json_tokens(value: &impl Serialize) -> u64 {
    let mut bytes = Bytes::default();
    // Writing into a counter cannot fail, and a Value always serializes.
    let _ = serde_json::to_writer(&mut bytes, value);
    bytes.tokens()
}

fn text_tokens(text: &str) -> u64 {
    let mut bytes = Bytes::default();
    bytes.add(text);
    bytes.tokens()
}

fn image_tokens(_image: &ImageSource) -> u64 {
    IMAGE_TOKENS
}

fn block_tokens(block: &ContentBlock) -> u64 {
    match block {
        ContentBlock::Text { text, .. } | ContentBlock::Thinking { text, .. } => text_tokens(text),
        ContentBlock::RedactedThinking { data } => text_tokens(data),
        ContentBlock::Image(image) => image_tokens(image),
        ContentBlock::ToolUse {
            name,
            input,
            raw_input,
            ..
        } => {
            let args = match raw_input {
                Some(raw) => text_tokens(raw),
                None => json_tokens(input),
            };
            BLOCK_OVERHEAD + text_tokens(name) + args
        }
        ContentBlock::ToolResult { content, .. } => {
            let parts: u64 = (content.iter())
                .map(|part| match part {
                    ToolResultPart::Text { text } => text_tokens(text),
                    ToolResultPart::Image(image) => image_tokens(image),
                })
                .sum();
            BLOCK_OVERHEAD + parts
        }
    }
}

/// The heuristic token count of one message (see the module doc).
pub fn estimate_message(message: &Message) -> u64 {
    MESSAGE_OVERHEAD + message.blocks.iter().map(block_tokens).sum::<u64>()
}

/// The heuristic token count of messages.
pub fn estimate_messages(messages: &[Message]) -> u64 {
    messages.iter().map(estimate_message).sum()
}

/// The heuristic token count of the tool definitions a request offers.
pub fn estimate_tools(tools: &[ToolSpec]) -> u64 {
    (tools.iter())
        .map(|t| {
            BLOCK_OVERHEAD
                + text_tokens(&t.name)
                + text_tokens(&t.description)
                + json_tokens(&t.input_schema)
        })
        .sum()
}

/// The whole input of one request as `usage` reports it, `None` when it reports none. On
/// `anthropic` cache reads and writes are counted beside `input_tokens`; elsewhere they are
/// part of it.
pub fn prompt_tokens(usage: &Usage, protocol: &str) -> Option<u64> {
    let input = usage.input_tokens?;
    if protocol == qore_client::protocols::anthropic::NAME {
        let cached = usage.cached_input_tokens.unwrap_or(0);
        return Some(input + cached + usage.cache_creation_input_tokens.unwrap_or(0));
    }
    Some(input)
}

/// The last request the estimator learnt from.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Anchor {
    /// How many messages it sent.
    messages: usize,
    /// The heuristic count of those messages and the tools.
    raw: u64,
    /// What the provider reported for it.
    reported: u64,
}

/// What [`TokenEstimator::observe`] did with a report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Observation {
    /// The factor is now this.
    Calibrated(f64),
    /// The report was zero, or its ratio to the heuristic was outside [`FACTOR_RANGE`].
    Ignored,
}

/// A session's token estimate, calibrated by what its provider reports (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct TokenEstimator {
    factor: f64,
    calibrated: bool,
    anchor: Option<Anchor>,
}

impl Default for TokenEstimator {
    fn default() -> Self {
        TokenEstimator {
            factor: 1.0,
            calibrated: false,
            anchor: None,
        }
    }
}

impl TokenEstimator {
    pub fn new() -> Self {
        TokenEstimator::default()
    }

    /// Reported tokens per heuristic token (1 until a report is observed).
    pub fn factor(&self) -> f64 {
        self.factor
    }

    /// Whether a report has calibrated this estimator.
    pub fn is_calibrated(&self) -> bool {
        self.calibrated
    }

    fn scaled(&self, raw: u64) -> u64 {
        (raw as f64 * self.factor).round() as u64
    }

    /// The estimated input tokens of a request sending `messages` (system prompt included)
    /// and offering `tools`.
    pub fn estimate(&self, messages: &[Message], tools: &[ToolSpec]) -> u64 {
        let tools_raw = estimate_tools(tools);
        if let Some(anchor) = self.anchor.filter(|a| a.messages <= messages.len()) {
            let (sent, added) = messages.split_at(anchor.messages);
            if tools_raw + estimate_messages(sent) == anchor.raw {
                return anchor.reported + self.scaled(estimate_messages(added));
            }
        }
        self.scaled(tools_raw + estimate_messages(messages))
    }

    /// Learn from one request: it sent `messages` and `tools`, and the provider reported
    /// `reported` input tokens for it ([`prompt_tokens`]).
    pub fn observe(
        &mut self,
        messages: &[Message],
        tools: &[ToolSpec],
        reported: u64,
    ) -> Observation {
        let raw = estimate_tools(tools) + estimate_messages(messages);
        let Some(factor) = ratio(reported, raw) else {
            return Observation::Ignored;
        };
        self.factor = factor;
        self.calibrated = true;
        self.anchor = Some(Anchor {
            messages: messages.len(),
            raw,
            reported,
        });
        Observation::Calibrated(factor)
    }

    /// Learn from a whole turn whose usage adds up all its requests (the tool loop's): `sent`
    /// is what its first request sent, `replies` the turn's messages after it. Request `r`
    /// sent `sent` plus the replies before the `r`-th assistant message. A turn of one
    /// request is [`TokenEstimator::observe`]; a longer one sets only the factor.
    pub fn observe_turn(
        &mut self,
        sent: &[Message],
        replies: &[Message],
        tools: &[ToolSpec],
        reported: u64,
    ) -> Observation {
        let ends: Vec<usize> = (replies.iter().enumerate())
            .filter(|(_, m)| m.role == qore_core::Role::Assistant)
            .map(|(i, _)| i)
            .collect();
        if ends.len() <= 1 {
            return self.observe(sent, tools, reported);
        }
        let base = estimate_tools(tools) + estimate_messages(sent);
        let raw: u64 = (ends.iter())
            .map(|&end| base + estimate_messages(&replies[..end]))
            .sum();
        match ratio(reported, raw) {
            Some(factor) => {
                self.factor = factor;
                self.calibrated = true;
                self.anchor = None;
                Observation::Calibrated(factor)
            }
            None => Observation::Ignored,
        }
    }
}

fn ratio(reported: u64, raw: u64) -> Option<f64> {
    if reported == 0 || raw == 0 {
        return None;
    }
    let factor = reported as f64 / raw as f64;
    (FACTOR_RANGE.0..=FACTOR_RANGE.1)
        .contains(&factor)
        .then_some(factor)
}

/// The context window: the profile's `context_window` when set, else what the model listing
/// says of `model`.
pub fn context_window(profile: Option<u64>, listing: &[ModelInfo], model: &str) -> Option<u64> {
    profile.or_else(|| {
        (listing.iter())
            .find(|m| m.id == model)
            .and_then(|m| m.context_length)
    })
}

/// How much of the context window a session takes: what `/tokens` and `sessions list`
/// show. JSON: `{"used": 1200, "window": 8192, "percent": 14.6}` (`window` and `percent`
/// absent when the window is unknown).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TokenUse {
    pub used: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
}

impl TokenUse {
    pub fn new(used: u64, window: Option<u64>) -> Self {
        let percent =
            (window.filter(|w| *w > 0)).map(|w| (used as f64 * 1000.0 / w as f64).round() / 10.0);
        TokenUse {
            used,
            window,
            percent,
        }
    }
}

impl std::fmt::Display for TokenUse {
    /// `1,200 of 8,192 tokens (14.6%)`, or `1,200 tokens (context window unknown)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.window, self.percent) {
            (Some(window), Some(percent)) => write!(
                f,
                "{} of {} tokens ({percent:.1}%)",
                grouped(self.used),
                grouped(window)
            ),
            _ => write!(f, "{} tokens (context window unknown)", grouped(self.used)),
        }
    }
}

/// `1234567` as `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tests;
