//! The load generator of `scripts/bench-serve.sh`.
//!
//! `bench_load run --target NAME --url BASE --model M --mode stream|short --concurrency N
//! [--seconds S] [--warmup S] [--grace S] [--max-requests K] [--expect-deltas D]
//! [--timeout S] [--watch-pids P1,P2] [--threads T] [--scenario NAME] [--header 'NAME: VALUE']...
//! [--dialect chat|responses|messages] [--rate R [--max-inflight K]]`
//! runs N workers (closed loop), or with `--rate` sends R requests a second whatever the
//! target does (open loop, latency from when each request was due: `open_loop.rs`), each a
//! `POST` in the dialect's shape (`dialect.rs`: Chat Completions by default, OpenAI
//! Responses, Anthropic Messages; HTTP/1.1, kept alive, no proxy) for `--warmup` seconds
//! (not recorded: connections are opened there) and then a window of `--seconds`, or until
//! `--max-requests` have been sent (see `run.rs` for what is counted where). Per request it
//! measures the time to the first body byte and to the last byte, and (streams) counts the
//! content deltas and the gaps between them; a request counts as ok only with status 200,
//! the dialect's end event and (with `--expect-deltas`) that many deltas. With
//! `--watch-pids` it reads the memory and CPU time of those processes. Each `--header` is
//! sent with every request, `{worker}` in its value replaced by the worker's number (so
//! `x-qore-session: bench-{worker}` gives each worker a session of its own). It prints one
//! JSON line.
//!
//! `bench_load report FILE` reads those lines and prints Markdown tables: per scenario and
//! target the rates and percentiles, and for each gateway the time it adds to the first byte
//! (its p50/p99 minus the direct run's), its deltas/s and requests/s as a ratio of direct's,
//! and the memory of the gateway's processes.
//!
//! `bench_load scale-report FILE` prints the tables of `scripts/bench-scale.sh` (see
//! `scale_report.rs`).

mod dialect;
mod open_loop;
mod procs;
mod report;
mod run;
mod scale_report;

use std::time::Duration;

/// What `run` was asked for.
pub struct RunArgs {
    pub scenario: String,
    pub target: String,
    pub url: String,
    pub model: String,
    pub stream: bool,
    pub concurrency: usize,
    pub seconds: f64,
    pub warmup: f64,
    pub max_requests: u64,
    pub expect_deltas: Option<u64>,
    pub timeout: Duration,
    pub grace: Duration,
    pub watch_pids: Vec<u32>,
    pub threads: usize,
    /// Sent with every request; `{worker}` in a value is the worker's number.
    pub headers: Vec<(String, String)>,
    pub dialect: dialect::Dialect,
    /// Open loop: requests per second (else closed loop with `concurrency` workers).
    pub rate: Option<f64>,
    /// Open loop: at most this many requests open at once.
    pub max_inflight: usize,
}

fn parse_run(args: &[String]) -> Result<RunArgs, String> {
    let mut run = RunArgs {
        scenario: String::new(),
        target: "direct".into(),
        url: String::new(),
        model: "fixed".into(),
        stream: true,
        concurrency: 1,
        seconds: 5.0,
        warmup: 1.0,
        max_requests: 1_000_000,
        expect_deltas: None,
        timeout: Duration::from_secs(60),
        grace: Duration::from_secs(10),
        watch_pids: Vec::new(),
        threads: 1,
        headers: Vec::new(),
        dialect: dialect::Dialect::Chat,
        rate: None,
        max_inflight: 10_000,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let float = || value.parse::<f64>().map_err(|e| format!("{flag}: {e}"));
        let int = || value.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--scenario" => run.scenario = value.clone(),
            "--target" => run.target = value.clone(),
            "--url" => run.url = value.trim_end_matches('/').to_string(),
            "--model" => run.model = value.clone(),
            "--mode" => {
                run.stream = match value.as_str() {
                    "stream" => true,
                    "short" => false,
                    _ => return Err(format!("--mode stream|short, not {value}")),
                }
            }
            "--concurrency" => run.concurrency = int()?.max(1) as usize,
            "--seconds" => run.seconds = float()?,
            "--warmup" => run.warmup = float()?,
            "--max-requests" => run.max_requests = int()?,
            "--expect-deltas" => run.expect_deltas = Some(int()?),
            "--timeout" => run.timeout = Duration::from_secs_f64(float()?.clamp(0.1, 600.0)),
            "--grace" => run.grace = Duration::from_secs_f64(float()?.clamp(0.0, 600.0)),
            "--dialect" => run.dialect = value.parse()?,
            "--rate" => run.rate = Some(float()?),
            "--max-inflight" => run.max_inflight = int()?.max(1) as usize,
            "--threads" => run.threads = int()?.max(1) as usize,
            "--header" => {
                let (name, v) = value
                    .split_once(':')
                    .ok_or_else(|| format!("{flag} 'NAME: VALUE', not {value}"))?;
                run.headers
                    .push((name.trim().to_owned(), v.trim().to_owned()));
            }
            "--watch-pids" => {
                run.watch_pids = value
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| s.parse::<u32>().map_err(|e| format!("{flag}: {e}")))
                    .collect::<Result<_, _>>()?
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if run.url.is_empty() {
        return Err("--url is required".into());
    }
    if !(run.seconds > 0.0 && run.seconds <= 3600.0 && (0.0..=600.0).contains(&run.warmup)) {
        return Err("--seconds must be in (0, 3600], --warmup in [0, 600]".into());
    }
    if run.scenario.is_empty() {
        let mode = if run.stream { "stream" } else { "short" };
        run.scenario = match run.rate {
            Some(rate) => format!("{mode} {}/s {}", rate, run.dialect.label()),
            None => format!("{mode} x{} {}", run.concurrency, run.dialect.label()),
        };
    }
    Ok(run)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("run") => parse_run(&args[1..]).and_then(|a| {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(a.threads)
                .enable_all()
                .build()
                .map_err(|e| format!("tokio runtime: {e}"))?;
            let line = runtime.block_on(run::run(&a))?;
            println!("{line}");
            Ok(())
        }),
        Some("report") if args.len() == 2 => report::report(&args[1]).map(|t| print!("{t}")),
        Some("scale-report") if args.len() == 2 => {
            scale_report::report(&args[1]).map(|t| print!("{t}"))
        }
        _ => Err("usage: bench_load run --url BASE ... | bench_load report FILE".into()),
    };
    if let Err(e) = result {
        eprintln!("bench_load: {e}");
        std::process::exit(2);
    }
}
