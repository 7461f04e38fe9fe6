//! The usage writer: a task that adds usage rows to the store off the request path.
//!
//! Promises:
//! - a request never waits for the store to record its usage: [`Gate::record`] puts its row
//!   on a queue of at most [`QUEUE`] rows and returns;
//! - rows queued within [`BATCH`] of each other are merged per (day, key, model, agent) and
//!   written by one [`qore_store::Store::record_usage`] call (one transaction; it also feeds
//!   the keys' `tpm` windows): a row is first tried at most [`BATCH`] after it was queued;
//! - bounded in memory and age: while the store cannot be reached the merged rows are kept
//!   (at most [`MOST_HELD`] of them, for at most [`MOST_HELD_FOR`]) and retried every
//!   [`RETRY_EVERY`];
//! - never dropped silently: a row that finds the queue full, rows past [`MOST_HELD`] or
//!   [`MOST_HELD_FOR`], and rows the store refuses for another reason are counted in
//!   `qore_usage_rows_dropped_total{reason}` (one per request) and logged with their number
//!   (a queue-full log at most once a second, with the count since the last one);
//! - the rows not in the store yet are counted per key ([`Unwritten`]), and the gate adds a
//!   key's unwritten tokens to what its limits check asks the store, so a budget or `tpm` is
//!   not passed by usage this process has not written yet; they are also the gauge
//!   `qore_usage_rows_unwritten`;
//! - request log rows ([`Queue::log`]) ride the same queue and batches: one
//!   [`qore_store::Store::record_requests`] call per batch beside the usage write, kept for
//!   a store that cannot be reached within the same bounds, dropped (logged, counted under
//!   reason `log_*`) past them or when the store refuses them;
//! - a flush returns once every row queued before it is written, saying whether it was; when
//!   the gate is dropped the writer writes what is queued and ends. A crash loses the rows
//!   queued and held (at most [`BATCH`] of traffic while the store answers).
//!
//! [`Gate::record`]: super::Gate::record

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use qore_store::{RequestLogRow, Store, UsageRow};
use tokio::sync::mpsc::{channel, error::TrySendError, Receiver, Sender};
use tokio::sync::oneshot;

use super::counters::{StoreErrors, UsageMetrics};
use super::lock;

/// What the writer is asked to do.
pub(crate) enum Job {
    Row(UsageRow),
    /// One request of the request log.
    Log(Box<RequestLogRow>),
    /// Answer once the rows queued before are written (whether they all were).
    Flush(oneshot::Sender<bool>),
}

/// How long the writer gathers rows before writing them.
pub const BATCH: Duration = Duration::from_millis(100);

/// How often rows kept while the store cannot be reached are tried again.
pub const RETRY_EVERY: Duration = Duration::from_secs(1);

/// The most rows waiting on the queue for the writer; past it a row is dropped (counted).
pub const QUEUE: usize = 10_000;

/// The most merged rows kept for a store that cannot be reached; past it they are dropped.
pub const MOST_HELD: usize = 10_000;

/// How long merged rows are kept for a store that cannot be reached; past it they are dropped.
pub const MOST_HELD_FOR: Duration = Duration::from_secs(3600);

type RowKey = (String, String, String, String);

/// The rows and tokens this process has not written to the store yet, per key.
#[derive(Debug, Default)]
pub struct Unwritten {
    tokens: Mutex<HashMap<String, u64>>,
}

impl Unwritten {
    /// The tokens of `key_id`'s rows not in the store yet.
    pub fn tokens(&self, key_id: &str) -> u64 {
        lock(&self.tokens).get(key_id).copied().unwrap_or(0)
    }

    fn add(&self, row: &UsageRow) {
        *lock(&self.tokens).entry(row.key_id.clone()).or_default() += tokens(row);
    }

    fn remove(&self, row: &UsageRow) {
        let mut map = lock(&self.tokens);
        if let Some(left) = map.get_mut(&row.key_id) {
            *left = left.saturating_sub(tokens(row));
            if *left == 0 {
                map.remove(&row.key_id);
            }
        }
    }
}

fn tokens(row: &UsageRow) -> u64 {
    row.tokens_in.saturating_add(row.tokens_out)
}

/// The gate's end of the writer.
pub(crate) struct Queue {
    send: Sender<Job>,
    pub unwritten: Arc<Unwritten>,
    metrics: UsageMetrics,
    /// Rows dropped on a full queue since the last log line, and when that was.
    full: Mutex<(u64, Option<Instant>)>,
}

impl Queue {
    /// Queue `row`; when the queue is full it is dropped, counted, and logged (at most once a
    /// second).
    pub fn record(&self, row: UsageRow) {
        self.unwritten.add(&row);
        self.metrics.unwritten.inc_by(row.requests as i64);
        let refused = match self.send.try_send(Job::Row(row)) {
            Ok(()) => return,
            Err(TrySendError::Full(Job::Row(row)) | TrySendError::Closed(Job::Row(row))) => row,
            Err(_) => return,
        };
        self.unwritten.remove(&refused);
        self.metrics.unwritten.dec_by(refused.requests as i64);
        self.metrics.dropped("queue_full", refused.requests);
        let mut full = lock(&self.full);
        full.0 += refused.requests;
        let now = Instant::now();
        if full
            .1
            .is_none_or(|at| now.duration_since(at) >= Duration::from_secs(1))
        {
            tracing::warn!(
                "usage of {} requests not recorded: the usage queue ({QUEUE} rows) is full",
                full.0
            );
            *full = (0, Some(now));
        }
    }

    /// Queue one request log row; when the queue is full it is dropped and counted.
    pub fn log(&self, row: RequestLogRow) {
        if self.send.try_send(Job::Log(Box::new(row))).is_err() {
            self.metrics.dropped("log_queue_full", 1);
        }
    }

    /// Wait (at most `timeout`) until the rows queued so far are written; whether they are.
    pub async fn flush(&self, timeout: Duration) -> bool {
        let (done, written) = oneshot::channel();
        let asked = async {
            self.send.send(Job::Flush(done)).await.is_ok() && matches!(written.await, Ok(true))
        };
        tokio::time::timeout(timeout, asked).await.unwrap_or(false)
    }
}

/// Start the writer on `store`, counting into `errors` and `metrics`; the gate's end.
pub(crate) fn start(store: Arc<dyn Store>, errors: StoreErrors, metrics: UsageMetrics) -> Queue {
    start_with(store, errors, metrics, QUEUE)
}

/// [`start`] with a queue of `capacity` rows.
pub(crate) fn start_with(
    store: Arc<dyn Store>,
    errors: StoreErrors,
    metrics: UsageMetrics,
    capacity: usize,
) -> Queue {
    let (send, jobs) = channel(capacity.max(1));
    let unwritten = Arc::new(Unwritten::default());
    let writer = Writer {
        store,
        errors,
        metrics: metrics.clone(),
        unwritten: unwritten.clone(),
        held: HashMap::new(),
        held_since: None,
        logs: Vec::new(),
        logs_since: None,
    };
    tokio::spawn(write(writer, jobs));
    Queue {
        send,
        unwritten,
        metrics,
        full: Mutex::new((0, None)),
    }
}

struct Writer {
    store: Arc<dyn Store>,
    errors: StoreErrors,
    metrics: UsageMetrics,
    unwritten: Arc<Unwritten>,
    /// Merged rows not written yet.
    held: HashMap<RowKey, UsageRow>,
    /// When the oldest held row was first tried and failed.
    held_since: Option<Instant>,
    /// Request log rows not written yet (bounded like `held`).
    logs: Vec<RequestLogRow>,
    /// When the oldest held request log row was first tried and failed.
    logs_since: Option<Instant>,
}

impl Writer {
    fn take(&mut self, job: Job, flushes: &mut Vec<oneshot::Sender<bool>>) {
        match job {
            Job::Row(row) => {
                let key = (
                    row.day.clone(),
                    row.key_id.clone(),
                    row.model.clone(),
                    row.agent.clone(),
                );
                (self.held.entry(key))
                    .and_modify(|merged| merged.add(&row))
                    .or_insert(row);
            }
            Job::Log(row) => self.logs.push(*row),
            Job::Flush(done) => flushes.push(done),
        }
    }

    /// Write the held request log rows in one call; keep them while the store cannot be
    /// reached (at most [`MOST_HELD`] rows, for [`MOST_HELD_FOR`]).
    async fn write_logs(&mut self) {
        if self.logs.is_empty() {
            return;
        }
        let Err(e) = self.store.record_requests(&self.logs).await else {
            self.logs.clear();
            self.logs_since = None;
            return;
        };
        self.errors.count(&e);
        let since = *self.logs_since.get_or_insert_with(Instant::now);
        let reason = if !e.is_unavailable() {
            "log_refused"
        } else if self.logs.len() > MOST_HELD {
            "log_held_full"
        } else if since.elapsed() > MOST_HELD_FOR {
            "log_too_old"
        } else {
            tracing::warn!("request log not written yet (kept, retried): {e}");
            return;
        };
        tracing::warn!(
            "{} request log rows not written ({reason}): {e}",
            self.logs.len()
        );
        self.metrics.dropped(reason, self.logs.len() as u64);
        self.logs.clear();
        self.logs_since = None;
    }

    /// Forget every held row: counted for `reason`, logged.
    fn drop_held(&mut self, reason: &'static str, why: &str) {
        let requests: u64 = self.held.values().map(|row| row.requests).sum();
        for row in self.held.values() {
            self.unwritten.remove(row);
        }
        self.metrics.unwritten.dec_by(requests as i64);
        self.metrics.dropped(reason, requests);
        tracing::warn!(
            "usage of {requests} requests ({} rows) not recorded: {why}",
            self.held.len()
        );
        self.held.clear();
        self.held_since = None;
    }

    /// Write the held rows in one call; keep them when the store cannot be reached (within
    /// the bounds).
    async fn write_held(&mut self) {
        self.write_logs().await;
        if self.held.is_empty() {
            return;
        }
        let rows: Vec<UsageRow> = self.held.values().cloned().collect();
        match self.store.record_usage(&rows).await {
            Ok(()) => {
                for row in &rows {
                    self.unwritten.remove(row);
                }
                let requests: u64 = rows.iter().map(|row| row.requests).sum();
                self.metrics.unwritten.dec_by(requests as i64);
                self.held.clear();
                if self.held_since.take().is_some() {
                    tracing::info!("usage kept while the store was down is recorded");
                }
            }
            Err(e) => {
                self.errors.count(&e);
                let since = *self.held_since.get_or_insert_with(Instant::now);
                if !e.is_unavailable() {
                    self.drop_held("refused", &format!("the store refused them: {e}"));
                } else if self.held.len() > MOST_HELD {
                    let why = format!("more than {MOST_HELD} rows held while the store is down");
                    self.drop_held("held_full", &why);
                } else if since.elapsed() > MOST_HELD_FOR {
                    let why = format!("held for over {MOST_HELD_FOR:?} while the store is down");
                    self.drop_held("too_old", &why);
                } else {
                    tracing::warn!("usage not recorded yet (kept, retried): {e}");
                }
            }
        }
    }
}

async fn write(mut writer: Writer, mut jobs: Receiver<Job>) {
    loop {
        let first = if writer.held.is_empty() && writer.logs.is_empty() {
            jobs.recv().await
        } else {
            match tokio::time::timeout(RETRY_EVERY, jobs.recv()).await {
                Ok(job) => job,
                Err(_) => {
                    writer.write_held().await;
                    continue;
                }
            }
        };
        let Some(first) = first else {
            break;
        };
        let mut flushes = Vec::new();
        let mut flushing = matches!(first, Job::Flush(_));
        writer.take(first, &mut flushes);
        // Rows that come within a moment are written together: one write per batch, not one
        // per request (a flush is written at once).
        let deadline = tokio::time::Instant::now() + BATCH;
        while !flushing {
            match tokio::time::timeout_at(deadline, jobs.recv()).await {
                Ok(Some(job)) => {
                    flushing = matches!(job, Job::Flush(_));
                    writer.take(job, &mut flushes);
                }
                Ok(None) | Err(_) => break,
            }
        }
        while let Ok(job) = jobs.try_recv() {
            writer.take(job, &mut flushes);
        }
        writer.write_held().await;
        let written = writer.held.is_empty() && writer.logs.is_empty();
        for done in flushes {
            let _ = done.send(written);
        }
    }
    writer.write_held().await;
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
