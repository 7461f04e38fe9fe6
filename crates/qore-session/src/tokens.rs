//! The token estimate: how much of the model's context window a request takes, before it is
//! sent.
//!
//! Promises:
//! - [`estimate_message`] counts one message with a heuristic, no tokenizer, run by run of
//!   bytes: an ASCII word is a token, plus one per further 6 letters; digits are a token per
//!   3, other ASCII symbols a token per 2, whitespace beyond a single space a token; other
//!   UTF-8 is a token per 3 bytes (a CJK character about one token, a Cyrillic one two
//!   thirds). A message costs [`MESSAGE_OVERHEAD`] more, a tool call or result
//!   [`BLOCK_OVERHEAD`] more; a tool call counts its name and its arguments as JSON, a tool
//!   result its parts, an image [`IMAGE_TOKENS`] whatever its size; thinking counts only
//!   when signed (unsigned thinking is not sent back); signatures themselves are not
//!   counted. Why a heuristic: every provider tokenizes differently (Claude, Gemini, GPT,
//!   Llama, Qwen), no one crate covers them all, and the per-session calibration below
//!   removes most of the error after one turn; runs, rather than 4 bytes a token, follow
//!   symbol-dense text (JSON, LaTeX, code) better: on the recorded conversations of
//!   `tests/tokens_calibration.rs` the error after one report falls from 2-33% to 1-17%.
//!   It is one pass over the bytes and allocates nothing.
//! - [`TokenEstimator`] is per session and learns from what its provider reports: the input
//!   tokens of a request are modelled as a fixed overhead (what the provider adds unseen:
//!   Anthropic's tool-use prompt, chat templates) plus a rate times the heuristic, and each
//!   report refits them (see `tokens_estimator.rs`), so after one turn the estimate tracks the
//!   real tokenizer.
//! - [`prompt_tokens`] reads a request's whole input from [`Usage`] per wire: Anthropic
//!   reports cache reads and writes beside `input_tokens`, the others include them in it.
//! - [`TokenUse`] is what a front end shows (`/tokens`, `sessions list`): used, window,
//!   percentage; [`stored_use`] is that for a session on disk, calibrated by its last turn; [`context_window`] picks the window (the profile's `context_window` wins
//!   over the model listing's `context_length`).

use std::io::Write;

use qore_agents::catalog::Catalog;
use qore_client::{ModelInfo, Protocol};
use qore_core::{ContentBlock, ImageSource, Message, ToolResultPart, ToolSpec, Usage};
use qore_store::{SessionInfo, Store, StoreError, StoredTurn, TurnRecord};
use serde::Serialize;

/// Tokens a message costs beyond its content (role markers, separators).
pub const MESSAGE_OVERHEAD: u64 = 4;
/// Tokens a tool call, a tool result or a tool definition costs beyond its content (the
/// recorded tool loops of Anthropic, Gemini and OpenAI Responses fit 8-20).
pub const BLOCK_OVERHEAD: u64 = 12;
/// Tokens an image costs, whatever its size: Anthropic's figure for a large image (about
/// 1,600; OpenAI's high detail 1024×1024 is 765, Gemini's 258), so the estimate errs high.
pub const IMAGE_TOKENS: u64 = 1_600;

/// What a run of bytes is made of.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Class {
    #[default]
    None,
    Letters,
    Digits,
    Space,
    Symbols,
    Other,
}

fn class(byte: u8) -> Class {
    match byte {
        b'a'..=b'z' | b'A'..=b'Z' => Class::Letters,
        b'0'..=b'9' => Class::Digits,
        b' ' | b'\t' | b'\n' | b'\r' => Class::Space,
        0..=0x7f => Class::Symbols,
        _ => Class::Other,
    }
}

/// Counts tokens run by run (see the module doc); fed in pieces, as JSON is written.
#[derive(Debug, Default, Clone, Copy)]
struct Runs {
    class: Class,
    len: u64,
    tokens: u64,
}

impl Runs {
    fn add(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            let class = class(byte);
            if class != self.class {
                self.close();
                self.class = class;
            }
            self.len += 1;
        }
    }

    fn close(&mut self) {
        let len = self.len;
        self.tokens += match self.class {
            _ if len == 0 => 0,
            Class::None => 0,
            // A word is a token, a long one a token more per 6 letters.
            Class::Letters => 1 + (len - 1) / 6,
            Class::Digits => len.div_ceil(3),
            // A lone space joins the next word; longer whitespace is a token.
            Class::Space => u64::from(len > 1),
            Class::Symbols => len.div_ceil(2),
            Class::Other => len.div_ceil(3),
        };
        self.len = 0;
    }

    fn tokens(mut self) -> u64 {
        self.close();
        self.tokens
    }
}

impl Write for Runs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.add(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn json_tokens(value: &impl Serialize) -> u64 {
    let mut runs = Runs::default();
    // Writing into a counter cannot fail, and a Value always serializes.
    let _ = serde_json::to_writer(&mut runs, value);
    runs.tokens()
}

fn text_tokens(text: &str) -> u64 {
    let mut runs = Runs::default();
    runs.add(text.as_bytes());
    runs.tokens()
}

fn image_tokens(_image: &ImageSource) -> u64 {
    IMAGE_TOKENS
}

fn block_tokens(block: &ContentBlock) -> u64 {
    match block {
        ContentBlock::Text { text, .. } => text_tokens(text),
        // Unsigned thinking is not sent back (OpenAI-compatible servers ignore it, and the
        // sanitizer drops it where the wire needs a signature); signed thinking is.
        ContentBlock::Thinking {
            signature: None, ..
        } => 0,
        ContentBlock::Thinking { text, .. } => text_tokens(text),
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

/// The whole input of one request as `usage` reports it, `None` when it reports none, for a
/// record that names its wire `protocol` (a stored turn may name none): as
/// [`wire_prompt_tokens`] on that wire; with no wire known, cache reads over `input_tokens`
/// can only be beside it, so they are added.
pub fn prompt_tokens(usage: &Usage, protocol: Option<&str>) -> Option<u64> {
    let beside = match protocol.and_then(qore_client::protocols::by_name) {
        Some(wire) => wire.cache_counted_beside_input(),
        None => usage.cached_input_tokens.unwrap_or(0) > usage.input_tokens?,
    };
    counted(usage, beside)
}

/// The whole input of one request as `wire` reported it in `usage`: a wire that counts
/// cache reads and writes beside `input_tokens`
/// ([`Protocol::cache_counted_beside_input`])
/// has them added; elsewhere they are part of it.
pub fn wire_prompt_tokens(usage: &Usage, wire: &dyn Protocol) -> Option<u64> {
    counted(usage, wire.cache_counted_beside_input())
}

/// `input_tokens`, plus the cache reads and writes when they were counted `beside` it.
fn counted(usage: &Usage, beside: bool) -> Option<u64> {
    let input = usage.input_tokens?;
    if beside {
        let cache =
            usage.cached_input_tokens.unwrap_or(0) + usage.cache_creation_input_tokens.unwrap_or(0);
        return Some(input + cache);
    }
    Some(input)
}

/// `usage` as `wire` reported it, with `input_tokens` the whole prompt (see
/// [`wire_prompt_tokens`]): the one sense accounting, prices and the serve dialects start
/// from.
pub fn whole_prompt(usage: &Usage, wire: &dyn Protocol) -> Usage {
    Usage {
        input_tokens: wire_prompt_tokens(usage, wire),
        ..*usage
    }
}

/// What a stored session takes of `window`, for a session that is not open (`sessions
/// list`): its history (undone turns left out) estimated by an estimator calibrated on the
/// usage of its last finished turn, which also counts the system prompt and the tools the
/// store does not keep.
pub fn stored_use(turns: &[StoredTurn], protocol: Option<&str>, window: Option<u64>) -> TokenUse {
    let live: Vec<&TurnRecord> = (turns.iter().filter(|t| !t.undone))
        .map(|t| &t.record)
        .collect();
    let estimator = TokenEstimator::from_turns(&live, protocol);
    let messages: Vec<Message> = (live.iter())
        .flat_map(|t| std::iter::once(&t.user).chain(&t.replies))
        .cloned()
        .collect();
    TokenUse::new(estimator.estimate(&messages, &[]), window)
}

/// [`stored_use`] of the session `info` in `store`, against the `context_window` of its agent
/// in `catalog` (the session's, else its last turn's): what a listing of sessions shows, in
/// the CLI or any other front end.
pub async fn session_use(
    store: &dyn Store,
    catalog: &Catalog,
    info: &SessionInfo,
) -> Result<TokenUse, StoreError> {
    let turns = store.turns(&info.id).await?;
    let last_agent = turns.last().and_then(|t| t.record.agent.as_deref());
    let agent = (info.agent.as_deref().or(last_agent)).and_then(|name| catalog.get(name));
    Ok(stored_use(
        &turns,
        None,
        agent.and_then(|a| a.context_window),
    ))
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
    /// Tokens the next request would send, estimated.
    pub used: u64,
    /// The model's context window, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// `used` as a percentage of `window`, one decimal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
}

impl TokenUse {
    /// The use of `used` tokens of `window`, the percentage computed.
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
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[path = "tokens_estimator.rs"]
mod estimator;
pub use estimator::{Observation, TokenEstimator, RATE_RANGE};

#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tests;

#[cfg(test)]
mod whole_prompt_tests {
    use super::*;

    #[test]
    fn the_whole_prompt_counts_cache_reads_once() {
        let usage = |input, cached, created| Usage {
            input_tokens: input,
            cached_input_tokens: cached,
            cache_creation_input_tokens: created,
            output_tokens: Some(5),
            ..Usage::default()
        };
        // (wire, reported, input_tokens in the one sense)
        let cases = [
            ("anthropic", usage(Some(10), Some(100), Some(20)), Some(130)),
            ("anthropic", usage(Some(10), None, None), Some(10)),
            ("openai-chat", usage(Some(110), Some(100), None), Some(110)),
            (
                "openai-responses",
                usage(Some(110), Some(100), None),
                Some(110),
            ),
            ("anthropic", usage(None, Some(100), None), None),
        ];
        for (wire, reported, want) in cases {
            let Some(protocol) = qore_client::protocols::by_name(wire) else {
                panic!("no protocol {wire}");
            };
            let got = whole_prompt(&reported, &*protocol);
            assert_eq!(got.input_tokens, want, "{wire} {reported:?}");
            assert_eq!(got.cached_input_tokens, reported.cached_input_tokens);
            assert_eq!(got.output_tokens, Some(5));
        }
    }
}
