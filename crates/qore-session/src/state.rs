//! What a session is made of, apart from the session itself: the store it shares with its
//! manager ([`SharedStore`]), what it runs with ([`SessionSetup`]) and the part a send
//! locks ([`State`]). The session, its turn, its compression and its manager all build on
//! these; none of them is needed here.
//!
//! Promises: a new setup's first layer is the agent's prompt (else the target's system
//! prompt) and it has no tools; retargeting a state drops its looked-up window and its
//! encoding cache.

use std::sync::Arc;

use qore_client::EncodeCache;
use qore_core::History;
use qore_store::Store;

use crate::layers::Layers;
use crate::target::Target;
use crate::tokens::TokenEstimator;
use crate::toolset::ToolSet;

/// The store (either backend), shared by a manager and its sessions.
pub type SharedStore = Arc<dyn Store>;

/// What a session runs with: the model reached, the prompt layers, the tools (if any).
pub struct SessionSetup {
    /// The model reached: its client, model name and agent settings.
    pub target: Target,
    /// The system prompt layers (the agent's prompt first, then rules and the caller's).
    pub layers: Layers,
    /// The tools offered, their policy and approver (`None`: no tools).
    pub tools: Option<ToolSet>,
}

impl SessionSetup {
    /// A setup without tools whose first layer is the agent's prompt (or the target's
    /// system prompt).
    pub fn new(target: Target) -> SessionSetup {
        let agent_prompt = match &target.agent {
            Some(agent) => agent.system.clone(),
            None => target.system.clone(),
        };
        SessionSetup {
            target,
            layers: Layers::new(agent_prompt),
            tools: None,
        }
    }
}

/// The mutable part, behind one lock: a send holds it for its whole turn.
pub(crate) struct State {
    pub(crate) history: History,
    pub(crate) target: Target,
    pub(crate) layers: Layers,
    pub(crate) tools: Option<ToolSet>,
    pub(crate) estimator: TokenEstimator,
    /// The model's context window once looked up (`Some(None)`: unknown).
    pub(crate) window: Option<Option<u64>>,
    /// The messages already encoded for this session's requests, reused across turns.
    pub(crate) cache: EncodeCache,
}

impl State {
    /// `target` for the next send: its context window is looked up again and nothing
    /// encoded for the one before is reused.
    pub(crate) fn retarget(&mut self, target: Target) {
        self.target = target;
        self.window = None;
        self.cache = EncodeCache::new();
    }
}
