//! One request's bookkeeping from admission to its end: metrics, usage per key, the
//! `after` hook (storing a turn), and the in-flight gauge. Settled exactly once: by the
//! answer's end, or, when the client went away first, by its drop (as cancelled).
//!
//! Durable before acknowledged: the `after` hook commits what the caller will be told about
//! (a stored response, a named session's turn) and says whether it did. [`Exchange::settle`]
//! awaits it and gives back its failure, and the caller of `settle` writes the dialect's
//! success (the 200, `response.completed`, `[DONE]`, `message_stop`) only on `Ok`: on a
//! failure it answers a 503 with `Retry-After` (or the dialect's in-stream error) carrying no
//! id. So a caller that continues at once finds what it stored, and nothing it was told about
//! is missing. On a drop (nothing more is told) a cancelled turn stores nothing; the hook
//! runs as its own task.
//!
//! The request log row is queued once the hook has run: it names the stored session the
//! hook wrote to (`session_id`), and a hook that failed turns the row into the 503 the
//! caller got. Its cost is the agent's `[pricing]` applied to the turn's usage.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;
use qore_core::{StreamOutcome, Usage};
use qore_store::{log_id, RequestLogRow};

use crate::gate::Caller;
use crate::metrics::InFlight;
use crate::state::App;
use crate::{ReplyMeta, ServeError};

/// What runs once the turn has ended (a finished turn is stored, say): the stored session
/// it wrote to, if any (the request log row names it); `Err` when what it had to keep is not
/// committed (the caller must then not be told it was).
pub type After = Box<
    dyn FnOnce(StreamOutcome, ReplyMeta) -> BoxFuture<'static, Result<Option<String>, ServeError>>
        + Send,
>;

/// The hook's work still to run, and the request log row to write once it has (the row
/// names the session the hook wrote to, and its failure when it failed).
struct Pending {
    app: Arc<App>,
    row: RequestLogRow,
    after: Option<BoxFuture<'static, Result<Option<String>, ServeError>>>,
}

impl Pending {
    /// Run the hook, then queue the row; the hook's failure.
    async fn finish(self) -> Result<(), ServeError> {
        let Pending {
            app,
            mut row,
            after,
        } = self;
        let kept = match after {
            Some(after) => after.await,
            None => Ok(None),
        };
        match &kept {
            Ok(Some(session)) => row.session_id = session.clone(),
            Ok(None) => {}
            Err(error) => {
                row.status = error.status;
                row.error_kind = error.kind.label().to_owned();
            }
        }
        app.gate.log(row);
        kept.map(drop)
    }
}

pub struct Exchange {
    pub app: Arc<App>,
    pub endpoint: &'static str,
    /// The model name as the caller gave it.
    pub model: String,
    pub agent: Option<String>,
    pub caller: Caller,
    pub started: Instant,
    /// Time spent waiting on the provider.
    pub waited: Duration,
    pub first_byte: Option<Duration>,
    pub after: Option<After>,
    /// The reply's labels, once there is a reply.
    pub reply: Option<ReplyMeta>,
    /// What the request log row needs that the path learns on the way.
    pub note: crate::request_log::LogNote,
    in_flight: Option<InFlight>,
    settled: bool,
}

impl Exchange {
    pub fn new(app: Arc<App>, endpoint: &'static str, caller: Caller, model: &str) -> Exchange {
        Exchange {
            app,
            endpoint,
            model: model.to_owned(),
            agent: None,
            caller,
            started: Instant::now(),
            waited: Duration::ZERO,
            first_byte: None,
            after: None,
            reply: None,
            note: Default::default(),
            in_flight: None,
            settled: false,
        }
    }

    /// Count this exchange as an open stream until it settles.
    pub fn streaming(&mut self) {
        self.in_flight = Some(self.app.metrics.stream_opened());
    }

    pub fn mark_first_byte(&mut self) {
        if self.first_byte.is_none() {
            let took = self.started.elapsed();
            self.first_byte = Some(took);
            self.app.metrics.first_byte(self.endpoint, took);
        }
    }

    /// The request was refused or failed before any answer.
    pub fn refused(mut self, error: &ServeError) {
        self.settled = true;
        let metrics = &self.app.metrics;
        metrics.request(self.endpoint, &self.model);
        metrics.error(self.endpoint, &self.model, error.kind.label());
        // Refusals by the gate itself (401/403/429 before routing) are not usage of a model.
        if !matches!(error.status, 401 | 403) {
            self.app.gate.record(
                &self.caller,
                &self.model,
                self.agent.as_deref(),
                &Usage::default(),
                true,
            );
        }
        let ending = crate::request_log::Ending {
            status: error.status,
            error_kind: error.kind.label(),
            usage: &Usage::default(),
            outcome: None,
        };
        self.app.gate.log(log_row(&self, ending));
        metrics.finished(self.endpoint, self.started.elapsed(), self.waited);
    }

    /// The turn ended as `outcome`: counted, and its `after` hook run to its end; its failure
    /// (what had to be kept is not committed: answer it, never the success).
    pub async fn settle(&mut self, outcome: &StreamOutcome) -> Result<(), ServeError> {
        let Some(pending) = self.account(outcome) else {
            return Ok(());
        };
        let kept = pending.finish().await;
        if let Err(error) = &kept {
            (self.app.metrics).error(self.endpoint, &self.model, error.kind.label());
        }
        kept
    }

    /// Count the turn's end; the `after` hook's work and the log row to write after it
    /// (`None` when already settled).
    fn account(&mut self, outcome: &StreamOutcome) -> Option<Pending> {
        if std::mem::replace(&mut self.settled, true) {
            return None;
        }
        let (usage, failed) = match outcome {
            StreamOutcome::Finished { usage, .. } => (usage, false),
            StreamOutcome::Failed { usage, .. } => (usage, true),
            StreamOutcome::Cancelled { usage } => (usage, false),
        };
        let metrics = &self.app.metrics;
        metrics.request(self.endpoint, &self.model);
        if let StreamOutcome::Failed { error, .. } = outcome {
            let kind = ServeError::from_upstream(error).kind;
            metrics.error(self.endpoint, &self.model, kind.label());
        }
        if matches!(outcome, StreamOutcome::Cancelled { .. }) {
            metrics.error(self.endpoint, &self.model, "cancelled");
        }
        metrics.tokens(
            &self.model,
            usage.input_tokens.unwrap_or(0),
            usage.output_tokens.unwrap_or(0),
        );
        self.app.gate.record(
            &self.caller,
            &self.model,
            self.agent.as_deref(),
            usage,
            failed,
        );
        let row = log_row(self, crate::request_log::Ending::of(outcome));
        metrics.finished(self.endpoint, self.started.elapsed(), self.waited);
        self.in_flight = None;
        let after = match (self.after.take(), &self.reply) {
            (Some(after), Some(reply)) => Some(after(outcome.clone(), reply.clone())),
            _ => None,
        };
        Some(Pending {
            app: self.app.clone(),
            row,
            after,
        })
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if !self.settled {
            let cancelled = StreamOutcome::Cancelled {
                usage: Usage::default(),
            };
            if let Some(pending) = self.account(&cancelled) {
                match (
                    pending.after.is_some(),
                    tokio::runtime::Handle::try_current(),
                ) {
                    // Nobody is told anything more: a failure was logged by the hook.
                    (true, Ok(runtime)) => drop(runtime.spawn(pending.finish())),
                    _ => pending.app.gate.log(pending.row),
                }
            }
        }
    }
}

/// The request log's row of `exchange`, ended as `ending`.
fn log_row(exchange: &Exchange, ending: crate::request_log::Ending<'_>) -> RequestLogRow {
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
        cost_micros: (exchange.agent.as_deref()).and_then(|agent| {
            crate::request_log::cost_micros(exchange.app.manager.config(), agent, ending.usage)
        }),
        ttfb_ms: exchange.first_byte.map(ms),
        duration_ms: ms(elapsed),
        // Filled once the `after` hook says which session it wrote to.
        session_id: String::new(),
        response_id: (exchange.reply.as_ref()).map_or_else(String::new, |r| r.id.clone()),
        request_body: None,
        response_body: answer,
    }
}
