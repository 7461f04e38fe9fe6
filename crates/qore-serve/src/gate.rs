//! The server's admission: who is calling (their API key), which models they may use, whether
//! their limits let one more request through, and what they used. Everything is read from
//! the store, so several servers sharing one store (PostgreSQL behind a load balancer) behave
//! as one.
//!
//! Promises:
//! - with [`AuthMode::Keys`] a request needs a stored key that is not revoked (else a 401
//!   saying which: none sent, unknown, revoked); [`AuthMode::Open`] lets anyone through as
//!   [`Caller::open`]; [`AuthMode::UntilKeys`] does so only while the store holds no key at
//!   all (a revoked one counts, so revoking never opens the server);
//! - keys are checked against a copy refreshed in the background ([`cache`]): a key created
//!   or revoked by any process takes effect within a second; a key the copy does not know is
//!   looked up in the store once before the 401, so a key just created works at once; a key's
//!   text is never logged or kept, only its hash;
//! - fail closed: when the copy could not be confirmed for over a second because the store
//!   cannot be reached, keyed requests are 503 with `Retry-After`, never answered from it;
//! - a key may use the models its patterns match ([`Gate::permits`]); no patterns, every model;
//! - [`Gate::admit`] asks the store (one atomic step) for a key with `rpm`, `tpm` or
//!   `budget_tokens` and refuses (429, with `Retry-After` where waiting helps) past them
//!   ([`limits`]); a key without limits never touches the store per request;
//! - [`Gate::record`] queues a request's usage row for the writer task ([`usage`]): the
//!   request path never waits on that write; the queue is bounded and a row that is lost is
//!   counted and logged, never silently; [`Gate::flush`] waits for the queue (at shutdown,
//!   in tests);
//! - usage not written yet still counts: [`Gate::admit`] adds the key's tokens this process
//!   has not written to the store to the request's estimate, so a budget is not passed by
//!   rows waiting in the batch (across processes, each one's unwritten rows, normally at
//!   most 100 ms of its traffic, are the overshoot); while the store cannot be reached, a key
//!   with limits is refused with 503 (fail closed), never admitted unchecked;
//! - every store failure is counted by kind; one that cannot reach the store is a 503 with
//!   `Retry-After` ([`ServeError::from_store`]), any other a 500.

mod cache;
mod counters;
mod keys;
mod limits;
#[cfg(test)]
mod tests;
mod usage;
pub use counters::{store_error_kind, StoreErrors, UsageMetrics};
pub use usage::Unwritten;

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use axum::http::HeaderMap;
use qore_store::{utc_day, Store, StoreError, UsageRow};

use crate::{ErrorKind, ServeError};
use cache::KeyCache;
pub use cache::{CHECK_EVERY, STALE_AFTER};
pub(crate) use keys::presented as presented_keys;
pub use keys::{check_pattern, hash_key, new_key};
use keys::{presented, KeyEntry};
pub use limits::Admission;

/// How long a readiness check waits for the store at most.
const READY_WITHIN: Duration = Duration::from_secs(5);

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

/// The admission of one server: its keys, the usage writer.
pub struct Gate {
    store: Arc<dyn Store>,
    auth: AuthMode,
    keys: Arc<KeyCache>,
    refresher: tokio::task::JoinHandle<()>,
    usage: usage::Queue,
    errors: StoreErrors,
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.refresher.abort();
    }
}

impl Gate {
    /// A gate on `store`'s keys (loaded now), with its key refresher and usage writer started;
    /// store failures are counted in `errors`.
    pub async fn start(store: Arc<dyn Store>, auth: AuthMode, errors: StoreErrors) -> Gate {
        let keys = Arc::new(KeyCache::new());
        if let Err(e) = keys.refresh(&*store).await {
            errors.count(&e);
        }
        let refresher =
            cache::spawn_refresher(Arc::downgrade(&keys), store.clone(), errors.clone());
        Gate {
            usage: usage::start(store.clone(), errors.clone(), errors.usage().clone()),
            store,
            auth,
            keys,
            refresher,
            errors,
        }
    }

    /// Check the store's keys now (after the admin API changed one: the next request sees
    /// it); a failure is counted, and the background check tries again.
    pub async fn refresh_keys(&self) {
        if let Err(e) = self.keys.refresh(&*self.store).await {
            self.errors.count(&e);
        }
    }

    /// Whether the store holds any key (revoked ones included).
    pub async fn has_keys(store: &dyn Store) -> Result<bool, StoreError> {
        Ok(!store.keys().await?.is_empty())
    }

    pub fn auth_mode(&self) -> AuthMode {
        self.auth
    }

    /// The store the gate reads.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// A store failure met while doing `what`: counted, logged, and as the caller sees it.
    pub fn store_failed(&self, what: &str, error: &StoreError) -> ServeError {
        self.errors.count(error);
        if error.is_unavailable() {
            // Once per request while the store is down: the key refresher says it once.
            tracing::debug!("the store cannot be reached ({what}): {error}");
        } else {
            tracing::warn!("the store failed ({what}): {error}");
        }
        ServeError::from_store(what, error)
    }

    /// The caller of a request with these headers (`Authorization: Bearer KEY` or
    /// `x-api-key: KEY`).
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, ServeError> {
        if self.auth == AuthMode::Open {
            return Ok(Caller::open());
        }
        let Ok(keys) = self.keys.current(Instant::now()) else {
            // The refresher counted and logged the failures themselves.
            let error = StoreError::Unavailable("the API keys could not be checked".into());
            return Err(ServeError::from_store("checking API keys", &error));
        };
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
        let entry = match keys.find(&presented) {
            Some(entry) => entry.clone(),
            None => match self.look_up(&presented).await? {
                Some(entry) => entry,
                None => return refused("invalid API key"),
            },
        };
        if entry.record.is_revoked() {
            return refused("this API key was revoked");
        }
        Ok(Caller::of(&entry))
    }

    /// The first presented key the store itself knows (one that the copy does not know yet).
    async fn look_up(&self, presented: &[&str]) -> Result<Option<Arc<KeyEntry>>, ServeError> {
        for key in presented {
            match self.store.key_by_hash(&hash_key(key)).await {
                Ok(Some(record)) => return Ok(Some(Arc::new(KeyEntry::of(record)))),
                Ok(None) => {}
                Err(e) => return Err(self.store_failed("looking up an API key", &e)),
            }
        }
        Ok(None)
    }

    /// Whether `caller` may use `model` (an agent's name or `provider/model`, as requested).
    pub fn permits(&self, caller: &Caller, model: &str) -> bool {
        caller
            .entry
            .as_ref()
            .is_none_or(|entry| entry.permits(model))
    }

    /// Let one request of about `estimate` tokens through, or refuse it (429) when it would
    /// pass the key's `rpm`, `tpm` or budget; only a key with limits asks the store.
    pub async fn admit(&self, caller: &Caller, estimate: u64) -> Result<Admission, ServeError> {
        let Some(entry) = &caller.entry else {
            return Ok(Admission::default());
        };
        // What this process used and has not written yet counts as spent.
        let unwritten = self.usage.unwritten.tokens(&entry.record.id);
        let Some(check) = limits::check_of(&entry.record, estimate.saturating_add(unwritten))
        else {
            return Ok(Admission::default());
        };
        match self.store.admit(&check).await {
            Ok(verdict) => limits::answer(&check, verdict, estimate),
            Err(e) => Err(self.store_failed("checking the key's limits", &e)),
        }
    }

    /// Count one request of `caller` to `model` (as requested) answered by `agent`: its
    /// usage row goes to the writer (which also feeds the key's `tpm` window).
    pub fn record(
        &self,
        caller: &Caller,
        model: &str,
        agent: Option<&str>,
        usage: &qore_core::Usage,
        failed: bool,
    ) {
        let row = UsageRow {
            day: utc_day(SystemTime::now()),
            key_id: caller.key_id.clone().unwrap_or_default(),
            model: model.to_owned(),
            agent: agent.unwrap_or_default().to_owned(),
            requests: 1,
            errors: u64::from(failed),
            tokens_in: usage.input_tokens.unwrap_or(0),
            tokens_out: usage.output_tokens.unwrap_or(0),
        };
        self.usage.record(row);
    }

    /// Queue one request log row (written with the usage batches, never waited for).
    pub fn log(&self, row: qore_store::RequestLogRow) {
        self.usage.log(row);
    }

    /// Wait (at most `timeout`) until the usage recorded so far is in the store; whether it
    /// is.
    pub async fn flush(&self, timeout: Duration) -> bool {
        self.usage.flush(timeout).await
    }

    /// Whether the store answers now (for a readiness probe); the reason when not. Ready
    /// means a keyed request would pass too: when the key copy is stale (the store was
    /// down) it is refreshed here first, so a load balancer never sends requests to a
    /// process that answers its probe but still refuses them with 503 (the copy's own
    /// refresh comes up to [`CHECK_EVERY`] later).
    pub async fn store_answers(&self) -> Result<(), String> {
        let check = async {
            self.store.ping().await?;
            if self.auth != AuthMode::Open && self.keys.current(Instant::now()).is_err() {
                self.keys.refresh(&*self.store).await?;
            }
            Ok::<(), StoreError>(())
        };
        match tokio::time::timeout(READY_WITHIN, check).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                self.errors.count(&e);
                Err(format!("the store does not answer: {e}"))
            }
            Err(_) => Err(format!("the store did not answer within {READY_WITHIN:?}")),
        }
    }
}

/// A lock, also after a panic elsewhere (what it guards stays consistent: a snapshot is
/// swapped whole).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
