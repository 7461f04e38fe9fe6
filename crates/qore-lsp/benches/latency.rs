//! What `qore lsp` adds to a completion, and what open documents cost.
//!
//! Latency: the server library runs over in-memory pipes with 20 open documents of 5,000
//! lines (other open documents on, 8 KiB budget; no debounce); a loopback llama.cpp
//! `/infill` provider (a plain TCP server here, so that it can stamp the moment the request
//! has fully arrived and the moment its last response byte is written). For N requests:
//! `before` = request written to the server's input -> HTTP request received by the provider;
//! `after` = last response byte written by the provider -> LSP reply read by the client.
//! Both include the loopback hops, so they bound what qore adds from above. Prints p50/p99.
//!
//! Memory: the document store's bytes per 5,000-line document, and the process's RSS growth
//! over opening 200 such documents (an upper bound: the client's copies count too).
//!
//! N is 300 under `cargo bench`, 10 otherwise (`cargo test --benches`); `QORE_BENCH_K` sets it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use qore_agents::config::Config;
use qore_lsp::documents::Documents;
use qore_lsp::{serve, Setup};
use qore_session::SessionManager;
use qore_testkit::bench::{us, BenchRun};
use qore_testkit::lsp::{file_uri, LspClient};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const LINES: usize = 5_000;
const OPEN: usize = 20;
const MANY: usize = 200;

/// Stamps of one provider exchange: request received, last response byte written.
type Stamps = Arc<Mutex<Vec<(Instant, Instant)>>>;

fn document(seed: usize) -> String {
    (0..LINES)
        .map(|i| format!("    let value_{i} = compute({i}, {seed}, \"text\"); // line {i}\n"))
        .collect()
}

/// A keep-alive HTTP/1.1 server answering every request with one `/infill` stream.
async fn provider(stamps: Stamps) -> std::io::Result<String> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let url = format!("http://{}", listener.local_addr()?);
    let chunk = json!({"index": 0, "content": "compute(1, 2)", "stop": false});
    let last = json!({"index": 0, "content": "", "stop": true, "stop_type": "eos"});
    let body = format!("data: {chunk}\n\ndata: {last}\n\n");
    let reply = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (stamps, reply) = (Arc::clone(&stamps), reply.clone());
            tokio::spawn(async move {
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 64 * 1024];
                loop {
                    // Read one request: the head, then content-length bytes of body.
                    let (head_end, length) = loop {
                        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buffer[..at]).to_lowercase();
                            let length = (head.lines())
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|v| v.trim().parse::<usize>().ok())
                                .unwrap_or(0);
                            if buffer.len() >= at + 4 + length {
                                break (at + 4, length);
                            }
                        }
                        match socket.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                        }
                    };
                    let received = Instant::now();
                    buffer.drain(..head_end + length);
                    if socket.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                    let _ = socket.flush().await;
                    let written = Instant::now();
                    stamps.lock().unwrap().push((received, written));
                }
            });
        }
    });
    Ok(url)
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 * p).ceil() as usize).saturating_sub(1);
    samples.get(index).copied().unwrap_or_default()
}

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A config dir whose code_completion roster is one llama.cpp agent at `url`.
fn config(dir: &std::path::Path, url: &str) -> std::io::Result<()> {
    let files = [
        ("providers/infill.toml", format!("name = \"infill\"\nprotocol = \"llamacpp\"\nurl = \"{url}/v1\"\n")),
        ("agents/fim.toml", "name = \"fim\"\nextends = \"llamacpp-completion\"\nprovider = \"infill\"\nmodel = \"m\"\n".into()),
        ("pipelines.toml", "code_completion = [\"fim\"]\n".into()),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap_or(dir))?;
        std::fs::write(path, text)?;
    }
    Ok(())
}

/// The server library on pipes, its config dir `dir`; the client end.
fn start(dir: &std::path::Path) -> LspClient {
    let notes: qore_session::Notes = Arc::new(|_: &str| {});
    let setup = Setup {
        manager: SessionManager::new(None, Config::load(Some(dir)), notes),
        config_dir: None,
    };
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_in, server_out) = tokio::io::split(server_end);
    tokio::spawn(serve(server_in, server_out, setup));
    let (read, write) = tokio::io::split(client_end);
    LspClient::over(read, write)
}

async fn latency(runs: usize) -> Result<(), String> {
    let stamps: Stamps = Arc::default();
    let url = provider(Arc::clone(&stamps))
        .await
        .map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    config(dir.path(), &url).map_err(|e| e.to_string())?;
    let mut client = start(dir.path());
    client
        .initialize(dir.path(), json!({"completion": {"debounceMs": 0}}))
        .await;
    let mut uris = Vec::new();
    for i in 0..OPEN {
        uris.push(
            client
                .open(&dir.path().join(format!("f{i}.rs")), &document(i))
                .await,
        );
    }
    let params = json!({"textDocument": {"uri": uris[0]},
                        "position": {"line": LINES / 2, "character": 4}});
    // Warm-up: the target is reached and the connection opened once.
    let reply = client
        .call("textDocument/inlineCompletion", params.clone())
        .await;
    if reply.get("result").is_none() {
        return Err(format!("warm-up failed: {reply}"));
    }
    stamps.lock().unwrap().clear();
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let sent = Instant::now();
        let reply = client
            .call("textDocument/inlineCompletion", params.clone())
            .await;
        let replied = Instant::now();
        if reply["result"]["items"][0]["insertText"] != "compute(1, 2)" {
            return Err(format!("unexpected reply: {reply}"));
        }
        // The provider stamps after its write returns, which may be after the reply came.
        let mut stamp = None;
        for _ in 0..10_000 {
            stamp = stamps.lock().unwrap().pop();
            if stamp.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_micros(100)).await;
        }
        let Some((received, written)) = stamp else {
            return Err("the provider saw no request".into());
        };
        before.push(received.saturating_duration_since(sent));
        after.push(replied.saturating_duration_since(written));
    }
    println!("latency ({runs} completions, {OPEN} open documents of {LINES} lines), microseconds:");
    println!("{:<42} {:>10} {:>10}", "", "p50", "p99");
    for (name, samples) in [
        ("LSP request -> HTTP request at provider", &mut before),
        ("last response byte -> LSP reply", &mut after),
    ] {
        let (p50, p99) = (percentile(samples, 0.5), percentile(samples, 0.99));
        println!(
            "{name:<42} {:>10} {:>10}",
            us(p50.as_secs_f64()),
            us(p99.as_secs_f64())
        );
    }
    let _ = file_uri(dir.path());
    Ok(())
}

async fn memory() -> Result<(), String> {
    let text = document(0);
    let mut store = Documents::default();
    store.open("file:///one.rs", None, text.clone(), 1, false);
    let one = store.heap_bytes();
    println!(
        "memory: a {LINES}-line document ({} KiB of text) holds {} KiB in the store",
        text.len() / 1024,
        one / 1024
    );
    // RSS growth of a serving process over opening MANY documents.
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut client = start(dir.path());
    client.initialize(dir.path(), json!({})).await;
    let start = rss_kib().unwrap_or(0);
    for i in 0..MANY {
        client
            .open(&dir.path().join(format!("m{i}.rs")), &text)
            .await;
    }
    // A request answered after the opens means they were all applied.
    let probe = json!({"textDocument": {"uri": "file:///nope"}, "range": {"start": {"line": 0,
        "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}});
    client.call("textDocument/codeAction", probe).await;
    let grown = rss_kib().unwrap_or(0).saturating_sub(start);
    println!(
        "memory: {MANY} open documents: store {} MiB; process RSS grew {} MiB ({} KiB per document)",
        one * MANY / (1 << 20),
        grown / 1024,
        grown / MANY as u64
    );
    Ok(())
}

fn main() {
    let run = BenchRun::from_env(300);
    let runs = if run.benchmarking { run.k } else { 10 };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let done = runtime.block_on(async {
        latency(runs).await?;
        memory().await
    });
    if let Err(why) = done {
        eprintln!("latency bench failed: {why}");
        std::process::exit(1);
    }
}
