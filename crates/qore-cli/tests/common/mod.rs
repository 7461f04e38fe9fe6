//! Shared helpers of the `qore` binary's integration tests: running the binary, loading
//! recorded exchanges, and oracles computed from the recorded bytes (never from qore).
//!
//! Each test binary uses a subset of these helpers.
#![allow(dead_code)]

pub mod chat;
pub mod chat_term;
pub mod config;
pub mod live;
pub mod local;
pub mod pty;
pub mod pytest;
pub mod raw;
pub mod tmux;
pub mod turns;

use std::process::Stdio;
use std::time::Duration;

use qore_testkit::{
    fixtures_dir, load_cassette_file, reply_from_exchange, Exchange, ReplayServer, Slicing,
};
use serde_json::Value;

/// The binary under test.
pub const QORE: &str = env!("CARGO_BIN_EXE_qore");

/// Slices of 1..=7 bytes: frames, JSON and UTF-8 sequences all get cut.
pub const IRREGULAR: Slicing = Slicing::Irregular { seed: 11, max: 7 };

/// What one run of `qore` left behind.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Every stdout line as JSON; panics unless each one is an object with a string `type`.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|line| {
                let value: Value = serde_json::from_str(line)
                    .unwrap_or_else(|err| panic!("stdout line is not JSON ({err}): {line}"));
                assert!(
                    value["type"].is_string(),
                    "stdout line has no string `type`: {line}"
                );
                value
            })
            .collect()
    }

    /// The last stdout line as JSON (after checking every line, see [`Run::json_lines`]).
    pub fn last_json(&self) -> Value {
        self.json_lines()
            .pop()
            .unwrap_or_else(|| panic!("no stdout at all; {self:?}"))
    }

    /// Asserts that stderr is exactly one line and returns it.
    pub fn one_stderr_line(&self) -> &str {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "stderr must be exactly one line: {:?}",
            self.stderr
        );
        assert!(self.stderr.ends_with('\n'), "{:?}", self.stderr);
        lines[0]
    }
}

/// `qore ARGS` with stdin null, `QORE_URL`/`QORE_MODEL`/`QORE_STORE_URL` removed, a config
/// dir that does not exist (the user's own config never leaks in; tests that need one set
/// `QORE_CONFIG_DIR`), output captured.
pub fn command(args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(QORE);
    cmd.args(args)
        .env_remove("QORE_URL")
        .env_remove("QORE_MODEL")
        .env_remove("QORE_STORE_URL")
        .env(
            "QORE_CONFIG_DIR",
            std::env::temp_dir().join("qore-tests-no-config"),
        )
        // Sessions are saved: into a scratch data dir of this test process, never the user's
        // (nor one that another checkout's tests share).
        .env("QORE_DATA_DIR", scratch_data_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// The data dir of this test process's runs.
pub fn scratch_data_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("qore-tests-data-{}", std::process::id()))
}

/// Run `cmd` to completion (within `limit`).
pub async fn run_with_limit(mut cmd: tokio::process::Command, limit: Duration) -> Run {
    let output = tokio::time::timeout(limit, cmd.output())
        .await
        .unwrap_or_else(|_| panic!("qore did not finish within {limit:?}"))
        .expect("qore runs");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// Run a prepared command (30 s at most).
pub async fn run_cmd(cmd: tokio::process::Command) -> Run {
    run_with_limit(cmd, Duration::from_secs(30)).await
}

/// Run `qore ARGS` (30 s at most).
pub async fn qore(args: &[&str]) -> Run {
    run_cmd(command(args)).await
}

/// What text mode prints for an answer: the text, then a newline unless it ends with one.
pub fn text_stdout(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_owned()
    } else {
        format!("{text}\n")
    }
}

/// The only exchange of `rig-cassettes/<rel>`, or `None` (with a note) when the fixtures are
/// not on this machine (`fixtures_dir` panics instead under CI).
pub fn exchange(rel: &str) -> Option<Exchange> {
    let Some(dir) = fixtures_dir() else {
        eprintln!("skipped: the recorded fixtures are not available");
        return None;
    };
    let root = dir.join("rig-cassettes");
    let cassette = load_cassette_file(&root, &root.join(rel))
        .unwrap_or_else(|err| panic!("cannot load {rel}: {err}"));
    assert_eq!(cassette.exchanges.len(), 1, "{rel}: expected one exchange");
    cassette.exchanges.into_iter().next()
}

/// A loopback server that replays `exchange` once, sliced irregularly.
pub async fn replay(exchange: &Exchange) -> ReplayServer {
    ReplayServer::start(vec![reply_from_exchange(exchange, IRREGULAR)])
        .await
        .expect("replay server starts")
}

/// The base URL under which `server` answers at the exchange's recorded path: the recorded
/// path minus `suffix` (`/v1` for OpenAI, empty for DeepSeek's `/chat/completions`).
pub fn base_url(server: &ReplayServer, exchange: &Exchange, suffix: &str) -> String {
    let prefix = exchange
        .path
        .strip_suffix(suffix)
        .unwrap_or_else(|| panic!("{} does not end in {suffix}", exchange.path));
    format!("{}{prefix}", server.url())
}

/// One tool call as the wire streamed it.
#[derive(Debug, Clone, PartialEq)]
pub struct WireCall {
    pub id: String,
    pub name: String,
    /// The concatenated argument fragments.
    pub arguments: String,
}

impl WireCall {
    /// The arguments parsed; empty text is `{}`.
    pub fn input(&self) -> Value {
        if self.arguments.trim().is_empty() {
            return serde_json::json!({});
        }
        serde_json::from_str(&self.arguments)
            .unwrap_or_else(|err| panic!("recorded arguments are not JSON ({err})"))
    }
}

/// What a recorded Chat Completions stream says, read straight from its `data:` lines.
#[derive(Debug, Default)]
pub struct Wire {
    pub id: Option<String>,
    pub model: Option<String>,
    /// `choices[0].delta.content`, concatenated.
    pub text: String,
    /// `choices[0].delta.reasoning_content` (or `reasoning`), concatenated.
    pub reasoning: String,
    pub calls: Vec<WireCall>,
    pub finish_reason: Option<String>,
    /// The last non-null `usage` object.
    pub usage: Option<Value>,
}

/// Read a recorded SSE body (OpenAI Chat Completions chunks).
pub fn wire(body: &str) -> Wire {
    let mut wire = Wire::default();
    let mut indices: Vec<u64> = Vec::new();
    for line in body.lines() {
        let Some(data) = line.strip_prefix("data:") else {
            continue;
        };
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            continue;
        }
        let chunk: Value = serde_json::from_str(data).expect("recorded chunk is JSON");
        if wire.id.is_none() {
            wire.id = chunk["id"].as_str().map(str::to_owned);
            wire.model = chunk["model"].as_str().map(str::to_owned);
        }
        if chunk["usage"].is_object() {
            wire.usage = Some(chunk["usage"].clone());
        }
        let choices = chunk["choices"].as_array().cloned().unwrap_or_default();
        for choice in choices.iter().filter(|c| c["index"].as_u64() == Some(0)) {
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str() {
                wire.text.push_str(text);
            }
            let reasoning = delta["reasoning_content"].as_str();
            if let Some(text) = reasoning.or(delta["reasoning"].as_str()) {
                wire.reasoning.push_str(text);
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64().expect("tool call index");
                let pos = match indices.iter().position(|&i| i == index) {
                    Some(pos) => pos,
                    None => {
                        indices.push(index);
                        wire.calls.push(WireCall {
                            id: String::new(),
                            name: String::new(),
                            arguments: String::new(),
                        });
                        wire.calls.len() - 1
                    }
                };
                let entry = &mut wire.calls[pos];
                if let Some(id) = call["id"].as_str().filter(|s| !s.is_empty()) {
                    entry.id = id.to_owned();
                }
                if let Some(name) = call["function"]["name"].as_str().filter(|s| !s.is_empty()) {
                    entry.name = name.to_owned();
                }
                if let Some(args) = call["function"]["arguments"].as_str() {
                    entry.arguments.push_str(args);
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                wire.finish_reason = Some(reason.to_owned());
            }
        }
    }
    wire
}

/// The stop reason qore's vocabulary gives the wire's `finish_reason`.
pub fn expected_stop_reason(finish_reason: &str) -> Value {
    match finish_reason {
        "stop" => "end_turn".into(),
        "length" => "max_tokens".into(),
        "tool_calls" => "tool_use".into(),
        other => panic!("no expectation written for finish_reason {other:?}"),
    }
}

/// The text of a request message's `content` (a string or an array of text parts).
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect(),
        other => panic!("unexpected message content {other}"),
    }
}

/// The provider's own message in a recorded error body, whatever the envelope's shape.
pub fn provider_message(body: &str) -> String {
    let value: Value = serde_json::from_str(body).expect("recorded error body is JSON");
    let inner = match &value["error"] {
        Value::String(text) => return text.clone(),
        inner @ Value::Object(_) => inner,
        _ => &value,
    };
    ["message", "detail"]
        .iter()
        .find_map(|key| inner[*key].as_str())
        .unwrap_or_else(|| panic!("no message in {body}"))
        .to_owned()
}

/// Whitespace collapsed to single spaces.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Exchange `index` (from 0) of `rig-cassettes/<rel>`, for cassettes that record several
/// exchanges; `None` (with a note) when the fixtures are not on this machine.
pub fn exchange_at(rel: &str, index: usize) -> Option<Exchange> {
    let Some(dir) = fixtures_dir() else {
        eprintln!("skipped: the recorded fixtures are not available");
        return None;
    };
    let root = dir.join("rig-cassettes");
    let cassette = load_cassette_file(&root, &root.join(rel))
        .unwrap_or_else(|err| panic!("cannot load {rel}: {err}"));
    let count = cassette.exchanges.len();
    let exchange = cassette.exchanges.into_iter().nth(index);
    assert!(
        exchange.is_some(),
        "{rel}: no exchange #{index} ({count} recorded)"
    );
    exchange
}

/// The JSON of every `data:` line of a recorded SSE body, in order (`[DONE]` and empty data
/// skipped).
pub fn sse_data(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty() && *data != "[DONE]")
        .map(|data| {
            serde_json::from_str(data)
                .unwrap_or_else(|err| panic!("recorded data is not JSON ({err}): {data}"))
        })
        .collect()
}

/// The JSON of every non-empty line of a recorded NDJSON body, in order.
pub fn ndjson(body: &str) -> Vec<Value> {
    body.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("recorded line is not JSON ({err}): {line}"))
        })
        .collect()
}

/// A request target split into its path and its query pairs (values as sent, not decoded).
pub fn split_target(target: &str) -> (&str, Vec<(String, String)>) {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let pairs = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (name.to_owned(), value.to_owned())
        })
        .collect();
    (path, pairs)
}

/// A loopback port nothing listens on (bound, then released).
pub fn unused_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Keep `cmd` away from the real local model server: a cache dir that does not exist yet
/// (returned, so a test can check nothing was written there), an unused port, and a Python
/// that does not exist, so an attempt to start the server fails at once instead of
/// installing it.
pub fn away_from_the_local_server(cmd: &mut tokio::process::Command) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let cache = std::env::temp_dir().join(format!(
        "qore-cli-test-cache-{}-{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::SeqCst)
    ));
    cmd.env("QORE_CACHE_DIR", &cache)
        .env("QORE_LOCAL_PORT", unused_port().to_string())
        .env("QORE_PYTHON", cache.join("no-such-python"));
    cache
}
