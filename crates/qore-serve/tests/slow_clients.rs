//! Slow and greedy clients against a real `qore serve` on loopback (limits of ~1 s): each
//! kind of slow connection is closed within its limit + 1 s and counted by reason; ordinary
//! requests (HTTP/1.1 and h2c) are still answered; a client that stops reading a stream is
//! closed and its upstream request cancelled (HTTP/1.1 and HTTP/2), while a slow stream that
//! outlives every limit completes; past the connection cap, connections wait and are served
//! once slow ones are reaped.

mod listener;

use std::time::{Duration, Instant};

use listener::{chat_body, drip, fast, head, metric_in, until_closed, Harness};
use qore_serve::listen::ListenSettings;
use qore_testkit::chat::chat_answer;
use qore_testkit::Reply;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// Extra time a close may take past its limit.
const SLACK: Duration = Duration::from_secs(1);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_kind_of_slow_connection_is_closed_within_its_limit() {
    let h = Harness::start(chat_answer("hello there"), fast()).await;
    let limits = fast();
    let (header, body) = (limits.header_read_timeout, limits.body_timeout);
    let gap = Duration::from_millis(100);
    let promised = head("/v1/chat/completions", 1000);
    // (name, sent at once, dripped a byte per `gap`, the limit that closes it, answer start)
    let cases: Vec<(&str, String, Vec<u8>, Duration, &str)> = vec![
        ("silent", String::new(), Vec::new(), header, ""),
        (
            "half a header",
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n".into(),
            Vec::new(),
            header,
            "",
        ),
        (
            "a header dripped",
            "GET /healthz HTTP/1.1\r\n".into(),
            b"X-Slow: 1\r\n".repeat(50),
            header,
            "",
        ),
        (
            "a body never sent",
            promised.clone(),
            Vec::new(),
            body,
            "HTTP/1.1 408",
        ),
        (
            "a body dripped",
            promised,
            vec![b'a'; 1000],
            body,
            "HTTP/1.1 408",
        ),
        (
            "HTTP/2's preface, then nothing (h2c)",
            "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0".into(),
            Vec::new(),
            header,
            "",
        ),
        (
            "idle after a request (keep-alive)",
            "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".into(),
            Vec::new(),
            header,
            "HTTP/1.1 200",
        ),
    ];
    let mut tasks = Vec::new();
    for (name, sent, dripped, limit, answer) in cases {
        let addr = h.addr();
        tasks.push(tokio::spawn(async move {
            let tcp = TcpStream::connect(&addr).await.unwrap();
            let (mut read, mut write) = tcp.into_split();
            let since = Instant::now();
            write.write_all(sent.as_bytes()).await.unwrap();
            let dripping = tokio::spawn(async move {
                drip(&mut write, &dripped, gap).await;
                // Keep the write half (and so the connection) open.
                tokio::time::sleep(Duration::from_secs(30)).await;
            });
            let closed = until_closed(&mut read, since, limit + SLACK + SLACK).await;
            dripping.abort();
            (name, limit, answer, closed)
        }));
    }
    for task in tasks {
        let (name, limit, answer, closed) = task.await.unwrap();
        let (took, got) = closed.unwrap_or_else(|| panic!("{name}: still open"));
        assert!(took <= limit + SLACK, "{name}: closed after {took:?}");
        assert!(took >= limit.mul_f32(0.8), "{name}: closed early, {took:?}");
        let got = String::from_utf8_lossy(&got);
        assert!(got.starts_with(answer), "{name}: answered {got:?}");
    }
    let text = h.metrics().await;
    for (reason, n) in [
        ("first_byte_timeout", 1.0),
        ("header_timeout", 3.0),
        ("body_timeout", 2.0),
        ("h2_idle_timeout", 1.0),
    ] {
        let line = format!("qore_connections_closed_total{{reason=\"{reason}\"}}");
        assert_eq!(metric_in(&text, &line), n, "{reason} in\n{text}");
    }
    assert_eq!(metric_in(&text, "qore_connections_open "), 1.0, "{text}");
    assert!(metric_in(&text, "qore_connections_accepted_total ") >= 8.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_requests_are_answered_over_http1_and_h2c() {
    let h = Harness::start(chat_answer("hello there"), fast()).await;
    for stream in [false, true] {
        let (status, text) = h.chat(stream).await;
        assert_eq!(status, 200, "{text}");
        assert!(text.contains("hello there"), "{text}");
    }
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let url = format!("{}/v1/chat/completions", h.server.url());
    let response = h2.post(&url).body(chat_body(false)).send().await.unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    assert_eq!(response.status().as_u16(), 200);
    assert!(response.text().await.unwrap().contains("hello there"));
}

/// An endless upstream stream: `n` chunks of about 1 KiB, one a millisecond.
fn endless(n: usize) -> Reply {
    let text = "x".repeat(1000);
    let chunk = serde_json::json!({"id": "c", "object": "chat.completion.chunk", "created": 0,
        "model": "m", "choices": [{"index": 0, "delta": {"content": text},
        "finish_reason": null}]});
    let frame = format!("data: {chunk}\n\n");
    Reply::sse(frame.repeat(n)).with_pace(Duration::from_millis(1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_closed_and_its_upstream_cancelled() {
    let h = Harness::start(endless(100_000), fast()).await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut tcp = socket.connect(h.addr().parse().unwrap()).await.unwrap();
    let body = chat_body(true);
    let request = head("/v1/chat/completions", body.len()) + &body;
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut got = vec![0u8; 16 * 1024];
    let mut n = 0;
    while n < got.len() {
        let read = tcp.read(&mut got[n..]).await.unwrap();
        assert!(read > 0, "closed early");
        n += read;
    }
    assert!(got.starts_with(b"HTTP/1.1 200"));
    // Stop reading; the upstream goes on writing until the buffers are full.
    let stopped = Instant::now();
    let limit = fast().write_stall_timeout;
    while h.upstream.disconnects() == 0 {
        assert!(
            stopped.elapsed() < limit + Duration::from_secs(10),
            "the upstream was not cancelled"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        stopped.elapsed() >= limit,
        "cancelled before the stall limit"
    );
    let line = "qore_connections_closed_total{reason=\"write_stall\"}";
    assert_eq!(h.metric(line).await, 1.0);
    // What was buffered, then the end: the connection is closed.
    let closed = until_closed(&mut tcp, Instant::now(), Duration::from_secs(5)).await;
    assert!(closed.is_some(), "the stalled connection is still open");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_stream_that_outlives_every_limit_completes() {
    let frames: String = (0..5)
        .map(|i| {
            let chunk = serde_json::json!({"id": "c", "object": "chat.completion.chunk",
                "created": 0, "model": "m", "choices": [{"index": 0,
                "delta": {"content": format!("tick{i} ")}, "finish_reason": null}]});
            format!("data: {chunk}\n\n")
        })
        .collect();
    let end = serde_json::json!({"id": "c", "object": "chat.completion.chunk", "created": 0,
        "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    let body = format!("{frames}data: {end}\n\ndata: [DONE]\n\n");
    let reply = Reply::sse(body).with_pace(Duration::from_millis(1200));
    let h = Harness::start(reply, fast()).await;
    let url = format!("{}/v1/chat/completions", h.server.url());
    // HTTP/1.1, and h2c (where a request waiting for its first byte must not count as idle).
    let h2 = reqwest::Client::builder().http2_prior_knowledge();
    for client in [h.http.clone(), h2.build().unwrap()] {
        let started = Instant::now();
        let response = client.post(&url).body(chat_body(true)).send().await;
        let response = response.unwrap();
        let version = response.version();
        assert_eq!(response.status().as_u16(), 200, "{version:?}");
        let text = response.text().await.unwrap();
        for i in 0..5 {
            assert!(
                text.contains(&format!("tick{i} ")),
                "{version:?}: tick{i}: {text}"
            );
        }
        assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
        // Longer than each limit (1 to 1.5 s) several times over.
        assert!(started.elapsed() >= Duration::from_secs(6));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_cap_connections_wait_and_are_served_once_slow_ones_are_reaped() {
    let cap = 20;
    let limits = ListenSettings {
        max_connections: Some(cap),
        ..fast()
    };
    let h = Harness::start(chat_answer("hello there"), limits).await;
    let started = Instant::now();
    let mut silent = Vec::new();
    for _ in 0..3 * cap {
        silent.push(TcpStream::connect(h.addr()).await.unwrap());
    }
    // A real request behind them: it waits for a slot, then is served.
    let (status, text) = h.chat(false).await;
    assert_eq!(status, 200, "{text}");
    let mut last = Duration::ZERO;
    for mut tcp in silent {
        let closed = until_closed(&mut tcp, started, Duration::from_secs(15)).await;
        let (took, _) = closed.expect("a silent connection still open");
        last = last.max(took);
    }
    // Three waves of `cap`, each closed after 1 s: never all at once.
    assert!(
        last >= Duration::from_millis(2500),
        "all closed by {last:?}"
    );
    let text = h.metrics().await;
    assert_eq!(metric_in(&text, "qore_connections_cap "), cap as f64);
    assert!(
        metric_in(&text, "qore_connections_cap_waits_total ") >= 1.0,
        "{text}"
    );
    let line = "qore_connections_closed_total{reason=\"first_byte_timeout\"}";
    assert_eq!(metric_in(&text, line), (3 * cap) as f64, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_client_that_stops_reading_a_stream_has_its_upstream_cancelled() {
    let h = Harness::start(endless(100_000), fast()).await;
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let url = format!("{}/v1/chat/completions", h.server.url());
    let held = h2.post(&url).body(chat_body(true)).send().await.unwrap();
    assert_eq!(held.version(), reqwest::Version::HTTP_2);
    assert_eq!(held.status().as_u16(), 200);
    // Not read: HTTP/2's window fills, and the server has nowhere to write.
    let stopped = Instant::now();
    let limit = fast().write_stall_timeout;
    while h.upstream.disconnects() == 0 {
        assert!(
            stopped.elapsed() < limit + Duration::from_secs(10),
            "the upstream was not cancelled"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        stopped.elapsed() >= limit,
        "cancelled before the stall limit"
    );
    let line = "qore_connections_closed_total{reason=\"write_stall\"}";
    assert_eq!(h.metric(line).await, 1.0);
    // Only that stream: the same connection still answers.
    let healthz = format!("{}/healthz", h.server.url());
    let answer = h2.get(&healthz).send().await.unwrap();
    assert_eq!(answer.version(), reqwest::Version::HTTP_2);
    assert_eq!(answer.text().await.unwrap(), "ok\n");
    drop(held);
}
