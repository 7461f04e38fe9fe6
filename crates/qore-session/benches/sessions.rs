//! Many sessions at once: N sessions (1,000 under `cargo bench`, 20 as a test) each run
//! TURNS turns against one loopback server (qore-testkit) on the multi-thread runtime, every
//! turn saved to a real SQLite store in a temporary directory. The same N run bare client
//! requests first (same server, same answer) as the baseline.
//!
//! Prints: errors (must be 0: the bench fails otherwise), peak RSS (VmHWM), turns per second,
//! p50/p99 latency of a bare request and of a session turn, and the p99 added by the session
//! layer (absolute and as a ratio). `QORE_BENCH_SESSIONS` and `QORE_BENCH_TURNS` change N
//! and TURNS.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use qore_client::{protocols, CancellationToken, ChatRequest, Client, ClientConfig};
use qore_core::{History, Message, StreamOutcome};
use qore_session::{SessionManager, SessionSetup, Target, TurnOutcome};
use qore_store::{NewSession, SqliteStore};
use qore_testkit::bench::{us, BenchRun};
use qore_testkit::chat::chat_answer;
use qore_testkit::ReplayServer;

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 * p).ceil() as usize).saturating_sub(1);
    samples.get(index).copied().unwrap_or_default()
}

fn client(server: &ReplayServer) -> Client {
    let config = ClientConfig {
        base_url: format!("{}/v1", server.url()),
        ..ClientConfig::default()
    };
    let protocol = protocols::by_name("openai-chat").expect("a known protocol");
    Client::new(protocol, config).expect("a client")
}

/// One bare request: its latency, or `None` when it did not finish.
async fn bare(client: Client) -> Option<Duration> {
    let mut history = History::new();
    history.push(Message::user("Hello there."));
    let options = Default::default();
    let request = ChatRequest {
        model: "tiny",
        history: &history,
        tools: &[],
        options: &options,
    };
    let started = Instant::now();
    let mut stream = client.stream(&request, CancellationToken::new());
    while stream.next().await.is_some() {}
    match stream.finish().await {
        StreamOutcome::Finished { .. } => Some(started.elapsed()),
        _ => None,
    }
}

struct Sizes {
    sessions: usize,
    turns: usize,
}

async fn run(sizes: &Sizes) -> Result<(), String> {
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(8);
    let server = ReplayServer::start_repeating(chat_answer(&text))
        .await
        .map_err(|e| format!("loopback server: {e}"))?;
    let client = client(&server);
    // Baseline: the same concurrency of bare requests.
    let bare_runs: Vec<_> = (0..sizes.sessions * sizes.turns)
        .map(|_| tokio::spawn(bare(client.clone())))
        .collect();
    let mut bare_latency = Vec::new();
    let mut errors = 0usize;
    for run in bare_runs {
        match run.await {
            Ok(Some(latency)) => bare_latency.push(latency),
            _ => errors += 1,
        }
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let store = SqliteStore::open(dir.path().join("qore.db")).map_err(|e| e.to_string())?;
    let config = qore_agents::config::Config::load(None);
    let manager = Arc::new(SessionManager::new(
        Some(Arc::new(store)),
        config,
        qore_session::traced_notes(),
    ));
    let started = Instant::now();
    let runs: Vec<_> = (0..sizes.sessions)
        .map(|_| {
            let manager = manager.clone();
            let target = Target::new(client.clone(), "tiny");
            let turns = sizes.turns;
            tokio::spawn(async move {
                let setup = SessionSetup::new(target);
                let Ok(session) = manager.create(&NewSession::default(), setup).await else {
                    return (Vec::new(), turns);
                };
                let cancel = CancellationToken::new();
                let mut latency = Vec::new();
                let mut failed = 0;
                for turn in 0..turns {
                    let user = Message::user(format!("Turn {turn}: hello there."));
                    let began = Instant::now();
                    match session.send(user, &cancel, |_| {}).await {
                        TurnOutcome::Finished { .. } => latency.push(began.elapsed()),
                        _ => failed += 1,
                    }
                }
                manager.release(session);
                (latency, failed)
            })
        })
        .collect();
    let mut turn_latency = Vec::new();
    for run in runs {
        match run.await {
            Ok((latency, failed)) => {
                turn_latency.extend(latency);
                errors += failed;
            }
            Err(_) => errors += sizes.turns,
        }
    }
    let elapsed = started.elapsed();
    let turns = turn_latency.len();
    let (bare50, bare99) = (
        percentile(&mut bare_latency, 0.5),
        percentile(&mut bare_latency, 0.99),
    );
    let (turn50, turn99) = (
        percentile(&mut turn_latency, 0.5),
        percentile(&mut turn_latency, 0.99),
    );
    let added = turn99.saturating_sub(bare99);
    println!(
        "sessions {} x turns {}: errors {errors}, peak RSS {} MiB, {:.0} turns/s",
        sizes.sessions,
        sizes.turns,
        peak_rss_kib().map_or("?".into(), |k| format!("{:.1}", k as f64 / 1024.0)),
        turns as f64 / elapsed.as_secs_f64()
    );
    println!(
        "latency µs: bare p50 {} p99 {}; session turn p50 {} p99 {}; p99 added {} ({:.2}x bare p99)",
        us(bare50.as_secs_f64()),
        us(bare99.as_secs_f64()),
        us(turn50.as_secs_f64()),
        us(turn99.as_secs_f64()),
        us(added.as_secs_f64()),
        turn99.as_secs_f64() / bare99.as_secs_f64().max(f64::MIN_POSITIVE)
    );
    match errors {
        0 => Ok(()),
        n => Err(format!("{n} requests or turns did not finish")),
    }
}

fn main() {
    let bench = BenchRun::from_env(1);
    let (sessions, turns) = match bench.benchmarking {
        true => (1000, 3),
        false => (20, 2),
    };
    let sizes = Sizes {
        sessions: env_number("QORE_BENCH_SESSIONS", sessions),
        turns: env_number("QORE_BENCH_TURNS", turns),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if let Err(error) = runtime.block_on(run(&sizes)) {
        eprintln!("sessions bench: {error}");
        std::process::exit(1);
    }
}
