//! The server's copy of the store's keys, kept fresh off the request path.
//!
//! Promises:
//! - a background task asks the store for [`qore_store::Store::keys_version`] every
//!   [`CHECK_EVERY`] and reloads every key when it changed, so a key created or revoked by
//!   any process sharing the store takes effect here within a second; a request never waits
//!   on that check;
//! - fail closed: once a check has failed and the store last answered one more than
//!   [`STALE_AFTER`] ago, [`KeyCache::current`] gives no keys but [`Stale`], and the gate
//!   answers keyed requests 503 rather than from a stale copy; the next check that succeeds
//!   lifts it, without a restart;
//! - a failing store is logged once when it starts failing and once when it answers again
//!   (not every check; "answers again" only after a check that failed, never at startup),
//!   and each failure is counted in the store error metric;
//! - the task ends when the gate is dropped.

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use qore_store::{KeysVersion, Store, StoreError};

use super::keys::Snapshot;
use super::lock;
use super::StoreErrors;

/// How often the keys' version is asked for.
pub const CHECK_EVERY: Duration = Duration::from_millis(250);

/// How long the copy may go unconfirmed, while checks fail, before keyed requests are 503.
pub const STALE_AFTER: Duration = Duration::from_secs(1);

/// The copy could not be confirmed for over [`STALE_AFTER`]: the store cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stale;

struct CacheState {
    snapshot: Arc<Snapshot>,
    version: Option<KeysVersion>,
    /// When the store last answered a check.
    answered: Option<Instant>,
    /// Whether the last check failed (or none was made yet).
    failing: bool,
    /// Whether a check has failed since the last one that succeeded.
    failed: bool,
}

/// What a check's outcome is worth a log line for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Said {
    /// The first failure after a success (or the first check).
    Failing,
    /// A success after a failure (never the first check).
    Again,
}

impl CacheState {
    /// Take a check's outcome (answered `ok` at `now`); what to log.
    fn checked(&mut self, ok: bool, now: Instant) -> Option<Said> {
        let had_failed = std::mem::replace(&mut self.failed, !ok);
        self.failing = !ok;
        if ok {
            self.answered = Some(now);
        }
        match (ok, had_failed) {
            (true, true) => Some(Said::Again),
            (false, false) => Some(Said::Failing),
            _ => None,
        }
    }
}

/// The copy of the store's keys.
pub(crate) struct KeyCache {
    state: Mutex<CacheState>,
}

impl KeyCache {
    /// An empty copy that no check has confirmed yet (stale until one does).
    pub fn new() -> KeyCache {
        KeyCache {
            state: Mutex::new(CacheState {
                snapshot: Arc::default(),
                version: None,
                answered: None,
                failing: true,
                failed: false,
            }),
        }
    }

    /// The keys as last confirmed, or [`Stale`] (see the module doc).
    pub fn current(&self, now: Instant) -> Result<Arc<Snapshot>, Stale> {
        let state = lock(&self.state);
        let fresh =
            (state.answered).is_some_and(|at| now.saturating_duration_since(at) <= STALE_AFTER);
        if state.failing && !fresh {
            return Err(Stale);
        }
        Ok(state.snapshot.clone())
    }

    /// Check the store's keys version now and reload the keys when it changed.
    pub async fn refresh(&self, store: &dyn Store) -> Result<(), StoreError> {
        let result = self.check(store).await;
        let said = lock(&self.state).checked(result.is_ok(), Instant::now());
        match (said, &result) {
            (Some(Said::Again), _) => {
                tracing::info!("the store answers again: API keys are checked")
            }
            (Some(Said::Failing), Err(e)) => tracing::warn!("cannot check the API keys: {e}"),
            _ => {}
        }
        result
    }

    async fn check(&self, store: &dyn Store) -> Result<(), StoreError> {
        let version = store.keys_version().await?;
        if lock(&self.state).version == Some(version) {
            return Ok(());
        }
        let snapshot = Arc::new(Snapshot::of(store.keys().await?));
        let mut state = lock(&self.state);
        state.snapshot = snapshot;
        state.version = Some(version);
        Ok(())
    }
}

/// Check `cache` against `store` every [`CHECK_EVERY`] until the cache is dropped.
pub(crate) fn spawn_refresher(
    cache: Weak<KeyCache>,
    store: Arc<dyn Store>,
    errors: StoreErrors,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(CHECK_EVERY);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(cache) = cache.upgrade() else {
                return;
            };
            if let Err(e) = cache.refresh(&*store).await {
                errors.count(&e);
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_answers_again_only_after_a_failed_check() {
        // (checks in order, what each one logs)
        let (again, failing) = (Some(Said::Again), Some(Said::Failing));
        let cases: [(&[bool], &[Option<Said>]); 5] = [
            (&[true], &[None]),
            (&[true, true], &[None, None]),
            (&[false, true], &[failing, again]),
            (&[true, false, false, true], &[None, failing, None, again]),
            (&[false, false, true, true], &[failing, None, again, None]),
        ];
        for (checks, said) in cases {
            let cache = KeyCache::new();
            let mut state = lock(&cache.state);
            let got: Vec<_> = (checks.iter())
                .map(|ok| state.checked(*ok, Instant::now()))
                .collect();
            assert_eq!(got, said, "{checks:?}");
            assert_eq!(state.failing, !checks[checks.len() - 1], "{checks:?}");
        }
    }
}
