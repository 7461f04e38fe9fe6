//! The request log's serve side: what a settled request's row holds, the `[serve]` settings
//! that shape it, and the background task that prunes old rows.
//!
//! Promises:
//! - one row per request, made where the request settles (the exchange)
//!   and handed to the usage writer's queue ([`crate::gate::Gate::log`]): the request never
//!   waits for the store, and rows are written in the writer's batches (no round trip of
//!   their own per request);
//! - bodies are kept only with `[serve] log_bodies = true`, each cut to `log_body_cap`
//!   bytes (on a character boundary);
//! - with `log_retention_days = N` (default [`DEFAULT_RETENTION_DAYS`]; 0 keeps every row),
//!   rows that started more than N days ago are deleted by [`start_pruning`] once at start
//!   and then every [`PRUNE_EVERY`]; a failure is logged and tried at the next round;
//! - a row's cost ([`cost_micros`]) is its agent's `[pricing]` applied to its usage
//!   (`qore_agents::pricing::Pricing::cost`), in millionths of a dollar; none when the agent
//!   has no `[pricing]`, the request named no agent, or the provider did not report both
//!   token counts. Usage sums are priced the same way from summed tokens ([`usage_cost`]),
//!   as `qore serve usage --json` does.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use crate::log_settings::{LogSettings, DEFAULT_BODY_CAP, DEFAULT_RETENTION_DAYS, PRUNE_EVERY};

use qore_core::{StreamOutcome, Usage};
use qore_store::Store;

/// What the request path learns that the row needs besides the exchange's own fields.
#[derive(Debug, Clone, Default)]
pub struct LogNote {
    /// The model name as the request gave it (its first 200 characters), also when the
    /// server does not know it (the metrics then say `unknown`).
    pub asked: String,
    /// The upstream model that answered.
    pub upstream: String,
}

/// What `usage` of `agent` cost in dollars at its profile's `[pricing]`, if it has one.
pub fn cost(config: &qore_agents::config::Config, agent: &str, usage: &Usage) -> Option<f64> {
    let pricing = config.catalog.get(agent)?.pricing?;
    pricing.cost(usage)
}

/// [`cost`] in millionths of a dollar, rounded (what a request log row keeps).
pub fn cost_micros(
    config: &qore_agents::config::Config,
    agent: &str,
    usage: &Usage,
) -> Option<i64> {
    cost(config, agent, usage).map(|dollars| (dollars * 1e6).round() as i64)
}

/// What `tokens_in` and `tokens_out` summed over rows of `agent` cost in dollars (the
/// prompt priced as fresh input: usage rows keep no cache counts).
pub fn usage_cost(
    config: &qore_agents::config::Config,
    agent: &str,
    tokens_in: u64,
    tokens_out: u64,
) -> Option<f64> {
    let usage = Usage {
        input_tokens: Some(tokens_in),
        output_tokens: Some(tokens_out),
        ..Usage::default()
    };
    cost(config, agent, &usage)
}

/// How one request ended, as the row records it.
pub struct Ending<'a> {
    pub status: u16,
    pub error_kind: &'a str,
    pub usage: &'a Usage,
    pub outcome: Option<&'a StreamOutcome>,
}

impl<'a> Ending<'a> {
    /// The ending of a turn that ran: 200, the upstream's failure, or 499 when the caller
    /// went away.
    pub fn of(outcome: &'a StreamOutcome) -> Ending<'a> {
        let (status, error_kind, usage) = match outcome {
            StreamOutcome::Finished { usage, .. } => (200, "", usage),
            StreamOutcome::Failed { usage, error } => {
                let error = crate::ServeError::from_upstream(error);
                (error.status, error.kind.label(), usage)
            }
            StreamOutcome::Cancelled { usage } => (499, "cancelled", usage),
        };
        Ending {
            status,
            error_kind,
            usage,
            outcome: Some(outcome),
        }
    }
}

/// Prune rows older than the retention now and every [`PRUNE_EVERY`] (nothing with 0 days).
/// The task ends when `stop` is cancelled.
pub fn start_pruning(
    store: Arc<dyn Store>,
    settings: LogSettings,
    stop: tokio_util::sync::CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if settings.retention_days == 0 {
            return;
        }
        let keep = Duration::from_secs(settings.retention_days.saturating_mul(86_400));
        let mut every = tokio::time::interval(PRUNE_EVERY);
        loop {
            tokio::select! {
                _ = every.tick() => {}
                () = stop.cancelled() => return,
            }
            let before = SystemTime::now().checked_sub(keep).unwrap_or(UNIX_EPOCH);
            let before_ms = (before.duration_since(UNIX_EPOCH))
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
            match store.prune_request_log(before_ms).await {
                Ok(0) => {}
                Ok(n) => tracing::info!("request log: {n} rows older than {keep:?} deleted"),
                Err(e) => tracing::warn!("request log: cannot delete old rows: {e}"),
            }
        }
    })
}
