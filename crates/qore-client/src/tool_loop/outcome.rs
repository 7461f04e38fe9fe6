//! [`TurnOutcome`]: how one turn (a user message through to the final answer, tool rounds
//! included) ended. The one outcome type of a turn: the tool loop returns it, a session
//! returns it, front ends print it. One stream's end is `qore_core::StreamOutcome`.
//!
//! Promises: exactly three ends, finished, failed or cancelled, each with the usage summed
//! over every request of the turn and the rounds of tool calls run; a tool-loop limit
//! (round limit, repeated call) is a failed turn whose error (category
//! [`ErrorCategory::Limit`]) says which limit, and [`TurnOutcome::limit`] keeps it typed.

use qore_core::{ErrorCategory, ErrorInfo, StopReason, Usage};

/// Which tool-loop limit ended a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoopStop {
    /// The model called the same tool with the same arguments too many times in a row.
    RepeatedCall {
        /// The tool called again and again.
        tool: String,
        /// How many times in a row.
        times: u32,
    },
    /// The rounds of tool calls reached [`super::LoopConfig::max_rounds`].
    RoundLimit {
        /// The rounds run.
        rounds: u32,
    },
}

impl LoopStop {
    /// One human sentence naming the limit.
    pub fn message(&self) -> String {
        match self {
            LoopStop::RepeatedCall { tool, times } => {
                format!("the model called {tool} with the same arguments {times} times in a row")
            }
            LoopStop::RoundLimit { rounds } => format!(
                "the model still called tools after the limit of {rounds} round{} of tool calls",
                if *rounds == 1 { "" } else { "s" }
            ),
        }
    }

    /// The machine word for the limit: `repeated_call` or `round_limit`.
    pub fn kind(&self) -> &'static str {
        match self {
            LoopStop::RepeatedCall { .. } => "repeated_call",
            LoopStop::RoundLimit { .. } => "round_limit",
        }
    }

    /// The failed turn's error for this limit.
    pub fn error(&self) -> ErrorInfo {
        ErrorInfo::new(ErrorCategory::Limit, format!("stopped: {}", self.message()))
    }
}

/// How a turn ended. History holds every finished request's message and every tool
/// result, whatever the end (never half a message).
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    /// The model answered without calling tools.
    Finished {
        /// Why the model stopped on its last turn.
        stop_reason: Option<StopReason>,
        /// Token counts summed over every request of the turn.
        usage: Usage,
        /// Rounds of tool calls run.
        rounds: u32,
    },
    /// A request failed, or a tool-loop limit stopped the turn.
    Failed {
        /// What went wrong.
        error: ErrorInfo,
        /// The tool-loop limit that ended the turn, when one did.
        limit: Option<LoopStop>,
        /// Token counts summed over the requests sent before the failure.
        usage: Usage,
        /// Rounds of tool calls run before the failure.
        rounds: u32,
    },
    /// The caller cancelled.
    Cancelled {
        /// Token counts summed over the requests sent before the cancellation.
        usage: Usage,
        /// Rounds of tool calls run before the cancellation.
        rounds: u32,
    },
}

impl TurnOutcome {
    /// A failed turn ended by a tool-loop limit.
    pub fn stopped(limit: LoopStop, usage: Usage, rounds: u32) -> TurnOutcome {
        TurnOutcome::Failed {
            error: limit.error(),
            limit: Some(limit),
            usage,
            rounds,
        }
    }

    /// A failed turn.
    pub fn failed(error: ErrorInfo, usage: Usage, rounds: u32) -> TurnOutcome {
        TurnOutcome::Failed {
            error,
            limit: None,
            usage,
            rounds,
        }
    }

    /// The usage summed over the turn's requests.
    pub fn usage(&self) -> Usage {
        match self {
            TurnOutcome::Finished { usage, .. }
            | TurnOutcome::Failed { usage, .. }
            | TurnOutcome::Cancelled { usage, .. } => *usage,
        }
    }

    /// Rounds of tool calls run.
    pub fn rounds(&self) -> u32 {
        match self {
            TurnOutcome::Finished { rounds, .. }
            | TurnOutcome::Failed { rounds, .. }
            | TurnOutcome::Cancelled { rounds, .. } => *rounds,
        }
    }

    /// The error of a failed turn.
    pub fn error(&self) -> Option<&ErrorInfo> {
        match self {
            TurnOutcome::Failed { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The limit that ended a failed turn, if one did.
    pub fn limit(&self) -> Option<&LoopStop> {
        match self {
            TurnOutcome::Failed { limit, .. } => limit.as_ref(),
            _ => None,
        }
    }
}

/// Add one request's usage to a turn's total (a count absent from both stays absent).
pub(crate) fn add_usage(total: &mut Usage, turn: &Usage) {
    fn add(total: &mut Option<u64>, turn: Option<u64>) {
        if let Some(n) = turn {
            *total = Some(total.unwrap_or(0) + n);
        }
    }
    add(&mut total.input_tokens, turn.input_tokens);
    add(&mut total.output_tokens, turn.output_tokens);
    add(&mut total.cached_input_tokens, turn.cached_input_tokens);
    add(
        &mut total.cache_creation_input_tokens,
        turn.cache_creation_input_tokens,
    );
    add(&mut total.reasoning_tokens, turn.reasoning_tokens);
}

/// A turn's outcome from the outcome of its one stream (a turn without tools).
pub fn from_stream(outcome: qore_core::StreamOutcome) -> (Option<qore_core::Message>, TurnOutcome) {
    match outcome {
        qore_core::StreamOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => (
            Some(message),
            TurnOutcome::Finished {
                stop_reason,
                usage,
                rounds: 0,
            },
        ),
        qore_core::StreamOutcome::Failed { error, usage } => {
            (None, TurnOutcome::failed(error, usage, 0))
        }
        qore_core::StreamOutcome::Cancelled { usage } => {
            (None, TurnOutcome::Cancelled { usage, rounds: 0 })
        }
    }
}
