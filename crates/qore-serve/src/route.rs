//! From a request's `model` to the targets that may answer it, in order: the agent (or
//! `provider/model`) named, then the agent's `fallbacks`. Targets are reached once and kept
//! (a reach renders and checks a profile; a request should not), keyed by the name and the
//! per-request settings an agent's body bakes in (max tokens, temperature).
//!
//! Promises: an agent name wins over a `provider/model` reading of the same text; a name
//! that is neither is [`ErrorKind::NotFound`] naming it; for chat, an agent whose `[body]`
//! fills in the middle and reads no history is refused, and for fill-in-the-middle one whose
//! body does not read the prefix/suffix (what the body reads decides, not the `completion`
//! tag: `qore_agents::body_reads`); a fallback that cannot be reached is skipped with a warning, never the whole
//! request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use qore_client::RetryPolicy;
use qore_session::provider_target::{reach_provider, split_provider_model};
use qore_session::{SessionManager, Target, TargetSpec};

use crate::{ErrorKind, ServeError};

/// How many reached targets are kept before the cache starts over.
const CACHE_LIMIT: usize = 256;

/// One target that may answer, and the name it answers under (for usage and metrics).
#[derive(Clone)]
pub struct Candidate {
    pub name: String,
    /// The agent's name, when the name is an agent.
    pub agent: Option<String>,
    pub target: Arc<Target>,
    /// Whether the model takes images, once asked ([`crate::capability`]).
    pub images: Arc<tokio::sync::OnceCell<Option<bool>>>,
    /// The agent's `fallbacks`, tried in order when it cannot answer.
    pub fallbacks: Arc<[String]>,
}

/// What a request sets that an agent's body bakes in.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Baked {
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
}

type Key = (String, Option<u32>, Option<u64>);

/// What the target is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    Chat,
    /// Fill in the middle (`/v1/completions`).
    Fim,
}

/// Reached targets by name.
#[derive(Default)]
pub struct Router {
    cache: Mutex<HashMap<Key, Candidate>>,
    known: Mutex<HashMap<String, bool>>,
    project: Option<std::path::PathBuf>,
}

impl Router {
    pub fn new(project: Option<std::path::PathBuf>) -> Router {
        Router {
            cache: Mutex::default(),
            known: Mutex::default(),
            project,
        }
    }

    /// Whether `name` names something this server can reach (an agent or a known provider);
    /// remembered, since every request asks.
    pub fn knows(&self, manager: &SessionManager, name: &str) -> bool {
        let lock = || self.known.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&known) = lock().get(name) {
            return known;
        }
        let config = manager.config();
        let known = is_chat_agent(manager, name)
            || split_provider_model(name).is_some_and(|(p, _)| config.providers.get(p).is_some());
        let mut memo = lock();
        if memo.len() >= CACHE_LIMIT {
            memo.clear();
        }
        memo.insert(name.to_owned(), known);
        known
    }

    /// The candidates for `name`: itself, then its fallbacks.
    pub async fn plan(
        &self,
        manager: &SessionManager,
        name: &str,
        baked: Baked,
    ) -> Result<Vec<Candidate>, ServeError> {
        self.plan_for(manager, name, baked, Job::Chat).await
    }

    /// [`Router::plan`] for `job`: a code-completion agent answers only fill-in-the-middle.
    pub async fn plan_for(
        &self,
        manager: &SessionManager,
        name: &str,
        baked: Baked,
        job: Job,
    ) -> Result<Vec<Candidate>, ServeError> {
        let first = self.reach(manager, name, baked, job).await?;
        let fallbacks = first.fallbacks.clone();
        let mut plan = vec![first];
        for fallback in fallbacks.iter() {
            match Box::pin(self.reach(manager, fallback, baked, job)).await {
                Ok(candidate) => plan.push(candidate),
                Err(err) => tracing::warn!("fallback {fallback:?} of {name:?} skipped: {err}"),
            }
        }
        Ok(plan)
    }

    async fn reach(
        &self,
        manager: &SessionManager,
        name: &str,
        baked: Baked,
        job: Job,
    ) -> Result<Candidate, ServeError> {
        let tagged = format!("{job:?}:{name}");
        let temperature = baked.temperature.map(f64::to_bits);
        let probes = [
            (tagged.clone(), baked.max_tokens, temperature),
            (name.to_owned(), None, None),
        ];
        if let Some(hit) = probes.iter().find_map(|key| self.lock().get(key).cloned()) {
            return Ok(hit);
        }
        let agent = match job {
            Job::Chat => is_chat_agent(manager, name),
            Job::Fim => match manager.config().catalog.get(name) {
                Some(a) if !a.is_abstract && !a.reads.fills() => {
                    return Err(ServeError::invalid(
                        "model",
                        format!(
                            "agent {name:?} chats (its [body] does not read ctx.prefix or \
                             ctx.suffix): /v1/completions needs a fill-in-the-middle agent"
                        ),
                    ))
                }
                Some(a) => !a.is_abstract,
                None => false,
            },
        };
        let [agent_key, plain_key] = probes;
        let key: Key = match agent {
            true => agent_key,
            false => plain_key,
        };
        let target = if agent {
            let spec = TargetSpec {
                agent: Some(name.to_owned()),
                max_tokens: baked.max_tokens,
                temperature: baked.temperature,
                project: self.project.clone(),
                ..TargetSpec::default()
            };
            match job {
                Job::Chat => manager.reach(&spec).await,
                Job::Fim => manager.reach_completer(&spec).await,
            }
        } else if let Some((provider, model)) = split_provider_model(name) {
            if manager.config().providers.get(provider).is_none() {
                return Err(unknown(name));
            }
            reach_provider(manager.config(), provider, model).await
        } else {
            return Err(unknown(name));
        };
        let mut target = target.map_err(|err| {
            let mut error = ServeError::from_upstream(&err);
            if err.category == qore_core::ErrorCategory::Config {
                error = ServeError::new(ErrorKind::InvalidRequest, err.message.clone());
                error.param = Some("model".into());
            }
            error
        })?;
        // No retries here: a 429 or 5xx goes to the next candidate, or to the caller with
        // the upstream's Retry-After (its SDK retries), never into a silent wait.
        target.client = target.client.clone().with_retry(RetryPolicy::none());
        let candidate = Candidate {
            name: name.to_owned(),
            agent: agent.then(|| name.to_owned()),
            target: Arc::new(target),
            images: Arc::default(),
            fallbacks: match (agent, manager.config().catalog.get(name)) {
                (true, Some(profile)) => profile.fallbacks.clone().into(),
                _ => Arc::from([]),
            },
        };
        let mut cache = self.lock();
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(key, candidate.clone());
        Ok(candidate)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Candidate>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A concrete agent that can chat (its body does not fill in the middle without history).
pub fn is_chat_agent(manager: &SessionManager, name: &str) -> bool {
    (manager.config().catalog.get(name)).is_some_and(|a| !a.is_abstract && a.reads.chats())
}

fn unknown(name: &str) -> ServeError {
    let mut error = ServeError::new(
        ErrorKind::NotFound,
        format!(
            "the model {name:?} does not exist: name an agent (`qore agents list`) or \
             provider/model (e.g. local/default)"
        ),
    );
    error.param = Some("model".into());
    error
}
