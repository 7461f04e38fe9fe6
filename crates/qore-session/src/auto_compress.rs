//! Compression and the token estimate wired into sessions: what `/compress`, `/tokens` and
//! the automatic compression before a send run on.
//!
//! Promises:
//! - the compressor is the compression roster's first agent, reached once per manager (the
//!   first time it is needed) exactly as a named agent is; its system prompt is the
//!   compressor's instructions (else the bundled `compressor` role). With no compression
//!   roster, an open session is summarised by its own model (the local model of a fresh
//!   machine too), with the bundled instructions; a stored one is then an error naming the
//!   empty roster;
//! - compressing never rewrites or deletes the original: its turns are read, the summary is
//!   asked for without holding the store, and a NEW session linked to it is written
//!   ([`crate::compress`]); an open session then continues in the new one (its id becomes
//!   the new session's; its history is the summary and the recent turns), keeping its
//!   target, tools, layers and token calibration, and its compression callback is told;
//! - automatic: before a send, when the estimate of the request (system prompt, history,
//!   the new message, tool definitions) passes the threshold share of the context window,
//!   the session compresses first, keeping its last two turns, or fewer when those alone
//!   (with the system prompt and tool definitions) pass the threshold, so the next send does
//!   not compress again; the summary request then says it holds those newest turns. With
//!   no older turn to summarise, nothing compresses. The threshold is `QORE_COMPRESS_AT` (`80%`, `0.8`,
//!   `off`; default [`DEFAULT_THRESHOLD`]); a bad value is one warning and the default. A
//!   failed compression never fails the turn: one warning line (the notes sink), and the
//!   request goes out uncompressed. Ephemeral sessions do not compress (nothing to link);
//! - the context window is the target's (the profile's `context_window`, else what the
//!   server's `/props` said when it was asked), else the model listing's `context_length`,
//!   asked once per session and only once the messages alone (the
//!   history and the new one, tools and system prompt left out) pass [`LISTING_FLOOR`]; a
//!   listing that fails means "unknown", never a failed turn.

use std::sync::Arc;

use qore_agents::config::Config;
use qore_client::CancellationToken;
use qore_core::{ContentBlock, ErrorInfo, Message, Role};

use crate::compress::{
    self, parse_threshold, CompressError, CompressOptions, Compressed, Keep, DEFAULT_THRESHOLD,
};
use crate::roster::{roster_agent, Roster};
use crate::state::{SessionSetup, SharedStore, State};
use crate::target::{reach, Notes, Target, TargetSpec};
use crate::tokens::{
    context_window, estimate_message, estimate_messages, estimate_tools, TokenEstimator,
};
use crate::SessionError;

/// The environment variable that sets the automatic compression threshold.
pub const COMPRESS_AT_ENV: &str = "QORE_COMPRESS_AT";

/// Below this heuristic count of the messages the model listing is not asked for the window:
/// no model worth chatting with has a window under 1,280 tokens, and short conversations
/// send nothing more.
pub const LISTING_FLOOR: u64 = 1_024;

/// Called when a session continues in the session it was compressed into.
pub type OnCompressed = Arc<dyn Fn(&Compressed) + Send + Sync>;

/// `QORE_COMPRESS_AT`'s value: `off` (no automatic compression), else a threshold.
pub fn parse_compress_at(text: &str) -> Result<Option<f64>, CompressError> {
    match text.trim() {
        t if t.eq_ignore_ascii_case("off") => Ok(None),
        t => parse_threshold(t).map(Some),
    }
}

/// The threshold `QORE_COMPRESS_AT` sets (unset or empty: the default); a bad value goes to
/// `notes` as a warning and the default is used.
pub fn compress_at_from_env(notes: &Notes) -> Option<f64> {
    let text = std::env::var(COMPRESS_AT_ENV).unwrap_or_default();
    if text.trim().is_empty() {
        return Some(DEFAULT_THRESHOLD);
    }
    parse_compress_at(&text).unwrap_or_else(|error| {
        notes(&format!(
            "qore: warning: {COMPRESS_AT_ENV}: {error}; using {}%",
            DEFAULT_THRESHOLD * 100.0
        ));
        Some(DEFAULT_THRESHOLD)
    })
}

/// What a manager and its sessions compress with (see the module doc).
pub(crate) struct Compressor {
    pub(crate) config: Arc<Config>,
    pub(crate) notes: Notes,
    pub(crate) store: Option<SharedStore>,
    /// The automatic threshold; `None`: off.
    pub(crate) threshold: Option<f64>,
    pub(crate) target: tokio::sync::OnceCell<Target>,
}

impl Compressor {
    /// The compression roster's first agent, reached the first time.
    async fn target(&self) -> Result<&Target, ErrorInfo> {
        let reached = self.target.get_or_try_init(|| async {
            let agent = roster_agent(&self.config, Roster::Compression)?;
            let spec = TargetSpec {
                agent: Some(agent),
                ..TargetSpec::default()
            };
            reach(&self.config, &spec, &self.notes).await
        });
        reached.await
    }

    /// Compress the stored session `key` (id, name or unique id prefix) into a new one,
    /// keeping `keep` (default: [`CompressOptions`]'s), `squeezed` of them summarised
    /// instead ([`CompressOptions::squeezed`]): [`compress::compress`] with this target, or
    /// with `own` (the open session's) when there is no compression roster.
    pub(crate) async fn compress(
        &self,
        key: &str,
        keep: Option<Keep>,
        squeezed: usize,
        own: Option<&Target>,
        cancel: &CancellationToken,
    ) -> Result<Compressed, SessionError> {
        let store = (self.store.as_ref()).ok_or_else(|| SessionError::Ephemeral(key.to_owned()))?;
        let (target, instructions) = match own {
            Some(own) if self.config.pipelines.compression.is_empty() => (own, None),
            _ => {
                let target = self.target().await?;
                (target, target.agent.as_ref().and_then(|a| a.system.clone()))
            }
        };
        let defaults = CompressOptions::default();
        let options = CompressOptions {
            keep: keep.unwrap_or(defaults.keep),
            instructions: instructions.unwrap_or(defaults.instructions),
            agent: target.agent.as_ref().map(|a| a.name.clone()),
            stream: target.options.stream,
            max_tokens: target.options.max_tokens,
            squeezed,
        };
        let (client, model) = (&target.client, &target.model);
        let done = compress::compress(store.as_ref(), key, client, model, &options, cancel.clone());
        Ok(done.await?)
    }
}

/// The heuristic count of each turn of the history, oldest first: a turn starts at a user
/// message that is not only tool results.
pub(crate) fn turn_sizes(state: &State) -> Vec<u64> {
    let tool_result = |b: &ContentBlock| matches!(b, ContentBlock::ToolResult { .. });
    let mut sizes: Vec<u64> = Vec::new();
    for message in state.history.iter() {
        let starts = message.role == Role::User && !message.blocks.iter().all(tool_result);
        match sizes.last_mut() {
            Some(size) if !starts => *size += estimate_message(message),
            _ => sizes.push(estimate_message(message)),
        }
    }
    sizes
}

/// How many of the newest turns (`sizes`, oldest first), at most `most`, fit together.
pub(crate) fn newest_fitting(sizes: &[u64], most: usize, fits: impl Fn(u64) -> bool) -> usize {
    let mut total = 0;
    (sizes.iter().rev().take(most))
        .take_while(|size| {
            total += **size;
            fits(total)
        })
        .count()
}

/// The turns automatic compression keeps as they are when they fit the threshold.
pub(crate) fn kept_turns() -> usize {
    match CompressOptions::default().keep {
        Keep::Turns(n) => n,
        Keep::Tokens(_) => 0,
    }
}

/// The estimated input of a request carrying the history (and `user`, when given).
pub(crate) fn estimate(state: &State, user: Option<&Message>) -> u64 {
    state.estimator.estimate_raw(raw_request(state, user))
}

/// The heuristic count of a request carrying the system prompt, the history, `user` (when
/// given) and the tool definitions; nothing is copied.
pub(crate) fn raw_request(state: &State, user: Option<&Message>) -> u64 {
    raw_frame(state, user) + estimate_messages(state.history.messages())
}

/// [`raw_request`] without the history: the system prompt, `user` and the tool definitions.
pub(crate) fn raw_frame(state: &State, user: Option<&Message>) -> u64 {
    let system =
        (state.layers.system_prompt()).map_or(0, |s| estimate_message(&Message::system(s)));
    let tools = (state.tools.as_ref()).map_or(0, |t| estimate_tools(t.registry.specs()));
    system + user.map_or(0, estimate_message) + tools
}

/// The context window of the session's model (see the module doc); the listing is asked
/// only when `may_list`, and once.
pub(crate) async fn window(state: &mut State, may_list: bool) -> Option<u64> {
    if let Some(known) = state.window {
        return known;
    }
    let reached = state.target.context_window;
    if reached.is_none() && !may_list {
        return None;
    }
    let listing = match reached {
        Some(_) => Vec::new(),
        None => match state.target.client.list_models().await {
            Ok(listing) => listing,
            Err(error) => {
                tracing::debug!(%error.message, "no context window: the model listing failed");
                Vec::new()
            }
        },
    };
    let window = context_window(reached, &listing, &state.target.model);
    state.window = Some(window);
    window
}

/// An estimator calibrated on a stored session's turns (undone ones left out), whose
/// requests carried `setup`'s system prompt and tools.
pub(crate) fn calibrated(turns: &[qore_store::StoredTurn], setup: &SessionSetup) -> TokenEstimator {
    let live: Vec<&qore_store::TurnRecord> = (turns.iter().filter(|t| !t.undone))
        .map(|t| &t.record)
        .collect();
    let system: Vec<Message> = setup
        .layers
        .system_prompt()
        .map(Message::system)
        .into_iter()
        .collect();
    let tools = (setup.tools.as_ref()).map_or(&[][..], |t| t.registry.specs());
    let protocol = setup.target.client.protocol().name();
    TokenEstimator::from_requests(&system, tools, &live, Some(protocol))
}

#[cfg(test)]
#[path = "auto_compress_tests.rs"]
mod tests;
