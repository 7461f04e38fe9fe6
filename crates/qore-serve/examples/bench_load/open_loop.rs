//! The open loop: request k is due at `start + k / rate`, sent then (or at once if the loop
//! is behind) on a task of its own, and timed from when it was due, so a stall of the
//! target delays the requests behind it and their latency shows it (coordinated omission
//! corrected). At most `max_inflight` are open at once: a request due while that many are
//! open is not sent and counts as skipped (in the window), so an overwhelmed target is
//! reported as such instead of the generator queueing without bound.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::run::{timed, Plan, Tally};

pub async fn run(
    plan: Arc<Plan>,
    start: Instant,
    rate: f64,
    max_inflight: usize,
) -> Result<Tally, String> {
    if !(rate > 0.0 && rate <= 1e6) {
        return Err("--rate must be in (0, 1000000]".into());
    }
    let every = Duration::from_secs_f64(1.0 / rate);
    let open = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    let mut tally = Tally::default();
    for k in 0u64.. {
        let due = start + every.mul_f64(k as f64);
        if due >= plan.deadline || plan.issued.fetch_add(1, Ordering::Relaxed) >= plan.max_requests
        {
            break;
        }
        tokio::time::sleep_until(tokio::time::Instant::from_std(due)).await;
        // Collect what already ended, so results do not pile up in the set.
        while let Some(done) = tasks.try_join_next() {
            tally.add(done.map_err(|e| format!("request task: {e}"))?);
        }
        if open.load(Ordering::Relaxed) >= max_inflight {
            tally.skipped += u64::from(due >= plan.record_from);
            continue;
        }
        open.fetch_add(1, Ordering::Relaxed);
        let (plan, open) = (plan.clone(), open.clone());
        tasks.spawn(async move {
            let mut one = Tally::default();
            let result = timed(&plan, due, k as usize).await;
            one.settle(&plan, due, result);
            open.fetch_sub(1, Ordering::Relaxed);
            one
        });
    }
    while let Some(done) = tasks.join_next().await {
        tally.add(done.map_err(|e| format!("request task: {e}"))?);
    }
    Ok(tally)
}
