//! [`SessionManager`]: where sessions come from. It holds the store (or none: ephemeral),
//! the agent configuration and the notes sink, and is the one place that resolves an agent,
//! provider and model into a ready client ([`SessionManager::reach`]).
//!
//! Promises:
//! - a session is found by exact id, then exact name, then unique id prefix (an ambiguous
//!   prefix is an error listing the candidates); the latest of a project is the one written
//!   last;
//! - opening a session loads its history from the store; idle sessions live on disk only:
//!   the manager keeps no session in memory, and [`SessionManager::release`] drops one;
//! - an ephemeral manager creates sessions that save nothing and opens none;
//! - a roster's agent (e.g. the compression roster's first) is reached exactly as a named
//!   agent is.

use std::path::Path;
use std::sync::{Arc, Mutex};

use qore_agents::config::Config;
use qore_core::{ErrorInfo, History};
use qore_store::{NewSession, SessionInfo, Store, StoreError};

use crate::session::{Session, SessionSetup, SharedStore};
use crate::target::{reach, Notes, Target, TargetSpec};
use crate::SessionError;

/// A roster of `pipelines.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roster {
    Chat,
    Compression,
    Refactor,
}

/// Creates, opens and releases sessions (see the module doc).
pub struct SessionManager {
    store: Option<SharedStore>,
    config: Arc<Config>,
    notes: Notes,
}

impl SessionManager {
    /// A manager over `store` (`None`: ephemeral) with the agents of `config`.
    pub fn new(store: Option<Store>, config: Config, notes: Notes) -> SessionManager {
        SessionManager {
            store: store.map(|s| Arc::new(Mutex::new(s))),
            config: Arc::new(config),
            notes,
        }
    }

    /// The store, unless ephemeral.
    pub fn store(&self) -> Option<&SharedStore> {
        self.store.as_ref()
    }

    /// The agent configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Where notes for the user go.
    pub fn notes(&self) -> &Notes {
        &self.notes
    }

    /// Reach the model `spec` names: agent, provider and model resolved, client ready.
    pub async fn reach(&self, spec: &TargetSpec) -> Result<Target, ErrorInfo> {
        reach(&self.config, spec, &self.notes).await
    }

    /// Reach the first agent of `roster`, with `spec`'s overrides (its agent is ignored).
    pub async fn reach_roster(
        &self,
        roster: Roster,
        spec: &TargetSpec,
    ) -> Result<Target, ErrorInfo> {
        let pipelines = &self.config.pipelines;
        let (names, word) = match roster {
            Roster::Chat => (&pipelines.chat, "chat"),
            Roster::Compression => (&pipelines.compression, "compression"),
            Roster::Refactor => (&pipelines.refactor, "refactor"),
        };
        let Some(first) = names.first() else {
            return Err(ErrorInfo::config(format!(
                "the {word} roster of pipelines.toml names no agent"
            )));
        };
        let spec = TargetSpec {
            agent: Some(first.clone()),
            ..spec.clone()
        };
        self.reach(&spec).await
    }

    /// Find a stored session by id, name or unique id prefix.
    pub fn find(&self, key: &str) -> Result<SessionInfo, SessionError> {
        let store = self.store_for(key)?;
        let info = store
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .session(key)?;
        Ok(info)
    }

    /// The session of `project` written last, if any (none when ephemeral).
    pub fn latest(&self, project: &Path) -> Result<Option<SessionInfo>, SessionError> {
        let Some(store) = &self.store else {
            return Ok(None);
        };
        let store = store.lock().unwrap_or_else(|e| e.into_inner());
        Ok(store.latest_for_project(project)?)
    }

    /// A new session (saved unless ephemeral).
    pub fn create(&self, new: &NewSession, setup: SessionSetup) -> Result<Session, SessionError> {
        let id = match &self.store {
            Some(store) => Some(
                store
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .create_session(new)?,
            ),
            None => None,
        };
        Ok(self.session(id, History::new(), setup))
    }

    /// The stored session `key` names (id, name or unique id prefix), its history loaded.
    pub fn open(&self, key: &str, setup: SessionSetup) -> Result<Session, SessionError> {
        let store = self.store_for(key)?;
        let (id, history) = {
            let store = store.lock().unwrap_or_else(|e| e.into_inner());
            let id = store.session(key)?.id;
            let history = store.history(&id)?;
            (id, history)
        };
        Ok(self.session(Some(id), history, setup))
    }

    /// The stored session `key` names, else a new one named `key` (`--session NAME`).
    pub fn open_or_create(
        &self,
        key: &str,
        new: &NewSession,
        setup: SessionSetup,
    ) -> Result<Session, SessionError> {
        if self.store.is_none() {
            return Err(SessionError::Ephemeral(key.to_owned()));
        }
        match self.find(key) {
            Ok(_) => self.open(key, setup),
            Err(SessionError::Store(StoreError::NotFound(_))) => {
                let named = NewSession {
                    name: Some(key.to_owned()),
                    ..new.clone()
                };
                self.create(&named, setup)
            }
            Err(other) => Err(other),
        }
    }

    /// Done with `session`: it is dropped from memory; what it saved stays on disk.
    pub fn release(&self, session: Session) {
        session.cancel();
        drop(session);
    }

    fn store_for(&self, key: &str) -> Result<&SharedStore, SessionError> {
        (self.store.as_ref()).ok_or_else(|| SessionError::Ephemeral(key.to_owned()))
    }

    fn session(&self, id: Option<String>, history: History, setup: SessionSetup) -> Session {
        Session::new(id, self.store.clone(), history, setup, &self.notes)
    }
}
