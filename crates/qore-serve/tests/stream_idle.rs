//! Long streams are bounded by idle limits, never by a total: for each dialect, a stream
//! whose upstream drips slower than `stream_keepalive_secs` gets `: keep-alive` comments
//! and still ends with its success ending (the comments change nothing a client decodes);
//! a stream whose upstream goes silent for `upstream_idle_secs` ends with the dialect's
//! error event and the upstream connection is closed.

mod durable;
mod fleet;

use std::time::{Duration, Instant};

use durable::{frames, one, Dialect, Told, CASES};
use fleet::{add_key, Fleet};
use qore_serve::config::StreamLimits;
use qore_testkit::chat::chat_answer;

fn limits(keepalive_ms: u64, idle_ms: u64) -> StreamLimits {
    StreamLimits {
        keepalive: Some(Duration::from_millis(keepalive_ms)),
        upstream_idle: Some(Duration::from_millis(idle_ms)),
    }
}

/// The streaming cases only.
fn streaming() -> impl Iterator<Item = Dialect> {
    CASES.into_iter().filter(|(_, s)| *s).map(|(d, _)| d)
}

/// POST a streaming request of `dialect` (no session: nothing to keep); the whole body.
async fn stream_text(fleet: &Fleet, key: &str, dialect: Dialect) -> String {
    let (path, body) = match dialect {
        Dialect::Chat => (
            "/v1/chat/completions",
            serde_json::json!({"model": "up/m", "stream": true,
                "messages": [{"role": "user", "content": "hi"}]}),
        ),
        Dialect::Messages => (
            "/v1/messages",
            serde_json::json!({"model": "up/m", "max_tokens": 50, "stream": true,
                "messages": [{"role": "user", "content": "hi"}]}),
        ),
        Dialect::Responses => (
            "/v1/responses",
            serde_json::json!({"model": "up/m", "input": "hi", "stream": true, "store": false}),
        ),
    };
    let url = format!("{}{path}", fleet.servers[0].url());
    let response = (fleet.http.post(&url))
        .header("x-api-key", key)
        .header("anthropic-version", "2023-06-01")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "{dialect:?}");
    response.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_upstream_gets_keep_alive_comments_and_still_completes() {
    let dir = tempfile::tempdir().unwrap();
    let location = dir.path().join("qore.db").to_string_lossy().into_owned();
    // Three frames, 500 ms apart: silent for longer than the keep-alive, never than the limit.
    let slow = chat_answer("slow but sure").with_pace(Duration::from_millis(500));
    let fleet = Fleet::start_with(&location, 1, slow, |s| s.streams = limits(150, 5000)).await;
    let key = add_key(&*fleet.stores[0], "k", |_| {}).await;
    for dialect in streaming() {
        let text = stream_text(&fleet, &key, dialect).await;
        let comments = text.matches(": keep-alive\n\n").count();
        assert!(comments >= 2, "{dialect:?}: {comments} comments in {text}");
        let last = frames(&text).last().cloned().unwrap();
        let wanted = match dialect {
            Dialect::Chat => "[DONE]",
            Dialect::Messages => "message_stop",
            Dialect::Responses => "response.completed",
        };
        assert_eq!(last.0, wanted, "{dialect:?}: {text}");
        // The same request with keeping asked for is acknowledged too.
        let told = one(&fleet, 0, &key, dialect, true, &format!("slow-{dialect:?}")).await;
        assert!(
            matches!(told, Told::Acknowledged(_)),
            "{dialect:?}: {told:?}"
        );
    }
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_upstream_ends_the_stream_with_the_dialects_error_event() {
    let dir = tempfile::tempdir().unwrap();
    let location = dir.path().join("qore.db").to_string_lossy().into_owned();
    let answer = chat_answer("and then nothing");
    // The first frame (the text), then silence with the connection open.
    let first = String::from_utf8_lossy(&answer.body).find("\n\n").unwrap() + 2;
    let stalled = answer.stall_after(first);
    let fleet = Fleet::start_with(&location, 1, stalled, |s| s.streams = limits(200, 800)).await;
    let key = add_key(&*fleet.stores[0], "k", |_| {}).await;
    for dialect in streaming() {
        let started = Instant::now();
        let text = stream_text(&fleet, &key, dialect).await;
        let took = started.elapsed();
        assert!(took < Duration::from_secs(10), "{dialect:?}: {took:?}");
        assert!(text.contains("and then nothing"), "{dialect:?}: {text}");
        let (event, data) = frames(&text).last().cloned().unwrap();
        let message = match dialect {
            Dialect::Chat => {
                assert!(!text.contains("[DONE]"), "{text}");
                data["error"]["message"].clone()
            }
            Dialect::Messages => {
                assert_eq!(event, "error", "{text}");
                data["error"]["message"].clone()
            }
            Dialect::Responses => {
                assert_eq!(event, "response.failed", "{text}");
                data["response"]["error"]["message"].clone()
            }
        };
        let message = message.as_str().unwrap_or_default().to_owned();
        assert!(message.contains("sent nothing"), "{dialect:?}: {text}");
    }
    fleet.stop().await;
}
