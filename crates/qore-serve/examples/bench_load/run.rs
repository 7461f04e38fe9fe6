//! One measured run: N workers sending requests back to back over kept-alive HTTP/1.1
//! connections for the warm-up and then the window.
//!
//! - Rates count what happens inside the window: deltas that arrive in it, requests that
//!   end (ok) in it, over its length. So a slow gateway whose streams outlast the window
//!   still gets the rate it delivered.
//! - Latencies are those of the requests started inside the window (the warm-up opens the
//!   connections); a request still running at the window's end plus `--grace` is dropped
//!   and counted as unfinished.
//! - The watched processes: summed VmRSS before and (sampled every 50 ms) during the run,
//!   VmHWM after, and their CPU time over the run's wall time.
//!
//! Every loop ends at the window's end or at `--max-requests`, every request at `--timeout`
//! or at the window's end plus `--grace`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{json, Value};

use crate::RunArgs;

/// One successful request.
struct Sample {
    ttfb_us: u64,
    ttlb_us: u64,
}

/// What one worker saw.
#[derive(Default)]
struct Tally {
    samples: Vec<Sample>,
    errors: u64,
    /// Started in the window, still running at deadline + grace.
    unfinished: u64,
    first_error: Option<String>,
}

/// The fixed parts of every request.
struct Plan {
    client: reqwest::Client,
    url: String,
    body: Bytes,
    stream: bool,
    expect_deltas: Option<u64>,
    record_from: Instant,
    deadline: Instant,
    max_requests: u64,
    issued: AtomicU64,
    /// In-flight requests are dropped here (deadline + grace).
    stop_at: Instant,
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
    let mut body = json!({
        "model": a.model,
        "messages": [{"role": "user", "content": "Say something."}],
        "max_tokens": 64,
    });
    if a.stream {
        body["stream"] = json!(true);
    }
    let start = Instant::now();
    let record_from = start + Duration::from_secs_f64(a.warmup);
    let plan = Arc::new(Plan {
        client,
        url: format!("{}/chat/completions", a.url),
        body: Bytes::from(body.to_string()),
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
    let workers: Vec<_> = (0..a.concurrency)
        .map(|n| tokio::spawn(worker(plan.clone(), n)))
        .collect();
    let mut all = Tally::default();
    for w in workers {
        let t = w.await.map_err(|e| format!("worker: {e}"))?;
        all.samples.extend(t.samples);
        all.errors += t.errors;
        all.unfinished += t.unfinished;
        if all.first_error.is_none() {
            all.first_error = t.first_error;
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu_after = cpu_ticks(&a.watch_pids);
    stop.store(true, Ordering::Relaxed);
    let rss_peak = sampler.await.unwrap_or(None);
    let rss_hwm = rss_kb(&a.watch_pids, "VmHWM");
    let window = a.seconds;
    let ok = all.samples.len() as u64;
    let cpu_core_pct = match (cpu_before, cpu_after) {
        (Some(b), Some(e)) => Some(e.saturating_sub(b) as f64 / CLK_TCK / wall * 100.0),
        _ => None,
    };
    let mut ttfb: Vec<u64> = all.samples.iter().map(|s| s.ttfb_us).collect();
    let mut ttlb: Vec<u64> = all.samples.iter().map(|s| s.ttlb_us).collect();
    let line = json!({
        "scenario": a.scenario,
        "target": a.target,
        "mode": if a.stream { "stream" } else { "short" },
        "concurrency": a.concurrency,
        "window_s": window,
        "ok": ok,
        "errors": all.errors,
        "unfinished": all.unfinished,
        "first_error": all.first_error,
        "req_per_s": plan.window_done.load(Ordering::Relaxed) as f64 / window,
        "deltas_per_s": plan.window_deltas.load(Ordering::Relaxed) as f64 / window,
        "cpu_core_pct": cpu_core_pct,
        "ttfb_ms": percentiles(&mut ttfb),
        "ttlb_ms": percentiles(&mut ttlb),
        "rss_kb": {"before": rss_before, "peak": rss_peak, "hwm": rss_hwm},
    });
    Ok(line.to_string())
}

/// p50, p90, p99 and max in milliseconds (nearest rank); null without samples.
fn percentiles(us: &mut [u64]) -> Value {
    if us.is_empty() {
        return Value::Null;
    }
    us.sort_unstable();
    let at = |q: f64| {
        let rank = ((q * us.len() as f64).ceil() as usize).clamp(1, us.len());
        us[rank - 1] as f64 / 1000.0
    };
    json!({"p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "max": at(1.0)})
}

async fn worker(plan: Arc<Plan>, n: usize) -> Tally {
    let mut tally = Tally::default();
    loop {
        let t0 = Instant::now();
        if t0 >= plan.deadline || plan.issued.fetch_add(1, Ordering::Relaxed) >= plan.max_requests {
            break;
        }
        let stop_at = tokio::time::Instant::from_std(plan.stop_at);
        let result = tokio::time::timeout_at(stop_at, one(&plan, t0, n)).await;
        let end = Instant::now();
        let measured = t0 >= plan.record_from; // else warm-up
        match result {
            Err(_) => {
                tally.unfinished += u64::from(measured);
                break;
            }
            Ok(Ok(sample)) => {
                if end >= plan.record_from && end < plan.deadline {
                    plan.window_done.fetch_add(1, Ordering::Relaxed);
                }
                if measured {
                    tally.samples.push(sample);
                }
            }
            Ok(Err(e)) => {
                tally.errors += 1;
                tally.first_error.get_or_insert(e);
                // A failing target answers fast: do not spin on it.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    tally
}

/// One request: status, timings, and (streams) the deltas up to `data: [DONE]`.
async fn one(plan: &Plan, t0: Instant, worker: usize) -> Result<Sample, String> {
    let mut request = plan
        .client
        .post(&plan.url)
        .header("content-type", "application/json");
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
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("body: {e:?}"))? {
        if chunk.is_empty() {
            continue;
        }
        ttfb.get_or_insert_with(|| t0.elapsed());
        buf.extend_from_slice(&chunk);
        if plan.stream {
            let before = lines.deltas;
            lines.scan(&mut buf)?;
            let now = Instant::now();
            if lines.deltas > before && now >= plan.record_from && now < plan.deadline {
                plan.window_deltas
                    .fetch_add(lines.deltas - before, Ordering::Relaxed);
            }
        }
    }
    let ttlb = t0.elapsed();
    let ttfb = ttfb.ok_or("empty body")?;
    if plan.stream {
        if !lines.done {
            return Err(format!("no data: [DONE] after {} deltas", lines.deltas));
        }
        if let Some(want) = plan.expect_deltas {
            if lines.deltas != want {
                return Err(format!("{} deltas, expected {want}", lines.deltas));
            }
        }
    } else {
        let v: Value = serde_json::from_slice(&buf).map_err(|e| format!("answer: {e}"))?;
        let text = v["choices"][0]["message"]["content"].as_str().unwrap_or("");
        if text.is_empty() {
            return Err(format!(
                "no content in {}",
                cut(&String::from_utf8_lossy(&buf))
            ));
        }
    }
    Ok(Sample {
        ttfb_us: ttfb.as_micros() as u64,
        ttlb_us: ttlb.as_micros() as u64,
    })
}

/// The SSE `data:` lines read so far.
#[derive(Default)]
struct Lines {
    deltas: u64,
    done: bool,
}

impl Lines {
    /// Consume the complete lines in `buf`, leaving a partial last line.
    fn scan(&mut self, buf: &mut Vec<u8>) -> Result<(), String> {
        let mut start = 0;
        while let Some(pos) = buf[start..].iter().position(|&b| b == b'\n') {
            let line = &buf[start..start + pos];
            start += pos + 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Some(data) = line.strip_prefix(b"data:") else {
                continue;
            };
            let data = data.trim_ascii();
            if data == b"[DONE]" {
                self.done = true;
                continue;
            }
            let v: Value = serde_json::from_slice(data).map_err(|e| format!("event: {e}"))?;
            if v.get("error").is_some() {
                return Err(format!("in-stream error: {}", cut(&v.to_string())));
            }
            let content = v["choices"][0]["delta"]["content"].as_str();
            if content.is_some_and(|c| !c.is_empty()) {
                self.deltas += 1;
            }
        }
        buf.drain(..start);
        Ok(())
    }
}

fn cut(text: &str) -> String {
    text.chars().take(200).collect()
}

/// The sum of a `/proc/PID/status` field (kB) over `pids`; None without pids or readings.
fn rss_kb(pids: &[u32], key: &str) -> Option<u64> {
    let mut sum = None;
    for pid in pids {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let kb = status
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        if let Some(kb) = kb {
            sum = Some(sum.unwrap_or(0) + kb);
        }
    }
    sum
}

/// USER_HZ: the unit of utime/stime in `/proc/PID/stat` (100 on Linux's usual builds).
const CLK_TCK: f64 = 100.0;

/// utime + stime of `pids` in ticks (fields 14 and 15 of `/proc/PID/stat`).
fn cpu_ticks(pids: &[u32]) -> Option<u64> {
    let mut sum = None;
    for pid in pids {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command (which may hold spaces) start at field 3.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = f
            .get(11)
            .zip(f.get(12))
            .and_then(|(u, s)| Some(u.parse::<u64>().ok()? + s.parse::<u64>().ok()?));
        if let Some(t) = ticks {
            sum = Some(sum.unwrap_or(0) + t);
        }
    }
    sum
}

/// The highest summed VmRSS seen every 50 ms until `stop`.
async fn sample_peak(pids: Vec<u32>, stop: Arc<AtomicBool>) -> Option<u64> {
    let mut peak = None;
    while !stop.load(Ordering::Relaxed) && !pids.is_empty() {
        peak = peak.max(rss_kb(&pids, "VmRSS"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    peak
}
