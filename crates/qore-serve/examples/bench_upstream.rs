//! The upstream of `scripts/bench-serve.sh`: a loopback server that answers every
//! `POST /v1/chat/completions` (Chat Completions) and every `POST /v1/messages` (Anthropic
//! Messages) with the same fixed answer, so a gateway's cost is all that differs between a
//! direct run and a run through it.
//!
//! - `"stream": true`: a role chunk, `--chunks` (default 20) `chat.completion.chunk` events
//!   each carrying one content delta (`"tok0 "`, `"tok1 "`, ...), a `finish_reason` chunk, a
//!   usage chunk when `stream_options.include_usage` is set, then `data: [DONE]`. Every event
//!   is its own HTTP chunk; `--interval-ms N` sleeps N ms before each content delta (default
//!   0: as fast as the reader takes them).
//! - otherwise: one short `chat.completion` JSON answer (`"fixed answer"`).
//! - Messages, `"stream": true`: `message_start`, `content_block_start`, `--chunks`
//!   `content_block_delta` events (the same texts, the same pacing), `content_block_stop`,
//!   `message_delta` with the usage, `message_stop`; otherwise one short `message`.
//! - `GET /v1/models` lists `fixed`.
//!
//! Usage: `bench_upstream [--listen 127.0.0.1:0] [--chunks 20] [--interval-ms 0]
//! [--threads 1]`. The base URL (`http://ADDR/v1`) is the first line on stdout. It stops on
//! SIGTERM / Ctrl-C, or after `--max-seconds` (default 3600) whatever happens.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt as _;
use axum::Router;
use futures_util::StreamExt as _;
use serde_json::{json, Value};

/// The answers of both protocols.
struct Answers {
    chat: Answer,
    messages: Answer,
}

/// What every answer is made of, serialized once.
struct Answer {
    /// Events before the content deltas (the role chunk).
    head: Vec<Bytes>,
    /// One event per content delta.
    deltas: Vec<Bytes>,
    /// The finish chunk.
    finish: Bytes,
    /// The usage chunk (Chat: sent when the request asks for it; Messages: always).
    usage: Option<Bytes>,
    /// Sent after everything else.
    end: Bytes,
    /// Whether the usage is sent only when `stream_options.include_usage` asks for it.
    usage_on_request: bool,
    /// The non-streaming answer.
    short: Bytes,
    interval: Duration,
}

const DONE: &[u8] = b"data: [DONE]\n\n";

fn event(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

/// An Anthropic event: its `type` also named on the `event:` line.
fn named(value: &Value) -> Bytes {
    let kind = value["type"].as_str().unwrap_or("");
    Bytes::from(format!("event: {kind}\ndata: {value}\n\n"))
}

fn chunk(delta: Value, finish: Value) -> Value {
    json!({
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000u64,
        "model": "fixed",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

impl Answer {
    fn chat(chunks: usize, interval: Duration) -> Self {
        let usage =
            json!({"prompt_tokens": 8, "completion_tokens": chunks, "total_tokens": chunks + 8});
        let mut usage_chunk = chunk(json!({}), Value::Null);
        usage_chunk["choices"] = json!([]);
        usage_chunk["usage"] = usage.clone();
        let short = json!({
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 1_700_000_000u64,
            "model": "fixed",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": "fixed answer"},
                "finish_reason": "stop",
            }],
            "usage": usage,
        });
        Answer {
            head: vec![event(&chunk(
                json!({"role": "assistant", "content": ""}),
                Value::Null,
            ))],
            deltas: (0..chunks)
                .map(|i| event(&chunk(json!({"content": format!("tok{i} ")}), Value::Null)))
                .collect(),
            finish: event(&chunk(json!({}), json!("stop"))),
            usage: Some(event(&usage_chunk)),
            end: Bytes::from_static(DONE),
            usage_on_request: true,
            short: Bytes::from(short.to_string()),
            interval,
        }
    }

    fn messages(chunks: usize, interval: Duration) -> Self {
        let usage = json!({"input_tokens": 8, "output_tokens": chunks});
        let message = |content: Value, stop: Value, usage: Value| {
            json!({"id": "msg_bench", "type": "message", "role": "assistant", "model": "fixed",
                "content": content, "stop_reason": stop, "stop_sequence": null, "usage": usage})
        };
        let start = json!({"type": "message_start",
            "message": message(json!([]), Value::Null, json!({"input_tokens": 8, "output_tokens": 1}))});
        let block = json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}});
        let short = message(
            json!([{"type": "text", "text": "fixed answer"}]),
            json!("end_turn"),
            json!({"input_tokens": 8, "output_tokens": 2}),
        );
        Answer {
            head: vec![named(&start), named(&block)],
            deltas: (0..chunks)
                .map(|i| {
                    named(&json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": format!("tok{i} ")}}))
                })
                .collect(),
            finish: named(&json!({"type": "content_block_stop", "index": 0})),
            usage: Some(named(&json!({"type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": usage}))),
            end: named(&json!({"type": "message_stop"})),
            usage_on_request: false,
            short: Bytes::from(short.to_string()),
            interval,
        }
    }
}

async fn chat(State(answers): State<Arc<Answers>>, body: Bytes) -> Response {
    respond(&answers.chat, body)
}

async fn messages(State(answers): State<Arc<Answers>>, body: Bytes) -> Response {
    respond(&answers.messages, body)
}

fn respond(answer: &Answer, body: Bytes) -> Response {
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            let error = json!({"error": {"message": format!("bad JSON: {e}"), "type": "invalid_request_error"}});
            return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
        }
    };
    if request["stream"] != json!(true) {
        return (
            [(header::CONTENT_TYPE, "application/json")],
            answer.short.clone(),
        )
            .into_response();
    }
    let with_usage =
        !answer.usage_on_request || request["stream_options"]["include_usage"] == json!(true);
    let mut tail = vec![answer.finish.clone()];
    if let Some(usage) = answer.usage.clone().filter(|_| with_usage) {
        tail.push(usage);
    }
    tail.push(answer.end.clone());
    let interval = answer.interval;
    let deltas = futures_util::stream::iter(answer.deltas.clone()).then(move |b| async move {
        if !interval.is_zero() {
            tokio::time::sleep(interval).await;
        }
        b
    });
    let events = futures_util::stream::iter(answer.head.clone())
        .chain(deltas)
        .chain(futures_util::stream::iter(tail))
        .map(Ok::<_, Infallible>);
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(events))
        .expect("static headers")
}

async fn models() -> impl IntoResponse {
    axum::Json(json!({
        "object": "list",
        "data": [{"id": "fixed", "object": "model", "created": 1_700_000_000u64, "owned_by": "bench"}],
    }))
}

struct Args {
    listen: String,
    chunks: usize,
    interval_ms: u64,
    threads: usize,
    max_seconds: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        listen: "127.0.0.1:0".into(),
        chunks: 20,
        interval_ms: 0,
        threads: 1,
        max_seconds: 3600,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || value.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--listen" => args.listen = value.clone(),
            "--chunks" => args.chunks = number()? as usize,
            "--interval-ms" => args.interval_ms = number()?,
            "--threads" => args.threads = number()?.max(1) as usize,
            "--max-seconds" => args.max_seconds = number()?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(args)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("bench_upstream: {e}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads)
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(serve(args));
}

async fn serve(args: Args) {
    let interval = Duration::from_millis(args.interval_ms);
    let answer = Arc::new(Answers {
        chat: Answer::chat(args.chunks, interval),
        messages: Answer::messages(args.chunks, interval),
    });
    let app = Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/chat/completions", post(chat))
        .route("/v1/messages", post(messages))
        .route("/v1/models", get(models))
        .with_state(answer);
    let listener = match tokio::net::TcpListener::bind(&args.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("bench_upstream: cannot listen on {}: {e}", args.listen);
            std::process::exit(1);
        }
    };
    let addr = listener.local_addr().expect("local address");
    // Each event is its own write: without TCP_NODELAY, Nagle holds the next one back
    // until the client's delayed ACK (~40 ms).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    println!("http://{addr}/v1");
    let limit = Duration::from_secs(args.max_seconds);
    let stop = async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminated() => {}
            _ = tokio::time::sleep(limit) => eprintln!("bench_upstream: --max-seconds reached"),
        }
    };
    if let Err(e) = axum::serve(listener, app)
        .with_graceful_shutdown(stop)
        .await
    {
        eprintln!("bench_upstream: {e}");
    }
}

#[cfg(unix)]
async fn terminated() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut s) => {
            s.recv().await;
        }
        Err(_) => std::future::pending().await,
    }
}

#[cfg(not(unix))]
async fn terminated() {
    std::future::pending().await
}
