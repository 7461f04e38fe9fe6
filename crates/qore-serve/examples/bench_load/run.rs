//! One measured run: N workers sending requests back to back over kept-alive HTTP/1.1
//! connections, the timings of the requests started after the warm-up, and the memory of
//! the watched processes. Every loop ends at the deadline or at `--max-requests`, and each
//! request at `--timeout`.

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
    deltas: u64,
}

/// What one worker saw.
#[derive(Default)]
struct Tally {
    samples: Vec<Sample>,
    errors: u64,
    first_error: Option<String>,
    last_finish: Option<Instant>,
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
    });
    let rss_before = rss_kb(&a.watch_pids, "VmRSS");
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = tokio::spawn(sample_peak(a.watch_pids.clone(), stop.clone()));
    let workers: Vec<_> = (0..a.concurrency)
        .map(|_| tokio::spawn(worker(plan.clone())))
        .collect();
    let mut all = Tally::default();
    for w in workers {
        let t = w.await.map_err(|e| format!("worker: {e}"))?;
        all.samples.extend(t.samples);
        all.errors += t.errors;
        if all.first_error.is_none() {
            all.first_error = t.first_error;
        }
        all.last_finish = all.last_finish.max(t.last_finish);
    }
    stop.store(true, Ordering::Relaxed);
    let rss_peak = sampler.await.unwrap_or(None);
    let rss_hwm = rss_kb(&a.watch_pids, "VmHWM");
    let window = all
        .last_finish
        .map(|t| t.saturating_duration_since(record_from))
        .unwrap_or_default()
        .as_secs_f64()
        .max(1e-6);
    let ok = all.samples.len() as u64;
    let deltas: u64 = all.samples.iter().map(|s| s.deltas).sum();
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
        "first_error": all.first_error,
        "req_per_s": ok as f64 / window,
        "deltas_per_s": deltas as f64 / window,
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

async fn worker(plan: Arc<Plan>) -> Tally {
    let mut tally = Tally::default();
    loop {
        let t0 = Instant::now();
        if t0 >= plan.deadline || plan.issued.fetch_add(1, Ordering::Relaxed) >= plan.max_requests {
            break;
        }
        let result = one(&plan, t0).await;
        if t0 < plan.record_from {
            continue; // warm-up
        }
        tally.last_finish = Some(Instant::now());
        match result {
            Ok(s) => tally.samples.push(s),
            Err(e) => {
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
async fn one(plan: &Plan, t0: Instant) -> Result<Sample, String> {
    let mut response = plan
        .client
        .post(&plan.url)
        .header("content-type", "application/json")
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
            lines.scan(&mut buf)?;
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
        deltas: lines.deltas,
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

/// The highest summed VmRSS seen every 50 ms until `stop`.
async fn sample_peak(pids: Vec<u32>, stop: Arc<AtomicBool>) -> Option<u64> {
    let mut peak = None;
    while !stop.load(Ordering::Relaxed) && !pids.is_empty() {
        peak = peak.max(rss_kb(&pids, "VmRSS"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    peak
}
