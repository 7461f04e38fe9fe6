//! The request log's serve side: what a settled request's row holds, the `[serve]` settings
//! that shape it, and the background task that prunes old rows.
//!
//! Promises:
//! - one row per request, made where the request settles ([`crate::exchange::Exchange`])
//!   and handed to the usage writer's queue ([`crate::gate::Gate::log`]): the request never
//!   waits for the store, and rows are written in the writer's batches (no round trip of
//!   their own per request);
//! - bodies are kept only with `[serve] log_bodies = true`, each cut to `log_body_cap`
//!   bytes (on a character boundary);
//! - with `log_retention_days = N` (default [`DEFAULT_RETENTION_DAYS`]; 0 keeps every row),
//!   rows that started more than N days ago are deleted by [`start_pruning`] once at start
//!   and then every [`PRUNE_EVERY`]; a failure is logged and tried at the next round.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use qore_core::{StreamOutcome, Usage};
use qore_store::{log_id, RequestLogRow, Store};

/// Days a request log row is kept unless `[serve] log_retention_days` says otherwise.
pub const DEFAULT_RETENTION_DAYS: u64 = 30;
/// The most bytes kept of each body with `log_bodies` unless `log_body_cap` says otherwise.
pub const DEFAULT_BODY_CAP: usize = 64 * 1024;
/// How often old rows are pruned.
pub const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// How the request log is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSettings {
    pub bodies: bool,
    pub body_cap: usize,
    /// Days rows are kept; 0 keeps every row.
    pub retention_days: u64,
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            bodies: false,
            body_cap: DEFAULT_BODY_CAP,
            retention_days: DEFAULT_RETENTION_DAYS,
        }
    }
}

impl LogSettings {
    /// The `[serve]` table's values over the defaults.
    pub fn of(table: &crate::config::ServeTable) -> LogSettings {
        let default = LogSettings::default();
        LogSettings {
            bodies: table.log_bodies.unwrap_or(default.bodies),
            body_cap: table.log_body_cap.unwrap_or(default.body_cap),
            retention_days: (table.log_retention_days).unwrap_or(default.retention_days),
        }
    }

    /// `text` when bodies are kept, cut to the cap.
    pub fn body(&self, text: impl FnOnce() -> String) -> Option<String> {
        self.bodies.then(|| cut(text(), self.body_cap))
    }
}

/// `text` cut to at most `cap` bytes on a character boundary.
fn cut(mut text: String, cap: usize) -> String {
    if text.len() > cap {
        let mut end = cap;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// What the request path learns that the row needs besides the exchange's own fields.
#[derive(Debug, Clone, Default)]
pub struct LogNote {
    /// The model name as the request gave it (its first 200 characters), also when the
    /// server does not know it (the metrics then say `unknown`).
    pub asked: String,
    /// The upstream model that answered.
    pub upstream: String,
    /// The stored session the request wrote to.
    pub session_id: String,
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

/// The row of a request that started `elapsed` ago.
pub fn row(exchange: &crate::exchange::Exchange, ending: Ending<'_>) -> RequestLogRow {
    let elapsed = exchange.started.elapsed();
    let started = SystemTime::now() - elapsed;
    let settings = exchange.app.settings.request_log;
    let answer = match ending.outcome {
        Some(StreamOutcome::Finished { message, .. }) => settings.body(|| message.text()),
        _ => None,
    };
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    RequestLogRow {
        id: log_id(started),
        at_ms: started
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
        key_id: exchange.caller.key_id.clone().unwrap_or_default(),
        dialect: exchange.endpoint.to_owned(),
        model: if exchange.note.asked.is_empty() {
            exchange.model.clone()
        } else {
            exchange.note.asked.clone()
        },
        agent: exchange.agent.clone().unwrap_or_default(),
        upstream: exchange.note.upstream.clone(),
        status: ending.status,
        error_kind: ending.error_kind.to_owned(),
        tokens_in: ending.usage.input_tokens.unwrap_or(0),
        tokens_out: ending.usage.output_tokens.unwrap_or(0),
        cost_micros: None,
        ttfb_ms: exchange.first_byte.map(ms),
        duration_ms: ms(elapsed),
        session_id: exchange.note.session_id.clone(),
        response_id: (exchange.reply.as_ref()).map_or_else(String::new, |r| r.id.clone()),
        request_body: None,
        response_body: answer,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_kept_only_when_asked_and_cut_on_a_character() {
        let on = |cap| LogSettings {
            bodies: true,
            body_cap: cap,
            ..LogSettings::default()
        };
        // (settings, text, kept)
        let cases = [
            (LogSettings::default(), "hello", None),
            (on(10), "hello", Some("hello")),
            (on(3), "hello", Some("hel")),
            (on(2), "été", Some("é")),
            (on(0), "x", Some("")),
        ];
        for (settings, text, kept) in cases {
            let got = settings.body(|| text.to_owned());
            assert_eq!(got.as_deref(), kept, "{settings:?} {text}");
        }
    }
}
