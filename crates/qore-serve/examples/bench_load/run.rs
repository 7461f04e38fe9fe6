//! One measured run, closed or open loop, over kept-alive HTTP/1.1 connections, for the
//! warm-up and then the window.
//!
//! - Closed loop (`--concurrency N`): N workers, each sending its next request when the
//!   last one ended. A slow target is offered fewer requests.
//! - Open loop (`--rate R`): one request is due every 1/R s whatever happened to the
//!   others (`open_loop.rs`); each request's times are measured from when it was *due*, not
//!   when it left, so a target that stalls is charged for the requests that waited behind
//!   the stall (coordinated omission corrected, as wrk2 and vegeta do). A request due while
//!   `--max-inflight` are open is not sent and is counted as `skipped`.
//! - Rates count what happens inside the window: deltas that arrive in it, requests that
//!   end (ok) in it, over its length.
//! - Latencies are those of the requests started (closed) or due (open) inside the window;
//!   a request still running at the window's end plus `--grace` is dropped and counted as
//!   unfinished. `gap_ms` are the times between one content delta and the next within a
//!   stream (the second of two deltas read in one chunk has a gap of 0).
//! - The watched processes: summed VmRSS before and (sampled every 50 ms) during the run,
//!   VmHWM after, and their CPU time over the run's wall time (`procs.rs`).
//!
//! Every loop ends at the window's end or at `--max-requests`, every request at `--timeout`
//! or at the window's end plus `--grace`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{json, Value};

use crate::dialect::{cut, Dialect, Event};
use crate::procs::{cpu_ticks, rss_kb, sample_peak, CLK_TCK};
use crate::RunArgs;

/// One successful request.
pub struct Sample {
    ttfb_us: u64,
    ttlb_us: u64,
    /// Between consecutive content deltas.
    gaps_us: Vec<u32>,
}

/// What the workers (or the open loop's requests) saw.
#[derive(Default)]
pub struct Tally {
    pub samples: Vec<Sample>,
    pub errors: u64,
    /// Started in the window, still running at deadline + grace.
    pub unfinished: u64,
    /// Due in the window while `--max-inflight` were open (open loop).
    pub skipped: u64,
    pub first_error: Option<String>,
}

impl Tally {
    pub fn add(&mut self, other: Tally) {
        self.samples.extend(other.samples);
        self.errors += other.errors;
        self.unfinished += other.unfinished;
        self.skipped += other.skipped;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }

    /// Count one request's end: `t0` is when it started (or was due), `result` its fate.
    pub fn settle(
        &mut self,
        plan: &Plan,
        t0: Instant,
        result: Result<Result<Sample, String>, tokio::time::error::Elapsed>,
    ) {
        let end = Instant::now();
        let measured = t0 >= plan.record_from; // else warm-up
        match result {
            Err(_) => self.unfinished += u64::from(measured),
            Ok(Ok(sample)) => {
                if end >= plan.record_from && end < plan.deadline {
                    plan.window_done.fetch_add(1, Ordering::Relaxed);
                }
                if measured {
                    self.samples.push(sample);
                }
            }
            Ok(Err(e)) => {
                self.errors += 1;
                self.first_error.get_or_insert(e);
            }
        }
    }
}

/// The fixed parts of every request.
pub struct Plan {
    client: reqwest::Client,
    url: String,
    body: Bytes,
    dialect: Dialect,
    stream: bool,
    expect_deltas: Option<u64>,
    pub record_from: Instant,
    pub deadline: Instant,
    pub max_requests: u64,
    pub issued: AtomicU64,
    /// In-flight requests are dropped here (deadline + grace).
    pub stop_at: Instant,
    /// Deltas that arrived inside the window.
    window_deltas: AtomicU64,
    /// Requests that ended (ok) inside the window.
    window_done: AtomicU64,
    /// `--header`s; `{worker}` in a value is the worker's number.
    headers: Vec<(String, String)>,
}

pub async fn run(a: &RunArgs) -> Result<String, String> {
    let client = reqwest::Client::builder()
        .http1_only()
        .no_proxy()
        .pool_max_idle_per_host(usize::MAX)
        .timeout(a.timeout)
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| format!("client: {e}"))?;
    let body = a.dialect.body(&a.model, a.stream);
    let start = Instant::now();
    let record_from = start + Duration::from_secs_f64(a.warmup);
    let plan = Arc::new(Plan {
        client,
        url: format!("{}{}", a.url, a.dialect.path()),
        body: Bytes::from(body.to_string()),
        dialect: a.dialect,
        stream: a.stream,
        expect_deltas: a.expect_deltas,
        record_from,
        deadline: record_from + Duration::from_secs_f64(a.seconds),
        max_requests: a.max_requests,
        issued: AtomicU64::new(0),
        stop_at: record_from + Duration::from_secs_f64(a.seconds) + a.grace,
        window_deltas: AtomicU64::new(0),
        window_done: AtomicU64::new(0),
        headers: a.headers.clone(),
    });
    let rss_before = rss_kb(&a.watch_pids, "VmRSS");
    let cpu_before = cpu_ticks(&a.watch_pids);
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = tokio::spawn(sample_peak(a.watch_pids.clone(), stop.clone()));
    let all = match a.rate {
        Some(rate) => crate::open_loop::run(plan.clone(), start, rate, a.max_inflight).await?,
        None => {
            let workers: Vec<_> = (0..a.concurrency)
                .map(|n| tokio::spawn(worker(plan.clone(), n)))
                .collect();
            let mut all = Tally::default();
            for w in workers {
                all.add(w.await.map_err(|e| format!("worker: {e}"))?);
            }
            all
        }
    };
    let wall = start.elapsed().as_secs_f64();
    let cpu_after = cpu_ticks(&a.watch_pids);
    stop.store(true, Ordering::Relaxed);
    let rss_peak = sampler.await.unwrap_or(None);
    let rss_hwm = rss_kb(&a.watch_pids, "VmHWM");
    let window = a.seconds;
    let cpu_core_pct = match (cpu_before, cpu_after) {
        (Some(b), Some(e)) => Some(e.saturating_sub(b) as f64 / CLK_TCK / wall * 100.0),
        _ => None,
    };
    let mut ttfb: Vec<u64> = all.samples.iter().map(|s| s.ttfb_us).collect();
    let mut ttlb: Vec<u64> = all.samples.iter().map(|s| s.ttlb_us).collect();
    let mut gaps: Vec<u64> = (all.samples.iter())
        .flat_map(|s| s.gaps_us.iter().map(|&g| u64::from(g)))
        .collect();
    let done = plan.window_done.load(Ordering::Relaxed);
    let deltas = plan.window_deltas.load(Ordering::Relaxed);
    let line = json!({
        "scenario": a.scenario,
        "target": a.target,
        "dialect": a.dialect.label(),
        "mode": if a.stream { "stream" } else { "short" },
        "loop": if a.rate.is_some() { "open" } else { "closed" },
        "rate": a.rate,
        "concurrency": a.concurrency,
        "window_s": window,
        "ok": all.samples.len(),
        "errors": all.errors,
        "unfinished": all.unfinished,
        "skipped": all.skipped,
        "first_error": all.first_error,
        "req_per_s": done as f64 / window,
        "deltas_per_s": deltas as f64 / window,
        "cpu_core_pct": cpu_core_pct,
        "cpu_us_per_request": per(cpu_before, cpu_after, done),
        "cpu_us_per_delta": per(cpu_before, cpu_after, deltas),
        "ttfb_ms": percentiles(&mut ttfb),
        "ttlb_ms": percentiles(&mut ttlb),
        "gap_ms": percentiles(&mut gaps),
        "rss_kb": {"before": rss_before, "peak": rss_peak, "hwm": rss_hwm},
    });
    Ok(line.to_string())
}

/// CPU microseconds of the watched processes per unit of work (null without either).
fn per(before: Option<u64>, after: Option<u64>, units: u64) -> Value {
    match (before, after) {
        (Some(b), Some(e)) if units > 0 => {
            json!(e.saturating_sub(b) as f64 / CLK_TCK * 1e6 / units as f64)
        }
        _ => Value::Null,
    }
}

/// p50, p90, p99, p99.9 and max in milliseconds (nearest rank); null without samples.
fn percentiles(us: &mut [u64]) -> Value {
    if us.is_empty() {
        return Value::Null;
    }
    us.sort_unstable();
    let at = |q: f64| {
        let rank = ((q * us.len() as f64).ceil() as usize).clamp(1, us.len());
        us[rank - 1] as f64 / 1000.0
    };
    json!({"p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "p999": at(0.999), "max": at(1.0)})
}

async fn worker(plan: Arc<Plan>, n: usize) -> Tally {
    let mut tally = Tally::default();
    loop {
        let t0 = Instant::now();
        if t0 >= plan.deadline || plan.issued.fetch_add(1, Ordering::Relaxed) >= plan.max_requests {
            break;
        }
        let result = timed(&plan, t0, n).await;
        let ended = result.is_err();
        let failed = matches!(result, Ok(Err(_)));
        tally.settle(&plan, t0, result);
        if ended {
            break;
        }
        if failed {
            // A failing target answers fast: do not spin on it.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    tally
}

/// One request bounded by the plan's `stop_at`.
pub async fn timed(
    plan: &Plan,
    t0: Instant,
    worker: usize,
) -> Result<Result<Sample, String>, tokio::time::error::Elapsed> {
    let stop_at = tokio::time::Instant::from_std(plan.stop_at);
    tokio::time::timeout_at(stop_at, one(plan, t0, worker)).await
}

/// One request: status, timings from `t0`, and (streams) the deltas up to the end event.
async fn one(plan: &Plan, t0: Instant, worker: usize) -> Result<Sample, String> {
    let mut request = plan
        .client
        .post(&plan.url)
        .header("content-type", "application/json");
    for (name, value) in plan.dialect.headers() {
        request = request.header(*name, *value);
    }
    for (name, value) in &plan.headers {
        request = request.header(name, value.replace("{worker}", &worker.to_string()));
    }
    let mut response = request
        .body(plan.body.clone())
        .send()
        .await
        .map_err(|e| format!("send: {e:?}"))?;
    let status = response.status();
    if !status.is_success() {
        let text = response.text().await.unwrap_or_default();
        return Err(format!("HTTP {status}: {}", cut(&text)));
    }
    let mut ttfb = None;
    let mut buf: Vec<u8> = Vec::new();
    let mut lines = Lines::default();
    let mut gaps_us = Vec::new();
    let mut last_delta: Option<Instant> = None;
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("body: {e:?}"))? {
        if chunk.is_empty() {
            continue;
        }
        ttfb.get_or_insert_with(|| t0.elapsed());
        buf.extend_from_slice(&chunk);
        if plan.stream {
            let new = lines.scan(plan.dialect, &mut buf)?;
            let now = Instant::now();
            if new > 0 {
                if let Some(last) = last_delta {
                    gaps_us.push(now.duration_since(last).as_micros().min(u32::MAX as u128) as u32);
                }
                gaps_us.extend(std::iter::repeat_n(0, (new - 1) as usize));
                last_delta = Some(now);
                if now >= plan.record_from && now < plan.deadline {
                    plan.window_deltas.fetch_add(new, Ordering::Relaxed);
                }
            }
        }
    }
    let ttlb = t0.elapsed();
    let ttfb = ttfb.ok_or("empty body")?;
    if plan.stream {
        if !lines.done {
            return Err(format!("no end event after {} deltas", lines.deltas));
        }
        if let Some(want) = plan.expect_deltas {
            if lines.deltas != want {
                return Err(format!("{} deltas, expected {want}", lines.deltas));
            }
        }
    } else {
        let v: Value = serde_json::from_slice(&buf).map_err(|e| format!("answer: {e}"))?;
        if plan.dialect.answer_text(&v).is_empty() {
            let text = String::from_utf8_lossy(&buf);
            return Err(format!("no content in {}", cut(&text)));
        }
    }
    Ok(Sample {
        ttfb_us: ttfb.as_micros() as u64,
        ttlb_us: ttlb.as_micros() as u64,
        gaps_us,
    })
}

/// The SSE `data:` lines read so far.
#[derive(Default)]
struct Lines {
    deltas: u64,
    done: bool,
}

impl Lines {
    /// Consume the complete lines in `buf`, leaving a partial last line; the number of new
    /// content deltas.
    fn scan(&mut self, dialect: Dialect, buf: &mut Vec<u8>) -> Result<u64, String> {
        let mut start = 0;
        let mut new = 0;
        while let Some(pos) = buf[start..].iter().position(|&b| b == b'\n') {
            let line = &buf[start..start + pos];
            start += pos + 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Some(data) = line.strip_prefix(b"data:") else {
                continue;
            };
            match dialect.event(data.trim_ascii())? {
                Event::Delta => new += 1,
                Event::End => self.done = true,
                Event::Other => {}
            }
        }
        buf.drain(..start);
        self.deltas += new;
        Ok(new)
    }
}
