//! The usage writer: a task that adds usage rows to the store off the request path.
//!
//! Promises: a request never waits for the store to record its usage; rows queued within
//! [`BATCH`] of each other are merged per (day, key, model, agent) and written by one
//! [`qore_store::Store::record_usage`] call (one transaction; it also feeds the keys' `tpm`
//! windows); a flush returns once every row queued before it is written, saying whether it
//! was; when the gate is dropped the writer writes what is queued and ends. While the store
//! cannot be reached the merged rows are kept (at most [`MOST_HELD`] of them) and retried
//! every [`RETRY_EVERY`]; any other failed write is a warning and its rows are dropped (usage
//! is bookkeeping: the request was answered).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use qore_store::{Store, UsageRow};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;

use crate::metrics::StoreErrors;

/// What the writer is asked to do.
pub(crate) enum Job {
    Row(UsageRow),
    /// Answer once the rows queued before are written (whether they all were).
    Flush(oneshot::Sender<bool>),
}

/// How long the writer gathers rows before writing them.
const BATCH: Duration = Duration::from_millis(100);

/// How often rows kept while the store cannot be reached are tried again.
const RETRY_EVERY: Duration = Duration::from_secs(1);

/// The most merged rows kept for a store that cannot be reached; past it they are dropped.
const MOST_HELD: usize = 10_000;

type RowKey = (String, String, String, String);

/// Start the writer on `store`; its queue's sending end.
pub(crate) fn start(store: Arc<dyn Store>, errors: StoreErrors) -> UnboundedSender<Job> {
    let (send, jobs) = unbounded_channel();
    tokio::spawn(write(store, jobs, errors));
    send
}

/// Wait (at most `timeout`) until the rows queued so far are written; whether they are.
pub(crate) async fn flush(queue: &UnboundedSender<Job>, timeout: Duration) -> bool {
    let (done, written) = oneshot::channel();
    if queue.send(Job::Flush(done)).is_err() {
        return false;
    }
    matches!(tokio::time::timeout(timeout, written).await, Ok(Ok(true)))
}

struct Writer {
    store: Arc<dyn Store>,
    errors: StoreErrors,
    /// Merged rows not written yet.
    held: HashMap<RowKey, UsageRow>,
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
            Job::Flush(done) => flushes.push(done),
        }
    }

    /// Write the held rows in one call; keep them when the store cannot be reached.
    async fn write_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let rows: Vec<UsageRow> = self.held.values().cloned().collect();
        match self.store.record_usage(&rows).await {
            Ok(()) => self.held.clear(),
            Err(e) => {
                self.errors.count(&e);
                if e.is_unavailable() && self.held.len() <= MOST_HELD {
                    tracing::warn!("usage not recorded yet (kept, retried): {e}");
                } else {
                    tracing::warn!("usage of {} rows not recorded: {e}", rows.len());
                    self.held.clear();
                }
            }
        }
    }
}

async fn write(store: Arc<dyn Store>, mut jobs: UnboundedReceiver<Job>, errors: StoreErrors) {
    let mut writer = Writer {
        store,
        errors,
        held: HashMap::new(),
    };
    loop {
        let first = if writer.held.is_empty() {
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
        let written = writer.held.is_empty();
        for done in flushes {
            let _ = done.send(written);
        }
    }
    writer.write_held().await;
}
