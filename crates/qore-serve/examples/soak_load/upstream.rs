//! The soak's provider: a loopback Chat Completions server whose answer to every request is
//! `re: ` followed by the request's last user text, so every stored turn can be matched to
//! the request that made it and compared word for word.
//!
//! Streamed (`"stream": true`): a role chunk, one content delta per word (`--interval-ms`
//! before each), a `finish_reason` chunk, a usage chunk when `stream_options.include_usage`
//! is set, then `data: [DONE]`. Not streamed: the same text in one `chat.completion`, sent
//! after as long as the stream would take. It stops on SIGTERM / Ctrl-C or `--max-seconds`.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use futures_util::StreamExt as _;
use serde_json::{json, Value};

use crate::Args;

/// The last user message's text of a Chat Completions request (a string, or its text parts).
pub fn last_user_text(request: &Value) -> String {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let Some(last) = messages.iter().rev().find(|m| m["role"] == "user") else {
        return String::new();
    };
    match &last["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// The answer to a request whose last user text is `user`, as the deltas it is streamed in.
pub fn answer_words(user: &str) -> Vec<String> {
    format!("re: {user}")
        .split_inclusive(' ')
        .map(str::to_owned)
        .collect()
}

fn chunk(delta: Value, finish: Value) -> Bytes {
    let value = json!({
        "id": "chatcmpl-soak",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000u64,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    Bytes::from(format!("data: {value}\n\n"))
}

async fn chat(State(interval): State<Duration>, body: Bytes) -> Response {
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            let error = json!({"error": {"message": format!("bad JSON: {e}"), "type": "invalid_request_error"}});
            return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
        }
    };
    let words = answer_words(&last_user_text(&request));
    let usage = json!({"prompt_tokens": 8, "completion_tokens": words.len(), "total_tokens": words.len() + 8});
    if request["stream"] != json!(true) {
        tokio::time::sleep(interval * words.len() as u32).await;
        let answer = json!({
            "id": "chatcmpl-soak",
            "object": "chat.completion",
            "created": 1_700_000_000u64,
            "model": "m",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": words.concat()},
                "finish_reason": "stop",
            }],
            "usage": usage,
        });
        return axum::Json(answer).into_response();
    }
    let mut tail = vec![chunk(json!({}), json!("stop"))];
    if request["stream_options"]["include_usage"] == json!(true) {
        let mut value: Value = json!({"id": "chatcmpl-soak", "object": "chat.completion.chunk",
            "created": 1_700_000_000u64, "model": "m", "choices": []});
        value["usage"] = usage;
        tail.push(Bytes::from(format!("data: {value}\n\n")));
    }
    tail.push(Bytes::from_static(b"data: [DONE]\n\n"));
    let head = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    let deltas = futures_util::stream::iter(words).then(move |w| async move {
        tokio::time::sleep(interval).await;
        chunk(json!({"content": w}), Value::Null)
    });
    let events = futures_util::stream::iter([head])
        .chain(deltas)
        .chain(futures_util::stream::iter(tail))
        .map(Ok::<_, Infallible>);
    let response = Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(events));
    response.unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Serve until SIGTERM, Ctrl-C or `--max-seconds`.
pub async fn serve(args: Args) -> Result<(), String> {
    let app = Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/chat/completions", post(chat))
        .with_state(args.interval);
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("http://{addr}/v1");
    let limit = Duration::from_secs(args.max_seconds);
    let stop = async move {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(|e| eprintln!("soak_load upstream: no SIGTERM handler: {e}"))
            .ok();
        let terminated = async {
            match term.as_mut() {
                Some(s) => drop(s.recv().await),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminated => {}
            _ = tokio::time::sleep(limit) => eprintln!("soak_load upstream: --max-seconds reached"),
        }
    };
    axum::serve(listener, app)
        .with_graceful_shutdown(stop)
        .await
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_names_the_last_user_text() {
        let cases = [
            (
                json!({"messages": [{"role": "user", "content": "one"}, {"role": "assistant", "content": "x"}, {"role": "user", "content": "soak w1 n2"}]}),
                "re: soak w1 n2",
                4,
            ),
            (
                json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "soak "}, {"type": "text", "text": "w2"}]}]}),
                "re: soak w2",
                3,
            ),
            (json!({"messages": []}), "re: ", 1),
        ];
        for (request, want, deltas) in cases {
            let words = answer_words(&last_user_text(&request));
            assert_eq!(words.concat(), want, "{request}");
            assert_eq!(words.len(), deltas, "{request}: {words:?}");
        }
    }
}
