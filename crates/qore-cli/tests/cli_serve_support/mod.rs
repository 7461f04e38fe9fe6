//! The harness of `cli_serve`: a world of its own (config dir with providers and agents, a
//! data dir), `qore serve` started as a user starts it (its base URL read from stdout's first
//! line, stderr kept), requests over loopback with reqwest, SIGTERM, and the exit.
//! The cases of `cli_serve` beyond its own file are in `cases/` (declared by `cli_serve.rs`,
//! so another test binary that uses this harness does not run them).
#![allow(dead_code)]

pub mod upstream;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};

use crate::common::{command, run_cmd, Run};

/// How long a server may take to print its URL.
const START: Duration = Duration::from_secs(60);

/// A config dir and a data dir of one test.
pub struct World {
    _root: tempfile::TempDir,
    pub config: PathBuf,
    pub data: PathBuf,
}

impl World {
    pub fn new() -> World {
        let root = tempfile::tempdir().unwrap();
        let config = root.path().join("config");
        let data = root.path().join("data");
        for dir in [
            config.join("providers"),
            config.join("agents"),
            data.clone(),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        World {
            _root: root,
            config,
            data,
        }
    }

    /// `providers/NAME.toml` speaking `protocol` at `url`.
    pub fn provider(&self, name: &str, protocol: &str, url: &str) -> &World {
        let text = format!("name = \"{name}\"\nprotocol = \"{protocol}\"\nurl = \"{url}\"\n");
        std::fs::write(self.config.join(format!("providers/{name}.toml")), text).unwrap();
        self
    }

    /// An openai-chat provider NAME at a replay server.
    pub fn chat_provider(&self, name: &str, server: &qore_testkit::ReplayServer) -> &World {
        self.provider(name, "openai-chat", &format!("{}/v1", server.url()))
    }

    /// `agents/NAME.toml`: a Chat Completions agent on `provider`'s model `m`, with `more`
    /// lines (`fallbacks = [...]`).
    pub fn agent(&self, name: &str, provider: &str, more: &str) -> &World {
        let text = format!(
            "name = \"{name}\"\nextends = \"openai-chat\"\nprovider = \"{provider}\"\n\
             model = \"m\"\n{more}\n"
        );
        std::fs::write(self.config.join(format!("agents/{name}.toml")), text).unwrap();
        self
    }

    fn cmd(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = command(args);
        cmd.env("QORE_CONFIG_DIR", &self.config)
            .env("QORE_DATA_DIR", &self.data)
            .env_remove("QORE_LOG");
        cmd
    }

    /// `qore ARGS` in this world, to its end.
    pub async fn qore(&self, args: &[&str]) -> Run {
        run_cmd(self.cmd(args)).await
    }

    /// `qore serve keys create NAME EXTRA…`: the key.
    pub async fn key(&self, name: &str, extra: &[&str]) -> String {
        let args = [&["serve", "keys", "create", name][..], extra].concat();
        let run = self.qore(&args).await;
        assert_eq!(run.code, Some(0), "{run:?}");
        run.stdout.trim().to_owned()
    }

    /// `qore serve --listen 127.0.0.1:0 ARGS…`, once it printed its URL.
    pub async fn serve(&self, args: &[&str]) -> Server {
        self.serve_env(args, &[]).await
    }

    /// [`World::serve`] with more environment variables (`HOME`…).
    pub async fn serve_env(&self, args: &[&str], env: &[(&str, &std::path::Path)]) -> Server {
        let args = [&["serve", "--listen", "127.0.0.1:0"][..], args].concat();
        let mut cmd = self.cmd(&args);
        cmd.envs(env.iter().copied());
        let mut child = cmd.spawn().expect("qore serve starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let kept = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                kept.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        let read = tokio::time::timeout(START, stdout.read_line(&mut line)).await;
        let url = line.trim().to_owned();
        if !matches!(read, Ok(Ok(n)) if n > 0) || !url.starts_with("http://127.0.0.1:") {
            let _ = child.start_kill();
            panic!("qore serve printed {line:?}: {}", stderr.lock().unwrap());
        }
        Server {
            child,
            url,
            stderr,
            http: reqwest::Client::new(),
        }
    }
}

/// A running `qore serve`.
pub struct Server {
    pub child: tokio::process::Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    stderr: Arc<Mutex<String>>,
    pub http: reqwest::Client,
}

/// A request's headers: `("x-api-key", key)` and the like.
pub type Headers<'a> = &'a [(&'a str, &'a str)];

impl Server {
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// POST `body` (JSON) to `path` with `headers`; the response as it starts.
    pub async fn send(&self, path: &str, body: &Value, headers: Headers<'_>) -> reqwest::Response {
        self.send_raw(path, body.to_string().into_bytes(), headers)
            .await
    }

    pub async fn send_raw(
        &self,
        path: &str,
        body: Vec<u8>,
        headers: Headers<'_>,
    ) -> reqwest::Response {
        let mut request = (self.http.post(format!("{}{path}", self.url)))
            .header("content-type", "application/json")
            .body(body)
            .timeout(Duration::from_secs(30));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request
            .send()
            .await
            .unwrap_or_else(|err| panic!("POST {path}: {err}"))
    }

    /// POST and read the whole answer: status, headers, body text.
    pub async fn post(&self, path: &str, body: &Value, headers: Headers<'_>) -> Answer {
        Answer::of(self.send(path, body, headers).await).await
    }

    /// GET `path`: the answer.
    pub async fn get(&self, path: &str, headers: Headers<'_>) -> Answer {
        let mut request = self.http.get(format!("{}{path}", self.url));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request
            .send()
            .await
            .unwrap_or_else(|err| panic!("GET {path}: {err}"));
        Answer::of(response).await
    }

    pub async fn metrics(&self) -> String {
        self.get("/metrics", &[]).await.text
    }

    /// Wait until `/metrics` has `line` (a whole line), at most `within`.
    pub async fn metric_becomes(&self, line: &str, within: Duration) {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let metrics = self.metrics().await;
            if metrics.lines().any(|l| l == line) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "/metrics never had {line:?} within {within:?}:\n{metrics}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Send SIGTERM.
    pub fn sigterm(&self) {
        let pid = self.child.id().expect("still running");
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Wait for the exit (within `limit`): its code.
    pub async fn exit_within(&mut self, limit: Duration) -> Option<i32> {
        let status = tokio::time::timeout(limit, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("qore serve still runs after {limit:?}: {}", self.stderr()))
            .expect("wait");
        status.code()
    }

    /// SIGTERM, then the exit code (within 10 s).
    pub async fn stop(&mut self) -> Option<i32> {
        self.sigterm();
        self.exit_within(Duration::from_secs(10)).await
    }
}

/// A whole answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Answer {
    pub async fn of(response: reqwest::Response) -> Answer {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("the body is read");
        Answer {
            status,
            headers,
            text,
        }
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|err| panic!("not JSON ({err}): {} {}", self.status, self.text))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A request body for `model` saying `text`, streamed or not.
pub type Ask = fn(&str, &str, bool) -> Value;

/// The three chat dialects: path, and how to ask.
pub fn dialects() -> [(&'static str, Ask); 3] {
    [
        ("/v1/chat/completions", |model, text, stream| {
            serde_json::json!({"model": model, "stream": stream,
                "messages": [{"role": "user", "content": text}]})
        }),
        ("/v1/messages", |model, text, stream| {
            serde_json::json!({"model": model, "stream": stream, "max_tokens": 100,
                "messages": [{"role": "user", "content": text}]})
        }),
        (
            "/v1/responses",
            |model, text, stream| serde_json::json!({"model": model, "stream": stream, "input": text, "store": false}),
        ),
    ]
}

/// The error object of an error answer to `path`, after checking the dialect's envelope:
/// Anthropic's `{"type": "error", "error": {"type", "message"}}` on `/v1/messages`,
/// OpenAI's `{"error": {"message", "type", …}}` elsewhere.
pub fn error_of(path: &str, answer: &Answer) -> Value {
    let body = answer.json();
    let error = body["error"].clone();
    assert!(error["message"].is_string(), "{path}: {body}");
    assert!(error["type"].is_string(), "{path}: {body}");
    if path == "/v1/messages" {
        assert_eq!(body["type"], "error", "{path}: {body}");
        assert_eq!(body.as_object().unwrap().len(), 2, "{path}: {body}");
    } else {
        assert_eq!(body.as_object().unwrap().len(), 1, "{path}: {body}");
        assert!(error.get("param").is_some(), "{path}: {body}");
    }
    error
}

/// Wait until `check` holds, at most `within`; panics naming `what` otherwise.
pub async fn eventually(what: &str, within: Duration, check: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + within;
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "never happened within {within:?}: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Read `response` until its text holds `needle` (20 s at most, then a panic naming it): the
/// bytes read. A stream that ends first is a failure showing what came.
pub async fn read_until(response: &mut reqwest::Response, needle: &str) -> String {
    let mut seen = String::new();
    let read = async {
        while !seen.contains(needle) {
            match response.chunk().await {
                Ok(Some(bytes)) => seen.push_str(&String::from_utf8_lossy(&bytes)),
                other => panic!("the stream ended before {needle:?} ({other:?}): {seen}"),
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), read)
        .await
        .unwrap_or_else(|_| panic!("no {needle:?} within 20 s"));
    seen
}
