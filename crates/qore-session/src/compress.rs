//! Compression: the older part of a session summarised into a NEW session that links to the
//! original, and the rule that says when to do it.
//!
//! Promises:
//! - [`compress`] never writes to the original session: it reads its turns, asks for a
//!   summary of all but the most recent ones ([`Keep`]) with the `(&Client, model)` it is
//!   given (the caller resolves the compression roster's agent; nothing here resolves
//!   agents), then creates a new session with `parent_id` = the original, holding the
//!   summary turn followed by exact copies of the recent turns (same messages, same JSON,
//!   same usage, timings and status). The new session's history, the summary and then the
//!   recent turns, is what the model sees next. If writing the new session fails half way,
//!   it is removed; the original is untouched either way. It is the one compression path
//!   (`/compress`, `qore sessions compress` and the automatic one all run it); its steps are
//!   public, [`plan`] (read), [`summarise`] (the request) and [`write()`], over any [`Store`]
//!   backend; nothing of the store is held during the summary request.
//! - When the newest turns are summarised though compression would keep them
//!   ([`CompressOptions::squeezed`]: they alone pass the threshold), the summary request
//!   says so, and says when no turn goes on after the summary.
//! - The summary turn is a user message (the original's title, and a note naming the
//!   original and how many turns were summarised) answered by the summary as the
//!   assistant's message.
//! - A summary request that overflows the compression model's context window
//!   ([`is_context_overflow`]) is sent again smaller, tool results of the older turns
//!   dropped first, then the oldest turns ([`shrink_steps`]); any other failure ends it
//!   with the provider's error, and cancellation ends it as [`CompressError::Cancelled`].
//! - [`should_compress`] is the automatic trigger as a pure function: the estimate is over
//!   the threshold (default [`DEFAULT_THRESHOLD`], 80%) of a known context window.

use std::path::PathBuf;
use std::time::SystemTime;

use qore_client::{CancellationToken, ChatRequest, Client, RequestOptions};
use qore_core::{ErrorInfo, Message, StreamOutcome, Usage};
use qore_store::{NewSession, SessionInfo, Store, StoreError, TurnRecord, TurnStatus};

#[path = "compress_request.rs"]
mod request;

pub use request::{is_context_overflow, shrink_steps, summary_history, transcript, Newest, Shrink};

use crate::tokens::estimate_messages;

/// The share of the context window past which a session should compress.
pub const DEFAULT_THRESHOLD: f64 = 0.8;

/// Whether a session whose next request is estimated at `estimate` tokens should compress:
/// the window is known and `estimate` is over `threshold` (a fraction, 0.8 = 80%) of it.
pub fn should_compress(estimate: u64, window: Option<u64>, threshold: f64) -> bool {
    window.is_some_and(|w| w > 0 && estimate as f64 > w as f64 * threshold)
}

/// A threshold from configuration: `80%` or `0.8`; it must be over 0 and at most 100%.
pub fn parse_threshold(text: &str) -> Result<f64, CompressError> {
    let text = text.trim();
    let bad = || CompressError::BadThreshold(text.to_owned());
    let value = match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
        None => text.parse::<f64>().map_err(|_| bad())?,
    };
    if value > 0.0 && value <= 1.0 {
        Ok(value)
    } else {
        Err(bad())
    }
}

/// Which turns stay as they are; the ones before them are summarised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The last this many turns.
    Turns(usize),
    /// The most recent turns whose heuristic estimate (`tokens::estimate_messages`, before
    /// calibration) adds up to at most this many tokens.
    Tokens(u64),
}

/// How to compress.
#[derive(Debug, Clone, PartialEq)]
pub struct CompressOptions {
    /// How many of the newest turns are copied as they are.
    pub keep: Keep,
    /// The compressor's system prompt: the compression agent's, else the bundled
    /// `compressor` role.
    pub instructions: String,
    /// The compression agent, recorded on the summary turn.
    pub agent: Option<String>,
    /// Stream the summary (the agent's choice) or ask for one body.
    pub stream: bool,
    /// The most tokens the summary may take (`None`: the agent's choice).
    pub max_tokens: Option<u32>,
    /// How many of the newest turns are summarised though compression keeps them as they
    /// are otherwise, because they alone pass the threshold; the summary request says so.
    pub squeezed: usize,
}

/// Keeps the last two turns, so the model still sees the exchange it is in the middle of.
impl Default for CompressOptions {
    fn default() -> Self {
        CompressOptions {
            keep: Keep::Turns(2),
            instructions: bundled_instructions().to_owned(),
            agent: None,
            stream: true,
            max_tokens: None,
            squeezed: 0,
        }
    }
}

/// The bundled `compressor` role.
pub fn bundled_instructions() -> &'static str {
    (qore_agents::system_prompt::BUNDLED_ROLES.iter())
        .find(|(id, _)| *id == "compressor")
        .map_or("Summarise the conversation.", |(_, text)| text)
}

/// Why compression did not happen.
#[derive(Debug, thiserror::Error)]
pub enum CompressError {
    /// Reading or writing the store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Every turn is kept, so nothing older is left to summarise.
    #[error("nothing to compress: the session has {turns} turns and all are kept")]
    NothingToCompress {
        /// The session's live turns.
        turns: usize,
    },
    /// The summary request failed.
    #[error("the summary request failed: {0}")]
    Summary(ErrorInfo),
    /// The summary request does not fit the model's context window, even shrunk.
    #[error("the summary does not fit the compression model's context window, even with one turn and no tool results: {0}")]
    Overflow(ErrorInfo),
    /// The model answered with no text.
    #[error("the compression model answered with an empty summary")]
    EmptySummary,
    /// The caller cancelled.
    #[error("compression was cancelled")]
    Cancelled,
    /// A `QORE_COMPRESS_AT` value that is not a share of the context window.
    #[error("'{0}' is not a compression threshold: give a share of the context window over 0 and at most 100%, e.g. 80% or 0.8")]
    BadThreshold(String),
}

/// A summary and what it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The summary's text.
    pub text: String,
    /// Token counts of the request that succeeded.
    pub usage: Usage,
    /// Requests sent (1 when the first fitted).
    pub attempts: usize,
    /// What the request that succeeded left out.
    pub shrink: Shrink,
    /// When the first request was sent.
    pub started_at: SystemTime,
    /// When the summary was complete.
    pub finished_at: SystemTime,
}

/// What [`compress`] made.
#[derive(Debug, Clone, PartialEq)]
pub struct Compressed {
    /// The new session.
    pub session_id: String,
    /// The original, unchanged.
    pub parent_id: String,
    /// Turns summarised.
    pub summarised_turns: usize,
    /// Turns copied as they were.
    pub kept_turns: usize,
    /// The summary and what it took.
    pub summary: Summary,
}

/// Split `turns` into (older, recent) by `keep`.
pub fn split_turns(turns: &[TurnRecord], keep: Keep) -> (&[TurnRecord], &[TurnRecord]) {
    let kept = match keep {
        Keep::Turns(n) => n.min(turns.len()),
        Keep::Tokens(budget) => {
            let mut total = 0;
            (turns.iter().rev())
                .take_while(|turn| {
                    total += estimate_messages(std::slice::from_ref(&turn.user))
                        + estimate_messages(&turn.replies);
                    total <= budget
                })
                .count()
        }
    };
    turns.split_at(turns.len() - kept)
}

/// Ask `model` on `client` for a summary of `plan`'s older turns, smaller after each
/// overflow.
pub async fn summarise(
    client: &Client,
    model: &str,
    plan: &Plan,
    options: &CompressOptions,
    cancel: CancellationToken,
) -> Result<Summary, CompressError> {
    let request_options = RequestOptions {
        stream: options.stream,
        max_tokens: options.max_tokens,
        ..RequestOptions::default()
    };
    let mut last_overflow = None;
    let mut attempts = 0;
    let newest = Newest {
        kept: plan.recent.len(),
        squeezed: options.squeezed,
    };
    for shrink in shrink_steps(plan.older.len()) {
        let history = summary_history(&options.instructions, &plan.older, shrink, newest);
        let request = ChatRequest {
            model,
            history: &history,
            tools: &[],
            options: &request_options,
        };
        attempts += 1;
        let started_at = SystemTime::now();
        match client.stream(&request, cancel.clone()).finish().await {
            StreamOutcome::Finished { message, usage, .. } => {
                let text = message.text().trim().to_owned();
                if text.is_empty() {
                    return Err(CompressError::EmptySummary);
                }
                return Ok(Summary {
                    text,
                    usage,
                    attempts,
                    shrink,
                    started_at,
                    finished_at: SystemTime::now(),
                });
            }
            StreamOutcome::Failed { error, .. } if is_context_overflow(&error) => {
                tracing::info!(
                    attempts,
                    ?shrink,
                    "summary request overflowed; retrying smaller"
                );
                last_overflow = Some(error);
            }
            StreamOutcome::Failed { error, .. } => return Err(CompressError::Summary(error)),
            StreamOutcome::Cancelled { .. } => return Err(CompressError::Cancelled),
        }
    }
    Err(CompressError::Overflow(last_overflow.unwrap_or_else(
        || ErrorInfo::validation("no summary request could be made"),
    )))
}

/// What compressing a stored session takes: the original and its live turns split into the
/// older ones (summarised) and the recent ones (copied).
#[derive(Debug, Clone)]
pub struct Plan {
    /// The session compressed.
    pub original: SessionInfo,
    /// Its older turns, summarised.
    pub older: Vec<TurnRecord>,
    /// Its recent turns, copied.
    pub recent: Vec<TurnRecord>,
}

/// Read `session` (an id, name or unique id prefix) and split its turns (undone ones left
/// out) by `keep`; an error when there is nothing older to summarise.
pub async fn plan(store: &dyn Store, session: &str, keep: Keep) -> Result<Plan, CompressError> {
    let original = store.session(session).await?;
    let turns: Vec<TurnRecord> = (store.turns(&original.id).await?.into_iter())
        .filter(|t| !t.undone)
        .map(|t| t.record)
        .collect();
    let (older, recent) = split_turns(&turns, keep);
    if older.is_empty() {
        return Err(CompressError::NothingToCompress { turns: turns.len() });
    }
    Ok(Plan {
        older: older.to_vec(),
        recent: recent.to_vec(),
        original,
    })
}

/// Write the new session of `plan` with `summary` (made by `model`): the summary turn, then
/// the recent turns; half a session is removed again. The original is not written.
pub async fn write(
    store: &dyn Store,
    plan: &Plan,
    summary: Summary,
    model: &str,
    agent: Option<String>,
) -> Result<Compressed, CompressError> {
    let Plan {
        original,
        older,
        recent,
    } = plan;
    let title = original.title.as_deref().unwrap_or("Conversation");
    let summary_turn = TurnRecord {
        user: Message::user(format!(
            "{title}\n\n(Compressed: the {} earlier turns of session {} are summarised in the \
             answer below; the turns after it are as they were.)",
            older.len(),
            original.id
        )),
        replies: vec![Message::assistant(summary.text.clone())],
        usage: summary.usage,
        model: Some(model.to_owned()),
        agent,
        started_at: summary.started_at,
        finished_at: summary.finished_at,
        status: TurnStatus::Finished,
        file_changes: Vec::new(),
    };
    let new_session = NewSession {
        name: None,
        project_dir: original.project_dir.as_ref().map(PathBuf::from),
        agent: original.agent.clone(),
        model: original.model.clone(),
        parent_id: Some(original.id.clone()),
    };
    let id = store.create_session(&new_session).await?;
    let mut written = Ok(());
    for turn in std::iter::once(&summary_turn).chain(recent) {
        written = store.append_turn(&id, turn).await.map(drop);
        if written.is_err() {
            break;
        }
    }
    if let Err(error) = written {
        if let Err(cleanup) = store.remove(&id).await {
            tracing::warn!(%cleanup, session = %id, "cannot remove a half-written compressed session");
        }
        return Err(error.into());
    }
    Ok(Compressed {
        session_id: id,
        parent_id: original.id.clone(),
        summarised_turns: older.len(),
        kept_turns: recent.len(),
        summary,
    })
}

/// Compress `session` (an id, name or unique id prefix) into a new session (see the module
/// doc) and return it: [`plan`], [`summarise`], [`write()`].
pub async fn compress(
    store: &dyn Store,
    session: &str,
    client: &Client,
    model: &str,
    options: &CompressOptions,
    cancel: CancellationToken,
) -> Result<Compressed, CompressError> {
    let plan = plan(store, session, options.keep).await?;
    let summary = summarise(client, model, &plan, options, cancel).await?;
    write(store, &plan, summary, model, options.agent.clone()).await
}

#[cfg(test)]
#[path = "compress_tests.rs"]
mod tests;
