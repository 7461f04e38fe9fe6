//! The usage writer: a thread that adds usage rows to the store off the request path.
//!
//! Promises: a request never waits for the store to record its usage; rows queued together
//! are merged per (day, key, model, agent) and written under one hold of the store; a
//! flush returns once every row queued before it is written (or the writer is gone); when
//! the gate is dropped the writer writes what is queued and ends. A failed write is a
//! warning (usage is bookkeeping: the request was answered).

use std::collections::HashMap;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

use qore_session::SharedStore;
use qore_store::UsageRow;

use super::lock;

/// What the writer is asked to do.
pub(crate) enum Job {
    Row(UsageRow),
    /// Answer once the rows queued before are written.
    Flush(Sender<()>),
}

/// Start the writer thread on `store`; its queue's sending end.
pub(crate) fn start(store: SharedStore) -> Sender<Job> {
    let (send, jobs) = channel();
    let spawned = std::thread::Builder::new()
        .name("qore-serve-usage".into())
        .spawn(move || write(store, jobs));
    if let Err(e) = spawned {
        // The queue's receiver is gone with the closure: rows are dropped, flushes return.
        tracing::warn!("cannot start the usage writer: {e}; usage is not recorded");
    }
    send
}

/// Wait (at most `timeout`) until the rows queued so far are written.
pub(crate) fn flush(queue: &Sender<Job>, timeout: Duration) -> bool {
    let (done, written) = channel();
    queue.send(Job::Flush(done)).is_ok() && written.recv_timeout(timeout).is_ok()
}

/// How long the writer gathers rows before writing them.
const BATCH: Duration = Duration::from_millis(100);

fn write(store: SharedStore, jobs: Receiver<Job>) {
    while let Ok(first) = jobs.recv() {
        let mut rows: HashMap<(String, String, String, String), UsageRow> = HashMap::new();
        let mut flushes = Vec::new();
        let mut take = |job| match job {
            Job::Row(row) => {
                let key = (
                    row.day.clone(),
                    row.key_id.clone(),
                    row.model.clone(),
                    row.agent.clone(),
                );
                rows.entry(key)
                    .and_modify(|merged| merged.add(&row))
                    .or_insert(row);
            }
            Job::Flush(done) => flushes.push(done),
        };
        let mut flushing = matches!(first, Job::Flush(_));
        take(first);
        // Rows that come within a moment are written together: one write per batch, not one
        // per request (a flush is written at once).
        let deadline = std::time::Instant::now() + BATCH;
        while !flushing {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match jobs.recv_timeout(left) {
                Ok(job) => {
                    flushing = matches!(job, Job::Flush(_));
                    take(job);
                }
                Err(_) => break,
            }
        }
        while let Ok(job) = jobs.try_recv() {
            take(job);
        }
        if !rows.is_empty() {
            let store = lock(&store);
            for row in rows.values() {
                if let Err(e) = store.record_usage(row) {
                    tracing::warn!("cannot record usage of {:?}: {e}", row.model);
                }
            }
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}
