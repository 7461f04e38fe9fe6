//! The harness of the listener tests: one `qore serve` on a SQLite store (no key, so any
//! loopback caller is served) whose provider `up` is a loopback replay server; raw TCP
//! clients that misbehave on purpose, a reader of `/metrics`, and a test CA ([`ca`]).
#![allow(dead_code)]

pub mod ca;

use std::time::{Duration, Instant};

use qore_serve::config::ServeSettings;
use qore_serve::listen::ListenSettings;
use qore_serve::Server;
use qore_testkit::{ReplayServer, Reply};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};

/// The limits of these tests: short, and each one distinct so a close tells which fired.
pub fn fast() -> ListenSettings {
    ListenSettings {
        header_read_timeout: Duration::from_secs(1),
        body_timeout: Duration::from_millis(1500),
        write_stall_timeout: Duration::from_secs(1),
        tls_handshake_timeout: Duration::from_secs(1),
        ..ListenSettings::default()
    }
}

/// A server and its upstream.
pub struct Harness {
    _dir: tempfile::TempDir,
    pub upstream: ReplayServer,
    pub server: Server,
    pub http: reqwest::Client,
}

impl Harness {
    /// A server with `listener` whose upstream answers every request with `reply`.
    pub async fn start(reply: Reply, listener: ListenSettings) -> Harness {
        let upstream = ReplayServer::start_repeating(reply).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("providers")).unwrap();
        let provider = format!(
            "name = \"up\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
            upstream.url()
        );
        std::fs::write(dir.path().join("providers/up.toml"), provider).unwrap();
        let store = qore_store::open(&dir.path().join("qore.db").to_string_lossy())
            .await
            .unwrap();
        let settings = ServeSettings {
            listen: "127.0.0.1:0".parse().unwrap(),
            drain_timeout: Duration::from_secs(1),
            listener,
            ..ServeSettings::default()
        };
        let agents = qore_agents::config::Config::load(Some(dir.path()));
        let server = Server::start(settings, agents, store).await.unwrap();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        Harness {
            _dir: dir,
            upstream,
            server,
            http,
        }
    }

    pub fn addr(&self) -> String {
        let url = self.server.url();
        url.split("://").nth(1).unwrap_or_default().to_owned()
    }

    /// One metric line's value (0 when absent).
    pub async fn metric(&self, line_start: &str) -> f64 {
        let text = self.metrics().await;
        metric_in(&text, line_start)
    }

    pub async fn metrics(&self) -> String {
        let url = format!("{}/metrics", self.server.url());
        (self.http.get(&url).send().await.unwrap().text().await).unwrap()
    }

    /// A Chat Completions request answered whole: its status.
    pub async fn chat(&self, stream: bool) -> (u16, String) {
        let url = format!("{}/v1/chat/completions", self.server.url());
        let body = chat_body(stream);
        let response = self.http.post(&url).body(body).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }
}

/// The value of the metric line starting with `line_start` in `text` (0 when absent).
pub fn metric_in(text: &str, line_start: &str) -> f64 {
    (text.lines())
        .find(|l| l.starts_with(line_start))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

pub fn chat_body(stream: bool) -> String {
    serde_json::json!({"model": "up/m", "stream": stream,
                       "messages": [{"role": "user", "content": "hi"}]})
    .to_string()
}

/// A request head for `path` promising `body` bytes of JSON.
pub fn head(path: &str, length: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n\
         content-length: {length}\r\n\r\n"
    )
}

/// Read `tcp` until the server closes it (EOF or reset), at most `limit`: how long that took
/// from `since` and what was read. `None`: still open at `limit`.
pub async fn until_closed<R: AsyncRead + Unpin>(
    tcp: &mut R,
    since: Instant,
    limit: Duration,
) -> Option<(Duration, Vec<u8>)> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let read_all = async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    match tokio::time::timeout(limit, read_all).await {
        Ok(()) => Some((since.elapsed(), got)),
        Err(_) => None,
    }
}

/// Write `bytes` one at a time, `gap` apart, ignoring a closed connection.
pub async fn drip<W: AsyncWrite + Unpin>(tcp: &mut W, bytes: &[u8], gap: Duration) {
    for byte in bytes {
        tokio::time::sleep(gap).await;
        if tcp.write_all(&[*byte]).await.is_err() {
            return;
        }
    }
}
