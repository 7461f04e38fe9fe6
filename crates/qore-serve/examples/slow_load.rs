//! Mixed load, measured (run by hand; not a test): a steady load of real Chat Completions
//! requests against an in-process `qore serve` (loopback upstream, SQLite store), first
//! alone, then while slow clients hold 500 half-header, 500 slow-body and 500 silent
//! connections (each reopened when the server closes it). Prints the real requests' p50/p99
//! and failures in both phases, their ratio, and how long past its limit each kind of slow
//! connection was closed.
//!
//!   cargo run --release -p qore-serve --example slow_load [-- SECONDS [EACH]]
//!
//! Limits: header 5 s, body 8 s (so closes happen within a run of 20 s); load: 8 workers,
//! each sending one request at a time on a kept-alive connection.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use qore_serve::config::ServeSettings;
use qore_serve::listen::ListenSettings;
use qore_serve::Server;
use qore_testkit::chat::chat_answer;
use qore_testkit::ReplayServer;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

const HEADER: Duration = Duration::from_secs(5);
const BODY: Duration = Duration::from_secs(8);
const WORKERS: usize = 8;

#[derive(Clone, Copy, Debug)]
enum Kind {
    HalfHeader,
    SlowBody,
    Silent,
}

impl Kind {
    fn limit(self) -> Duration {
        match self {
            Kind::SlowBody => BODY,
            _ => HEADER,
        }
    }
}

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let seconds = Duration::from_secs(args.first().copied().unwrap_or(20));
    let each = args.get(1).copied().unwrap_or(500) as usize;
    let upstream = ReplayServer::start_repeating(chat_answer("hello there")).await?;
    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("providers"))?;
    let provider = format!(
        "name = \"up\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
        upstream.url()
    );
    std::fs::write(dir.path().join("providers/up.toml"), provider)?;
    let store = qore_store::open(&dir.path().join("qore.db").to_string_lossy()).await?;
    let settings = ServeSettings {
        listen: "127.0.0.1:0".parse()?,
        listener: ListenSettings {
            header_read_timeout: HEADER,
            body_timeout: BODY,
            ..ListenSettings::default()
        },
        ..ServeSettings::default()
    };
    let agents = qore_agents::config::Config::load(Some(dir.path()));
    let server = Server::start(settings, agents, store).await?;
    let url = server.url();
    let addr = url.trim_start_matches("http://").to_owned();

    let alone = load(&url, seconds).await?;
    println!("alone:      {}", alone.summary());

    let stop = Arc::new(AtomicBool::new(false));
    let overshoot: Arc<Mutex<Vec<(Kind, Duration)>>> = Arc::default();
    let open = Arc::new(AtomicUsize::new(0));
    let mut holders = Vec::new();
    for kind in [Kind::HalfHeader, Kind::SlowBody, Kind::Silent] {
        for _ in 0..each {
            let (addr, stop) = (addr.clone(), stop.clone());
            let (overshoot, open) = (overshoot.clone(), open.clone());
            holders.push(tokio::spawn(async move {
                hold(&addr, kind, &stop, &overshoot, &open).await
            }));
        }
    }
    // Let every slow connection be opened before measuring.
    let opening = Instant::now();
    while open.load(Ordering::SeqCst) < 3 * each && opening.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!("slow connections open: {}", open.load(Ordering::SeqCst));
    let attacked = load(&url, seconds).await?;
    println!("with slow:  {}", attacked.summary());
    stop.store(true, Ordering::SeqCst);
    for holder in holders {
        holder.abort();
    }
    let ratio = attacked.p(0.99).as_secs_f64() / alone.p(0.99).as_secs_f64().max(1e-9);
    println!("p99 ratio (with slow / alone): {ratio:.2}");
    let closes = overshoot.lock().map(|v| v.clone()).unwrap_or_default();
    for kind in [Kind::HalfHeader, Kind::SlowBody, Kind::Silent] {
        let mut past: Vec<Duration> = (closes.iter())
            .filter(|(k, _)| std::mem::discriminant(k) == std::mem::discriminant(&kind))
            .map(|(_, d)| *d)
            .collect();
        past.sort();
        let max = past.last().copied().unwrap_or_default();
        println!(
            "{kind:?}: {} closed by the server, at most {:.2} s past the {:?} limit",
            past.len(),
            max.as_secs_f64(),
            kind.limit()
        );
    }
    let metrics = reqwest::get(format!("{url}/metrics")).await?.text().await?;
    for line in metrics
        .lines()
        .filter(|l| l.starts_with("qore_connections"))
    {
        println!("  {line}");
    }
    let _ = server.stop().await;
    Ok(())
}

/// Keep one slow connection of `kind` open, reopening it when the server closes it; record
/// how long past its limit each close came.
async fn hold(
    addr: &str,
    kind: Kind,
    stop: &AtomicBool,
    overshoot: &Mutex<Vec<(Kind, Duration)>>,
    open: &AtomicUsize,
) {
    let mut first = true;
    while !stop.load(Ordering::SeqCst) {
        let Ok(tcp) = TcpStream::connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        if first {
            open.fetch_add(1, Ordering::SeqCst);
            first = false;
        }
        let (mut read, mut write) = tcp.into_split();
        let since = Instant::now();
        let head: &[u8] = match kind {
            Kind::HalfHeader => b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n",
            Kind::SlowBody => {
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-length: 100000\r\n\r\n"
            }
            Kind::Silent => b"",
        };
        if write.write_all(head).await.is_err() {
            continue;
        }
        let drip = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let byte: &[u8] = match kind {
                    Kind::HalfHeader => b"X-Slow: 1\r\n",
                    Kind::SlowBody => b"a",
                    Kind::Silent => continue,
                };
                if write.write_all(byte).await.is_err() {
                    return;
                }
            }
        });
        let mut buf = [0u8; 1024];
        while let Ok(n) = read.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
        drip.abort();
        if !stop.load(Ordering::SeqCst) {
            let past = since.elapsed().saturating_sub(kind.limit());
            if let Ok(mut v) = overshoot.lock() {
                v.push((kind, past));
            }
        }
    }
}

struct Measured {
    latencies: Vec<Duration>,
    failures: usize,
}

impl Measured {
    fn p(&self, q: f64) -> Duration {
        if self.latencies.is_empty() {
            return Duration::ZERO;
        }
        let i = ((self.latencies.len() as f64 - 1.0) * q).round() as usize;
        self.latencies[i]
    }

    fn summary(&self) -> String {
        format!(
            "{} requests, {} failed, p50 {:.2} ms, p99 {:.2} ms",
            self.latencies.len(),
            self.failures,
            self.p(0.5).as_secs_f64() * 1e3,
            self.p(0.99).as_secs_f64() * 1e3
        )
    }
}

/// `WORKERS` loops of one request at a time for `seconds`.
async fn load(url: &str, seconds: Duration) -> Result<Measured, Error> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()?;
    let body = serde_json::json!({"model": "up/m",
        "messages": [{"role": "user", "content": "hi"}]})
    .to_string();
    let until = Instant::now() + seconds;
    let mut workers = Vec::new();
    for _ in 0..WORKERS {
        let (http, body) = (http.clone(), body.clone());
        let url = format!("{url}/v1/chat/completions");
        workers.push(tokio::spawn(async move {
            let (mut took, mut failed) = (Vec::new(), 0);
            while Instant::now() < until {
                let start = Instant::now();
                let sent = http.post(&url).body(body.clone()).send().await;
                let ok = match sent {
                    Ok(r) if r.status().is_success() => r.bytes().await.is_ok(),
                    _ => false,
                };
                if ok {
                    took.push(start.elapsed());
                } else {
                    failed += 1;
                }
            }
            (took, failed)
        }));
    }
    let mut measured = Measured {
        latencies: Vec::new(),
        failures: 0,
    };
    for worker in workers {
        let (took, failed) = worker.await?;
        measured.latencies.extend(took);
        measured.failures += failed;
    }
    measured.latencies.sort();
    Ok(measured)
}
