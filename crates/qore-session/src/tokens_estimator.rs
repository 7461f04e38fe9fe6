//! [`TokenEstimator`]: a session's token estimate, calibrated by what its provider reports.
//!
//! Promises:
//! - The input tokens of a request are modelled as `overhead + rate × heuristic`: the
//!   overhead is what the provider adds that the request does not show (Anthropic's tool-use
//!   system prompt, a chat template), the rate how the real tokenizer compares with the byte
//!   heuristic. Uncalibrated: no overhead, rate 1.
//! - The first report keeps rate 1 and puts the difference in the overhead (negative when
//!   the heuristic overcounts what every request carries, such as tool schemas). A later
//!   report on a request at least [`MIN_GROWTH`] heuristic tokens larger than the one before
//!   sets the rate to the growth in reported tokens over the growth in heuristic tokens,
//!   when that is inside [`RATE_RANGE`]. Every accepted report then sets the overhead so
//!   that the estimate of the request just reported IS the report: a history that only grew
//!   since is estimated as the report plus the rate times what was added. An estimate is
//!   never below zero.
//! - A report under [`RATE_RANGE`]'s low end times the heuristic is ignored: it counts only
//!   the uncached part of the prompt (Ollama's `prompt_eval_count` after a cache hit) and
//!   says nothing about the tokenizer.
//! - A turn of several requests whose usage is their sum (the tool loop's) is observed as
//!   their average request, which the linear model fits exactly as well.

use qore_core::{Message, Role, ToolSpec};
use qore_store::{TurnRecord, TurnStatus};

use super::{estimate_messages, estimate_tools, prompt_tokens};

/// The rates a report may set; a report under the low end times the heuristic is ignored.
pub const RATE_RANGE: (f64, f64) = (0.4, 2.5);
/// How much larger (heuristic tokens) a request must be than the last reported one for the
/// difference of their reports to set the rate.
pub const MIN_GROWTH: f64 = 32.0;

/// What [`TokenEstimator::observe`] did with a report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Observation {
    /// The model is now `overhead + rate × heuristic`.
    Calibrated {
        /// Tokens per heuristic unit.
        rate: f64,
        /// Tokens sent whatever the history (tool definitions, template).
        overhead: f64,
    },
    /// The report was zero or too small to be the whole prompt.
    Ignored,
}

/// A session's token estimate (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct TokenEstimator {
    rate: f64,
    overhead: f64,
    /// The last accepted report: (heuristic, reported), per request.
    last: Option<(f64, f64)>,
}

impl Default for TokenEstimator {
    fn default() -> Self {
        TokenEstimator {
            rate: 1.0,
            overhead: 0.0,
            last: None,
        }
    }
}

impl TokenEstimator {
    /// An estimator with no reports yet (the plain heuristic).
    pub fn new() -> Self {
        TokenEstimator::default()
    }

    /// An estimator calibrated on stored turns (a session opened from disk): by the usage of
    /// the last finished turn that reports one, against the messages before it. Its requests
    /// also carried the system prompt and tools, which the store does not keep: they end up
    /// in the overhead. `protocol` as in `tokens::prompt_tokens`.
    pub fn from_turns(turns: &[&TurnRecord], protocol: Option<&str>) -> TokenEstimator {
        TokenEstimator::from_requests(&[], &[], turns, protocol)
    }

    /// [`TokenEstimator::from_turns`] for requests that began with `system` (the system
    /// prompt) and offered `tools`, as an open session's do: those are then counted as
    /// what they are, not as overhead.
    pub fn from_requests(
        system: &[Message],
        tools: &[ToolSpec],
        turns: &[&TurnRecord],
        protocol: Option<&str>,
    ) -> TokenEstimator {
        let mut estimator = TokenEstimator::new();
        let last = (turns.iter().enumerate().rev())
            .filter(|(_, t)| t.status == TurnStatus::Finished)
            .find_map(|(i, t)| Some((i, prompt_tokens(&t.usage, protocol)?)));
        if let Some((index, reported)) = last {
            let mut sent: Vec<Message> = system.to_vec();
            sent.extend(
                (turns[..index].iter())
                    .flat_map(|t| std::iter::once(&t.user).chain(&t.replies))
                    .cloned(),
            );
            sent.push(turns[index].user.clone());
            estimator.observe_turn(&sent, &turns[index].replies, tools, reported);
        }
        estimator
    }

    /// Reported tokens per heuristic token (1 until calibrated).
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Tokens the provider adds to every request unseen (0 until calibrated).
    pub fn overhead(&self) -> f64 {
        self.overhead
    }

    /// Whether a report has calibrated this estimator.
    pub fn is_calibrated(&self) -> bool {
        self.last.is_some()
    }

    /// The estimated input tokens of a request sending `messages` (system prompt included)
    /// and offering `tools`.
    pub fn estimate(&self, messages: &[Message], tools: &[ToolSpec]) -> u64 {
        self.estimate_raw(estimate_messages(messages) + estimate_tools(tools))
    }

    /// The estimate for a request whose heuristic count is `raw`.
    pub fn estimate_raw(&self, raw: u64) -> u64 {
        (self.overhead + self.rate * raw as f64).round().max(0.0) as u64
    }

    /// Learn from one request: it sent `messages` and offered `tools`, and the provider
    /// reported `reported` input tokens for it (`tokens::prompt_tokens`).
    pub fn observe(
        &mut self,
        messages: &[Message],
        tools: &[ToolSpec],
        reported: u64,
    ) -> Observation {
        let raw = estimate_messages(messages) + estimate_tools(tools);
        self.observe_point(raw as f64, reported as f64)
    }

    /// Learn from a whole turn whose usage adds up all its requests (the tool loop's): `sent`
    /// is what its first request sent, `replies` the turn's messages after it; request `r`
    /// sent `sent` plus the replies before the `r`-th assistant message.
    pub fn observe_turn(
        &mut self,
        sent: &[Message],
        replies: &[Message],
        tools: &[ToolSpec],
        reported: u64,
    ) -> Observation {
        let base = estimate_messages(sent) + estimate_tools(tools);
        self.observe_turn_raw(base, replies, reported)
    }

    /// [`TokenEstimator::observe_turn`] for a first request whose heuristic count (messages
    /// and tools) is `base`.
    pub fn observe_turn_raw(
        &mut self,
        base: u64,
        replies: &[Message],
        reported: u64,
    ) -> Observation {
        let raws: Vec<u64> = (replies.iter().enumerate())
            .filter(|(_, m)| m.role == Role::Assistant)
            .map(|(end, _)| base + estimate_messages(&replies[..end]))
            .collect();
        if raws.is_empty() {
            return self.observe_point(base as f64, reported as f64);
        }
        let requests = raws.len() as f64;
        let raw = raws.iter().sum::<u64>() as f64 / requests;
        self.observe_point(raw, reported as f64 / requests)
    }

    fn observe_point(&mut self, raw: f64, reported: f64) -> Observation {
        if raw <= 0.0 || reported < raw * RATE_RANGE.0 {
            return Observation::Ignored;
        }
        self.rate = match self.last {
            None => 1.0,
            Some((last_raw, last_reported)) if raw >= last_raw + MIN_GROWTH => {
                let rate = (reported - last_reported) / (raw - last_raw);
                if (RATE_RANGE.0..=RATE_RANGE.1).contains(&rate) {
                    rate
                } else {
                    self.rate
                }
            }
            Some(_) => self.rate,
        };
        self.overhead = reported - self.rate * raw;
        self.last = Some((raw, reported));
        Observation::Calibrated {
            rate: self.rate,
            overhead: self.overhead,
        }
    }
}
