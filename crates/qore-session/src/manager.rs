//! [`SessionManager`]: where sessions come from. It holds the store ([`SharedStore`]: SQLite
//! or PostgreSQL behind qore-store's async interface, or none: ephemeral),
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
//!   agent is; a file's completion or refactor agent is routed by `pipelines.toml` (the
//!   roster's first whose `[match]` accepts the file and project), and none matching is one
//!   error naming the roster and the file;
//! - an opened session's token estimate is calibrated by its stored turns; every session it
//!   makes compresses automatically ([`crate::auto_compress`]) with the compression roster's
//!   first agent, and [`SessionManager::compress`] compresses one on demand.

use std::path::Path;
use std::sync::Arc;

use qore_agents::config::Config;
use qore_client::CancellationToken;
use qore_core::{ErrorInfo, History};
use qore_store::{NewSession, SessionInfo, StoreError};

use crate::auto_compress::{calibrated, compress_at_from_env, Compressor};
use crate::compress::{Compressed, Keep};
use crate::roster::{roster_agent, roster_names, routed_agent, Roster};
use crate::session::Session;
use crate::state::{SessionSetup, SharedStore};
use crate::target::{reach, resolve_project, Notes, Target, TargetSpec};
use crate::tokens::TokenEstimator;
use crate::SessionError;

/// Creates, opens and releases sessions (see the module doc).
pub struct SessionManager {
    store: Option<SharedStore>,
    config: Arc<Config>,
    notes: Notes,
    compressor: Arc<Compressor>,
}

/// What [`SessionManager::compress`] compresses.
pub enum Compressing<'a> {
    /// An open session: it continues in the new session.
    Open(&'a Session),
    /// A stored session, by id, name or unique id prefix (`qore sessions compress`).
    Stored(&'a str),
}

/// Which session a front end starts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening<'a> {
    /// A new session.
    New,
    /// `--session`: the one this id, id prefix or name finds, else a new one with this name.
    Named(&'a str),
    /// `--continue`: the project's latest, else a new one.
    Latest,
}

impl SessionManager {
    /// A manager over `store` (either backend; `None`: ephemeral) with the agents of
    /// `config`. The automatic compression threshold is `QORE_COMPRESS_AT`'s.
    pub fn new(store: Option<SharedStore>, config: Config, notes: Notes) -> SessionManager {
        let config = Arc::new(config);
        let compressor = Arc::new(Compressor {
            config: config.clone(),
            threshold: compress_at_from_env(&notes),
            notes: notes.clone(),
            store: store.clone(),
            target: tokio::sync::OnceCell::new(),
        });
        SessionManager {
            store,
            config,
            notes,
            compressor,
        }
    }

    /// The automatic compression threshold of the sessions made from now on (a share of the
    /// context window; `None`: off), instead of `QORE_COMPRESS_AT`'s.
    pub fn set_compress_at(&mut self, threshold: Option<f64>) {
        self.compressor = Arc::new(Compressor {
            config: self.config.clone(),
            threshold,
            notes: self.notes.clone(),
            store: self.store.clone(),
            target: tokio::sync::OnceCell::new(),
        });
    }

    /// Compress a session with the compression roster's first agent into a new session
    /// linked to the original, which is never rewritten; the last `keep` turns (default:
    /// two) are copied, the older ones summarised. An open session continues in the new one
    /// (same target, tools and layers; its id becomes the new session's).
    pub async fn compress(
        &self,
        what: Compressing<'_>,
        keep: Option<Keep>,
        cancel: &CancellationToken,
    ) -> Result<Compressed, SessionError> {
        match what {
            Compressing::Open(session) => {
                session.compress_now(&self.compressor, keep, cancel).await
            }
            Compressing::Stored(key) => {
                (self.compressor.compress(key, keep, 0, None, cancel)).await
            }
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
        let first = roster_agent(&self.config, roster)?;
        let spec = TargetSpec {
            agent: Some(first),
            ..spec.clone()
        };
        self.reach(&spec).await
    }

    /// Reach `spec`'s agent, else the first of the code_completion roster; code-completion
    /// agents allowed (`qore complete`).
    pub async fn reach_completer(&self, spec: &TargetSpec) -> Result<Target, ErrorInfo> {
        self.reach_routed(Roster::CodeCompletion, spec, None).await
    }

    /// Reach `spec`'s agent, else the first agent of the code_completion roster whose
    /// `[match]` accepts `file` and the project (the name of `spec.project`'s folder, else
    /// the current directory's, as [`resolve_project`] finds it); code-completion agents
    /// allowed. No agent matching is one error naming the roster and the file.
    pub async fn reach_completer_for(
        &self,
        spec: &TargetSpec,
        file: &Path,
    ) -> Result<Target, ErrorInfo> {
        self.reach_routed(Roster::CodeCompletion, spec, Some(file))
            .await
    }

    /// [`SessionManager::reach_completer_for`] over the refactor roster; the agent is
    /// reached as [`SessionManager::reach`] reaches one (a code-completion agent is refused).
    pub async fn reach_refactorer_for(
        &self,
        spec: &TargetSpec,
        file: &Path,
    ) -> Result<Target, ErrorInfo> {
        self.reach_routed(Roster::Refactor, spec, Some(file)).await
    }

    /// `spec`'s agent, else the one `roster` routes `file` to (its first without a file),
    /// reached; a code-completion agent only for the code_completion roster. An empty roster
    /// reaches `spec`'s model without an agent, as a chat model.
    async fn reach_routed(
        &self,
        roster: Roster,
        spec: &TargetSpec,
        file: Option<&Path>,
    ) -> Result<Target, ErrorInfo> {
        let agent = match &spec.agent {
            Some(agent) => agent.clone(),
            // No roster: the model `qore run` would reach (the local one, or `--url`'s, by
            // default over openai-chat), as a chat model.
            None if roster_names(&self.config, roster).0.is_empty() => {
                let mut plain = spec.clone();
                if plain.endpoint.protocol.is_empty() {
                    plain.endpoint.protocol = "openai-chat".into();
                }
                return self.reach(&plain).await;
            }
            None => {
                let project = file.and_then(|_| resolve_project(spec.project.as_deref()).ok());
                routed_agent(&self.config, roster, file, project.as_deref())?
            }
        };
        let spec = TargetSpec {
            agent: Some(agent),
            ..spec.clone()
        };
        match roster {
            Roster::CodeCompletion => {
                crate::target::reach_completer(&self.config, &spec, &self.notes).await
            }
            _ => self.reach(&spec).await,
        }
    }

    /// Find a stored session by id, name or unique id prefix.
    pub async fn find(&self, key: &str) -> Result<SessionInfo, SessionError> {
        let store = self.store_for(key)?;
        Ok(store.session(key).await?)
    }

    /// The session of `project` written last, if any (none when ephemeral).
    pub async fn latest(&self, project: &Path) -> Result<Option<SessionInfo>, SessionError> {
        let Some(store) = &self.store else {
            return Ok(None);
        };
        Ok(store.latest_for_project(project).await?)
    }

    /// A new session (saved unless ephemeral).
    pub async fn create(
        &self,
        new: &NewSession,
        setup: SessionSetup,
    ) -> Result<Session, SessionError> {
        let id = match &self.store {
            Some(store) => Some(store.create_session(new).await?),
            None => None,
        };
        Ok(self.session(id, History::new(), setup, TokenEstimator::new()))
    }

    /// The stored session `key` names (id, name or unique id prefix), its history loaded.
    pub async fn open(&self, key: &str, setup: SessionSetup) -> Result<Session, SessionError> {
        let store = self.store_for(key)?;
        let id = store.session(key).await?.id;
        let turns = store.turns(&id).await?;
        let live = turns.iter().filter(|t| !t.undone);
        let history: History = (live
            .flat_map(|t| std::iter::once(&t.record.user).chain(&t.record.replies)))
        .cloned()
        .collect::<Vec<_>>()
        .into();
        let estimator = calibrated(&turns, &setup);
        Ok(self.session(Some(id), history, setup, estimator))
    }

    /// The session a front end's flags ask for (`--session`, `-c/--continue`, neither):
    /// `new` says what a new one records (its project is where `Latest` looks).
    pub async fn start(
        &self,
        opening: Opening<'_>,
        new: &NewSession,
        setup: SessionSetup,
    ) -> Result<Session, SessionError> {
        let latest = match (&opening, &new.project_dir) {
            (Opening::Latest, Some(project)) => self.latest(project).await?,
            _ => None,
        };
        match (opening, latest) {
            (Opening::Named(key), _) => self.open_or_create(key, new, setup).await,
            (Opening::Latest, Some(latest)) => self.open(&latest.id, setup).await,
            (Opening::Latest | Opening::New, _) => self.create(new, setup).await,
        }
    }

    /// The stored session `key` names, else a new one named `key` (`--session NAME`).
    pub async fn open_or_create(
        &self,
        key: &str,
        new: &NewSession,
        setup: SessionSetup,
    ) -> Result<Session, SessionError> {
        if self.store.is_none() {
            return Err(SessionError::Ephemeral(key.to_owned()));
        }
        match self.find(key).await {
            Ok(_) => self.open(key, setup).await,
            Err(SessionError::Store(StoreError::NotFound(_))) => {
                let named = NewSession {
                    name: Some(key.to_owned()),
                    ..new.clone()
                };
                self.create(&named, setup).await
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

    fn session(
        &self,
        id: Option<String>,
        history: History,
        setup: SessionSetup,
        estimator: TokenEstimator,
    ) -> Session {
        Session::new(id, self.store.clone(), history, setup, &self.notes)
            .with_compressor(self.compressor.clone(), estimator)
    }
}
