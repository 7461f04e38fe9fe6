//! [`Session`]: one conversation with one model. It owns its history, the system prompt
//! layers, the client and model, and the tools; [`Session::send`] runs one turn.
//!
//! Promises:
//! - one request in flight: starting a send cancels the one before it, which ends
//!   `Cancelled` and is recorded as such before the new one starts (sends on one session
//!   run one after the other, never interleaved);
//! - before every send, the request is built from the layers' system prompt, then the
//!   history and the new user message, sanitized for the wire ([`crate::sanitize`]);
//!   history itself keeps what happened;
//! - tools that are only on by the front end's default are left out (said once through the
//!   notes) for a model the server says has no tool calling and whose context is small:
//!   a plain chat's first request carries the conversation, not ~2,000 tokens of tools;
//! - a turn without tools is one request; with tools it is the tool loop; either way it ends
//!   in one [`TurnOutcome`]; a network failure says whether qore was "connecting to" the
//!   URL or "reading the answer from" it;
//! - unless the session is ephemeral, each turn (finished, failed or cancelled) is appended
//!   to the store in one transaction; a finished turn that cannot be saved is reported as
//!   failed, with the store's error;
//! - the in-memory history holds what the store keeps: the user message and every
//!   finished message and tool result of the turn (never half a message); only the tool
//!   calls of a turn's last message, which nothing answered (no tools were offered), stay
//!   in memory for the front end to show and are not stored ([`settle_turn`]); no send
//!   carries them ([`crate::sanitize`]);
//! - it keeps a token estimate calibrated by the input tokens its provider reports after
//!   each finished turn (and, when opened, by its stored turns), and compresses itself into
//!   a new linked session before a send that would pass the threshold
//!   ([`crate::auto_compress`]): its id is then the new session's;
//! - it keeps the encoding of the messages it sent ([`qore_client::EncodeCache`]) across
//!   turns, dropped when the target changes; [`Session::set_setup`] switches target, layers
//!   and tools (another agent or model) and keeps history, id, calibration and compression.

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use qore_client::tool_loop::{LoopEvent, ToolProtocol};
use qore_client::{CancellationToken, Client, EncodeCache};
use qore_core::{ErrorInfo, History, Message};
use qore_store::TurnRecord;

use crate::auto_compress::{raw_request, Compressor, OnCompressed};
use crate::layers::Layers;
use crate::outcome::{status_of, TurnOutcome};
use crate::run_turn::run_turn;
use crate::sanitize::settle_turn;
use crate::state::State;
pub use crate::state::{SessionSetup, SharedStore};
use crate::target::{Notes, Target};
use crate::tokens::{wire_prompt_tokens, TokenEstimator};
use crate::toolset::ToolSet;
use crate::undo::take_changes;

/// Append `record` to the session `id`. The store's calls never block the async workers (a
/// SQLite commit runs on the blocking pool, PostgreSQL is awaited), so other sessions keep
/// streaming meanwhile.
async fn save(store: &SharedStore, id: &str, record: &TurnRecord) -> Result<(), String> {
    (store.append_turn(id, record).await)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// One conversation (see the module doc).
pub struct Session {
    /// The stored sessions this one has been, oldest first: the one it was opened or created
    /// as, then each it was compressed into (append-only, so [`Session::id`] can lend the
    /// last). Empty when ephemeral.
    pub(crate) ids: boxcar::Vec<String>,
    store: Option<SharedStore>,
    pub(crate) compressor: Option<Arc<Compressor>>,
    pub(crate) on_compressed: Mutex<Option<OnCompressed>>,
    /// The request in flight: its generation and token.
    in_flight: Mutex<(u64, Option<CancellationToken>)>,
    pub(crate) state: tokio::sync::Mutex<State>,
}

impl Session {
    /// A session over `history`; `id` and `store` are `None` for an ephemeral one. Notes
    /// (tools the agent does not use, the text protocol chosen) go to `notes`.
    pub fn new(
        id: Option<String>,
        store: Option<SharedStore>,
        history: History,
        setup: SessionSetup,
        notes: &Notes,
    ) -> Session {
        let (target, layers, tools) = fitted(setup, notes);
        let ids = boxcar::Vec::new();
        if let Some(id) = id.filter(|_| store.is_some()) {
            ids.push(id);
        }
        Session {
            ids,
            store,
            compressor: None,
            on_compressed: Mutex::new(None),
            in_flight: Mutex::new((0, None)),
            state: tokio::sync::Mutex::new(State {
                history,
                target,
                layers,
                tools,
                estimator: TokenEstimator::new(),
                window: None,
                cache: EncodeCache::new(),
            }),
        }
    }

    /// This session compressing with `compressor` and its estimate calibrated as `estimator`.
    pub(crate) fn with_compressor(
        mut self,
        compressor: Arc<Compressor>,
        estimator: TokenEstimator,
    ) -> Session {
        self.compressor = Some(compressor);
        self.state.get_mut().estimator = estimator;
        self
    }

    /// The stored session's id (after a compression, the new session's); `None` when
    /// nothing is saved (ephemeral).
    pub fn id(&self) -> Option<&str> {
        let last = self.ids.count().checked_sub(1)?;
        self.ids.get(last).map(String::as_str)
    }

    /// The id this session had before its latest compression, if it was compressed.
    pub fn compressed_from(&self) -> Option<&str> {
        let before = self.ids.count().checked_sub(2)?;
        self.ids.get(before).map(String::as_str)
    }

    /// The conversation so far (no system message). Like every accessor below, it waits
    /// for a send in progress to end.
    pub async fn history(&self) -> History {
        self.state.lock().await.history.clone()
    }

    /// The conversation as the model sees it: the system prompt, then the history.
    pub async fn conversation(&self) -> History {
        let state = self.state.lock().await;
        let mut all = History::new();
        if let Some(system) = state.layers.system_prompt() {
            all.push(Message::system(system));
        }
        for message in &state.history {
            all.push(message.clone());
        }
        all
    }

    /// The system prompt layers.
    pub async fn layers(&self) -> Layers {
        self.state.lock().await.layers.clone()
    }

    /// Replace the system prompt layers (for the next send).
    pub async fn set_layers(&self, layers: Layers) {
        self.state.lock().await.layers = layers;
    }

    /// Replace the tools (for the next send).
    pub async fn set_tools(&self, tools: Option<ToolSet>) {
        self.state.lock().await.tools = tools;
    }

    /// Switch the model (and client) for the next send; history is kept (the context
    /// window is looked up again).
    pub async fn set_target(&self, target: Target) {
        self.state.lock().await.retarget(target);
    }

    /// Switch target, layers and tools at once for the next send (another agent or model):
    /// the tools fitted to the new target as [`Session::new`] fits them; history, id,
    /// calibration and automatic compression are kept.
    pub async fn set_setup(&self, setup: SessionSetup, notes: &Notes) {
        let (target, layers, tools) = fitted(setup, notes);
        let mut state = self.state.lock().await;
        (state.layers, state.tools) = (layers, tools);
        state.retarget(target);
    }

    /// The client and model of the next send.
    pub async fn client(&self) -> (Client, String) {
        let state = self.state.lock().await;
        (state.target.client.clone(), state.target.model.clone())
    }

    /// Cancel the request in flight, if any (it ends `Cancelled` and is recorded).
    pub fn cancel(&self) {
        let slot = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(token) = &slot.1 {
            token.cancel();
        }
    }

    /// Run one turn: `user` through to the final answer. The request in flight before it
    /// is cancelled; this one is cancelled by `cancel` or by the next send. Events go to
    /// `on_event` as they happen.
    pub async fn send(
        &self,
        user: Message,
        cancel: &CancellationToken,
        on_event: impl FnMut(LoopEvent<'_>) + Send,
    ) -> TurnOutcome {
        let (generation, token) = {
            let mut slot = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(previous) = slot.1.take() {
                previous.cancel();
            }
            slot.0 += 1;
            let token = cancel.child_token();
            slot.1 = Some(token.clone());
            (slot.0, token)
        };
        let mut state = self.state.lock().await;
        self.compress_if_due(&mut state, &user, &token).await;
        let started_at = SystemTime::now();
        let (replies, mut outcome) = run_turn(&mut state, &user, &token, on_event).await;
        let finished_at = SystemTime::now();
        let recorder = state
            .tools
            .as_ref()
            .and_then(|tools| tools.recorder.as_ref());
        let file_changes = recorder.map(take_changes).unwrap_or_default();
        observe(&mut state, &user, &replies, &outcome);
        if let (Some(id), Some(store)) = (self.id(), &self.store) {
            let mut kept = replies.clone();
            settle_turn(&mut kept);
            let record = TurnRecord {
                user: user.clone(),
                replies: kept,
                usage: outcome.usage(),
                model: Some(state.target.model.clone()),
                agent: state.target.agent.as_ref().map(|a| a.name.clone()),
                started_at,
                finished_at,
                status: status_of(&outcome),
                file_changes,
            };
            let saved = save(store, id, &record).await;
            if let Err(error) = saved {
                tracing::warn!("session {id}: the turn was not saved: {error}");
                if let TurnOutcome::Finished { usage, rounds, .. } = &outcome {
                    let error = ErrorInfo::config(format!("the turn was not saved: {error}"));
                    outcome = TurnOutcome::failed(error, *usage, *rounds);
                }
            }
        }
        state.history.push(user);
        for message in replies {
            state.history.push(message);
        }
        drop(state);
        let mut slot = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        if slot.0 == generation {
            slot.1 = None;
        }
        outcome
    }
}

/// `setup`'s parts, its tools as its target takes them: none when the agent does not use
/// tools or when they are only on by default ([`ToolSet::by_default`]) and the model has no
/// tool calling and a small context ([`SMALL_CONTEXT`]); the text protocol when the agent
/// asks for it or the server says the model has no tool calling (and the protocol was left
/// to qore); what was changed is said through `notes`.
fn fitted(setup: SessionSetup, notes: &Notes) -> (Target, Layers, Option<ToolSet>) {
    let SessionSetup {
        target,
        layers,
        mut tools,
    } = setup;
    if let Some(agent) = &target.agent {
        if !agent.enable_tools && tools.is_some() {
            notes("qore: the agent does not use tools (enable_tools = false): none offered");
            tools = None;
        }
        if let Some(tools) = &mut tools {
            if agent.text_tools && tools.auto_protocol {
                tools.config.tool_protocol = ToolProtocol::Text;
                tools.auto_protocol = false;
            }
        }
    }
    if tools.as_ref().is_some_and(|t| t.by_default) && prompt_only_and_small(&target) {
        notes(&format!(
            "qore: {} has no tool calling and a {}-token context: no tools are offered, so the \
             conversation has the room (--tools confirm describes them in the prompt)",
            target.model,
            target.context_window.unwrap_or_default()
        ));
        tools = None;
    }
    if let Some(tools) = &mut tools {
        if tools.auto_protocol && target.tool_calling == Some(false) {
            notes(&format!(
                "qore: the server says {} has no tool calling: tools are described in \
                 the prompt (--tool-protocol text)",
                target.model
            ));
            tools.config.tool_protocol = ToolProtocol::Text;
        }
    }
    (target, layers, tools)
}

/// Contexts up to this many tokens are small: the tools described in the prompt (the text
/// protocol, some 800 tokens for the built-in ones) would take a tenth of them or more.
pub const SMALL_CONTEXT: u64 = 16_384;

/// The server says the model has no tool calling (tools could only be described in the
/// prompt) and its context is [`SMALL_CONTEXT`] or less.
fn prompt_only_and_small(target: &Target) -> bool {
    target.tool_calling == Some(false) && target.context_window.is_some_and(|n| n <= SMALL_CONTEXT)
}

/// Calibrate the session's estimate by what the provider reported for a finished turn.
fn observe(state: &mut State, user: &Message, replies: &[Message], outcome: &TurnOutcome) {
    let TurnOutcome::Finished { usage, .. } = outcome else {
        return;
    };
    let Some(reported) = wire_prompt_tokens(usage, &**state.target.client.protocol()) else {
        return;
    };
    let base = raw_request(state, Some(user));
    (state.estimator).observe_turn_raw(base, replies, reported);
}
