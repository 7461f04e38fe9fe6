//! HTTPS with a test CA: reqwest (h2 and HTTP/1.1 through ALPN) and curl get answers; a
//! certificate replaced on disk while a stream is open is served to new connections while
//! the open stream finishes; a connection that never completes a handshake is closed at
//! the handshake deadline.

mod listener;

use std::time::{Duration, Instant};

use listener::ca::TestCa;
use listener::{fast, metric_in, until_closed, Harness};
use qore_serve::listen::ListenSettings;
use qore_testkit::chat::chat_answer;
use qore_testkit::Reply;
use tokio::io::AsyncWriteExt as _;

/// A server with `leaf`'s certificate and `reply` upstream; its client trusts `ca`.
async fn tls_server(ca: &TestCa, files: qore_serve::listen::TlsFiles, reply: Reply) -> Harness {
    let limits = ListenSettings {
        tls: Some(files),
        ..fast()
    };
    let mut h = Harness::start(reply, limits).await;
    h.http = ca.http().build().unwrap();
    h
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_answers_reqwest_over_h2_and_http1_and_curl() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new();
    let leaf = ca.leaf(dir.path(), "a");
    let h = tls_server(&ca, leaf.files, chat_answer("hello there")).await;
    assert!(
        h.server.url().starts_with("https://127.0.0.1:"),
        "{}",
        h.server.url()
    );
    let url = format!("{}/v1/chat/completions", h.server.url());
    // (client, the HTTP version ALPN chose)
    let cases = [
        (ca.http().build().unwrap(), reqwest::Version::HTTP_2),
        (
            ca.http().http1_only().build().unwrap(),
            reqwest::Version::HTTP_11,
        ),
    ];
    for (client, version) in cases {
        let response = (client.post(&url))
            .body(listener::chat_body(false))
            .send()
            .await
            .unwrap();
        assert_eq!(response.version(), version);
        assert_eq!(response.status().as_u16(), 200);
        assert!(response.text().await.unwrap().contains("hello there"));
    }
    // A client that does not trust the CA is refused.
    let untrusting = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .build()
        .unwrap();
    assert!(untrusting.get(&url).send().await.is_err());
    let ca_file = dir.path().join("ca.pem");
    ca.write(&ca_file);
    let healthz = format!("{}/healthz", h.server.url());
    let curl = tokio::process::Command::new("curl")
        .args(["--silent", "--show-error", "--max-time", "10", "--cacert"])
        .arg(&ca_file)
        .arg(&healthz)
        .output()
        .await
        .expect("curl runs");
    let said = String::from_utf8_lossy(&curl.stdout);
    assert!(curl.status.success(), "curl: {curl:?}");
    assert_eq!(said, "ok\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_replaced_while_a_stream_is_open_reaches_new_connections_only() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new();
    let a = ca.leaf(dir.path(), "a");
    let b = ca.leaf(dir.path(), "b");
    let frames: String = (0..6)
        .map(|i| {
            let chunk = serde_json::json!({"id": "c", "object": "chat.completion.chunk",
                "created": 0, "model": "m", "choices": [{"index": 0,
                "delta": {"content": format!("tick{i} ")}, "finish_reason": null}]});
            format!("data: {chunk}\n\n")
        })
        .collect();
    let reply = Reply::sse(format!("{frames}data: [DONE]\n\n")).with_pace(Duration::from_secs(1));
    let h = tls_server(&ca, a.files.clone(), reply).await;
    let addr = h.addr();
    assert_eq!(ca.served(&addr).await, a.der);
    let url = format!("{}/v1/chat/completions", h.server.url());
    let mut stream = (h.http.post(&url))
        .body(listener::chat_body(true))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    let first = stream.chunk().await.unwrap().expect("a first chunk");
    assert!(!first.is_empty());
    // Replace the files (as certbot does: new files moved into place).
    for (from, to) in [(&b.files.cert, &a.files.cert), (&b.files.key, &a.files.key)] {
        let tmp = to.with_extension("new");
        std::fs::copy(from, &tmp).unwrap();
        std::fs::rename(&tmp, to).unwrap();
    }
    let replaced = Instant::now();
    while ca.served(&addr).await != b.der {
        assert!(
            replaced.elapsed() < Duration::from_secs(10),
            "still the old certificate"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The stream opened before the swap goes on to its end.
    let mut text = String::from_utf8_lossy(&first).into_owned();
    while let Some(chunk) = stream.chunk().await.unwrap() {
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    for i in 0..6 {
        assert!(
            text.contains(&format!("tick{i} ")),
            "tick{i} missing: {text}"
        );
    }
    assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");
    let metrics = h.metrics().await;
    assert_eq!(
        metric_in(&metrics, "qore_tls_reloads_total{result=\"ok\"}"),
        1.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_handshakes_is_closed_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new();
    let leaf = ca.leaf(dir.path(), "a");
    let h = tls_server(&ca, leaf.files, chat_answer("hello there")).await;
    let limit = fast().tls_handshake_timeout;
    // (what the client sends, the reason counted)
    let cases: [(&[u8], &str); 3] = [
        (b"", "tls_handshake_timeout"),
        // The first bytes of a ClientHello, then nothing.
        (b"\x16\x03\x01\x02\x00\x01", "tls_handshake_timeout"),
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "tls_handshake_failed"),
    ];
    for (sent, reason) in cases {
        let mut tcp = tokio::net::TcpStream::connect(h.addr()).await.unwrap();
        let since = Instant::now();
        tcp.write_all(sent).await.unwrap();
        let closed = until_closed(&mut tcp, since, limit + Duration::from_secs(3)).await;
        let (took, _) = closed.unwrap_or_else(|| panic!("{sent:?}: still open"));
        assert!(took <= limit + Duration::from_secs(1), "{sent:?}: {took:?}");
        if reason == "tls_handshake_timeout" {
            assert!(
                took >= limit.mul_f32(0.8),
                "{sent:?}: closed early, {took:?}"
            );
        }
    }
    let metrics = h.metrics().await;
    for (reason, n) in [
        ("tls_handshake_timeout", 2.0),
        ("tls_handshake_failed", 1.0),
    ] {
        let line = format!("qore_connections_closed_total{{reason=\"{reason}\"}}");
        assert_eq!(metric_in(&metrics, &line), n, "{reason}: {metrics}");
    }
}
