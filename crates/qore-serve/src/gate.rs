//! The server's admission: who is calling (their API key), which models they may use, whether
//! their limits let one more request through, and what they used.
//!
//! Promises:
//! - with [`AuthMode::Keys`] a request needs a stored key that is not revoked (else a 401
//!   saying which: none sent, unknown, revoked); [`AuthMode::Open`] lets anyone through as
//!   [`Caller::open`]; [`AuthMode::UntilKeys`] does so only while the store holds no key at
//!   all (a revoked one counts, so revoking never opens the server);
//! - keys created or revoked in another process (`qore serve keys`) take effect within a
//!   second ([`keys`]); a key's text is never logged or kept, only its hash;
//! - a key may use the models its patterns match ([`Gate::permits`]); no patterns, every model;
//! - [`Gate::admit`] refuses (429, with `Retry-After` where waiting helps) a request past the
//!   key's `rpm`, `tpm` or lifetime `budget_tokens` ([`limits`]);
//! - [`Gate::record`] counts a request's tokens at once and queues its usage row for a
//!   writer thread ([`usage`]): the request path never waits on that write;
//!   [`Gate::flush`] waits for the queue (at shutdown, in tests).

mod keys;
mod limits;
#[cfg(test)]
mod tests;
mod usage;

use std::collections::HashMap;
use std::fmt;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use axum::http::HeaderMap;
use qore_session::SharedStore;
use qore_store::{utc_day, StoreError, UsageRow};

use crate::{ErrorKind, ServeError};
pub use keys::{check_pattern, hash_key, new_key, CHECK_EVERY};
use keys::{presented, KeyCache, KeyEntry};
pub use limits::Admission;
use limits::{over_budget, Meter};

/// How a server treats keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// A valid key is required.
    Keys,
    /// Keys are not checked (`--no-auth`).
    Open,
    /// No key exists yet (loopback only): anyone, until a key is created.
    UntilKeys,
}

/// Who is calling: a stored key, or nobody in particular. Its `Debug` shows the key's id and
/// name, never a secret.
#[derive(Clone, Default)]
pub struct Caller {
    pub key_id: Option<String>,
    pub key_name: Option<String>,
    entry: Option<Arc<KeyEntry>>,
}

impl Caller {
    /// A caller without a key: every model, no limits.
    pub fn open() -> Caller {
        Caller::default()
    }

    fn of(entry: &Arc<KeyEntry>) -> Caller {
        Caller {
            key_id: Some(entry.record.id.clone()),
            key_name: Some(entry.record.name.clone()),
            entry: Some(entry.clone()),
        }
    }
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caller")
            .field("key_id", &self.key_id)
            .field("key_name", &self.key_name)
            .finish()
    }
}

/// The admission of one server: its keys, their windows, the usage writer.
pub struct Gate {
    store: SharedStore,
    auth: AuthMode,
    keys: KeyCache,
    meters: Mutex<HashMap<String, Meter>>,
    usage: Sender<usage::Job>,
}

impl Gate {
    /// A gate on `store`'s keys (loaded now) with its usage writer started.
    pub fn new(store: SharedStore, auth: AuthMode) -> Gate {
        Gate {
            keys: KeyCache::load(&store),
            usage: usage::start(store.clone()),
            store,
            auth,
            meters: Mutex::default(),
        }
    }

    /// Whether the store holds any key (revoked ones included).
    pub fn has_keys(store: &SharedStore) -> Result<bool, StoreError> {
        Ok(!lock(store).keys()?.is_empty())
    }

    pub fn auth_mode(&self) -> AuthMode {
        self.auth
    }

    /// The caller of a request with these headers (`Authorization: Bearer KEY` or
    /// `x-api-key: KEY`).
    pub fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, ServeError> {
        self.authenticate_at(headers, Instant::now())
    }

    fn authenticate_at(&self, headers: &HeaderMap, now: Instant) -> Result<Caller, ServeError> {
        if self.auth == AuthMode::Open {
            return Ok(Caller::open());
        }
        let keys = self.keys.current(&self.store, now);
        if self.auth == AuthMode::UntilKeys && keys.by_hash.is_empty() {
            return Ok(Caller::open());
        }
        let presented = presented(headers);
        let refused = |message: &str| Err(ServeError::new(ErrorKind::Authentication, message));
        if presented.is_empty() {
            return refused(
                "no API key: send it as `Authorization: Bearer KEY` or `x-api-key: KEY`",
            );
        }
        match keys.find(&presented) {
            None => refused("invalid API key"),
            Some(entry) if entry.record.is_revoked() => refused("this API key was revoked"),
            Some(entry) => Ok(Caller::of(entry)),
        }
    }

    /// Whether `caller` may use `model` (an agent's name or `provider/model`, as requested).
    pub fn permits(&self, caller: &Caller, model: &str) -> bool {
        caller
            .entry
            .as_ref()
            .map_or(true, |entry| entry.permits(model))
    }

    /// Let one request of about `estimated_tokens` through, or refuse it (429) when it would
    /// pass the key's `rpm`, `tpm` or budget.
    pub fn admit(&self, caller: &Caller, estimated_tokens: u64) -> Result<Admission, ServeError> {
        self.admit_at(caller, estimated_tokens, Instant::now())
    }

    fn admit_at(
        &self,
        caller: &Caller,
        estimate: u64,
        now: Instant,
    ) -> Result<Admission, ServeError> {
        let Some(entry) = &caller.entry else {
            return Ok(Admission::default());
        };
        let key = &entry.record;
        if let Some(budget) = key.budget_tokens {
            let spent = self.spent(&key.id, now)?;
            if let Some(error) = over_budget(budget, spent, estimate) {
                return Err(error);
            }
        }
        let mut meters = lock(&self.meters);
        let meter = meters.entry(key.id.clone()).or_default();
        meter.admit(key.rpm, key.tpm, estimate, now)
    }

    /// A key's lifetime tokens: the meter's, else the store's (read outside the meters' lock).
    fn spent(&self, key_id: &str, now: Instant) -> Result<u64, ServeError> {
        if let Some(spent) = lock(&self.meters).get(key_id).and_then(|m| m.spent(now)) {
            return Ok(spent);
        }
        let stored = lock(&self.store).tokens_used(key_id).map_err(|e| {
            ServeError::new(
                ErrorKind::Internal,
                format!("cannot read the key's usage: {e}"),
            )
        })?;
        let mut meters = lock(&self.meters);
        Ok(meters
            .entry(key_id.to_owned())
            .or_default()
            .set_spent(stored, now))
    }

    /// Count one request of `caller` to `model` (as requested) answered by `agent`: its
    /// tokens in the key's window at once, its usage row through the writer.
    pub fn record(
        &self,
        caller: &Caller,
        model: &str,
        agent: Option<&str>,
        usage: &qore_core::Usage,
        failed: bool,
    ) {
        let tokens_in = usage.input_tokens.unwrap_or(0);
        let tokens_out = usage.output_tokens.unwrap_or(0);
        if let Some(key_id) = &caller.key_id {
            let mut meters = lock(&self.meters);
            let meter = meters.entry(key_id.clone()).or_default();
            meter.add_tokens(tokens_in.saturating_add(tokens_out), Instant::now());
        }
        let row = UsageRow {
            day: utc_day(SystemTime::now()),
            key_id: caller.key_id.clone().unwrap_or_default(),
            model: model.to_owned(),
            agent: agent.unwrap_or_default().to_owned(),
            requests: 1,
            errors: u64::from(failed),
            tokens_in,
            tokens_out,
        };
        if self.usage.send(usage::Job::Row(row)).is_err() {
            tracing::warn!("the usage writer is gone: usage of {model:?} not recorded");
        }
    }

    /// Wait (at most `timeout`) until the usage recorded so far is in the store; whether it
    /// is.
    pub fn flush(&self, timeout: Duration) -> bool {
        usage::flush(&self.usage, timeout)
    }

    /// Whether the store answers (for a readiness probe); the reason when not.
    pub async fn store_answers(&self) -> Result<(), String> {
        let store = self.store.clone();
        let answer = tokio::task::spawn_blocking(move || lock(&store).keys_version().map(drop));
        match answer.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(e) => Err(format!("the store check failed: {e}")),
        }
    }
}

/// A lock, also after a panic elsewhere (what it guards stays consistent: the store commits
/// whole transactions, the meters are counters).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
