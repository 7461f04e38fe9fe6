//! Round trips through the ReplayServer with a raw TCP client.

mod support;

use std::time::Duration;

use qore_testkit::{ReplayServer, Reply, Slicing};
use support::Client;

/// 300 SSE frames of varying sizes, some with CRLF line endings.
fn sse_body() -> (Vec<u8>, usize) {
    let mut body = Vec::new();
    let frames = 300;
    for i in 0..frames {
        let pad = "x".repeat(i * 7 % 113);
        if i % 5 == 0 {
            body.extend_from_slice(
                format!("event: e{i}\r\ndata: {{\"i\":{i},\"p\":\"{pad}\"}}\r\n\r\n").as_bytes(),
            );
        } else {
            body.extend_from_slice(format!("data: {{\"i\":{i},\"p\":\"{pad}\"}}\n\n").as_bytes());
        }
    }
    (body, frames)
}

#[tokio::test]
async fn every_slicing_mode_round_trips() {
    let (body, frames) = sse_body();
    let modes = vec![
        Slicing::Whole,
        Slicing::Irregular { seed: 7, max: 17 },
        Slicing::Fixed(1),
        Slicing::Fixed(100),
        Slicing::PerSseFrame,
        Slicing::Boundaries(vec![1, 2, 3, 500, 501, body.len() - 1]),
    ];
    for mode in modes {
        let reply = Reply::sse(body.clone()).with_slicing(mode.clone());
        let server = ReplayServer::start(vec![reply]).await.expect("start");
        let mut client = Client::connect(server.addr()).await;
        let resp = client.get("/v1/messages?x=1").await;
        assert_eq!(resp.status, 200, "{mode:?}");
        assert_eq!(resp.header("content-type"), Some("text/event-stream"));
        assert_eq!(resp.body(), body, "{mode:?}");
        match &mode {
            Slicing::Whole => {
                assert!(!resp.chunked);
                assert_eq!(
                    resp.header("content-length"),
                    Some(body.len().to_string().as_str())
                );
            }
            Slicing::PerSseFrame => assert_eq!(resp.chunks.len(), frames),
            Slicing::Fixed(1) => assert_eq!(resp.chunks.len(), body.len()),
            Slicing::Boundaries(_) => {
                let lens: Vec<usize> = resp.chunks.iter().map(Vec::len).collect();
                assert_eq!(&lens[..4], &[1, 1, 1, 497]);
                assert_eq!(resp.chunks.len(), 7);
            }
            Slicing::Irregular { max, .. } => {
                assert!(resp.chunks.iter().all(|c| !c.is_empty() && c.len() <= *max));
            }
            Slicing::Fixed(_) => {}
        }
        let reqs = server.requests();
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].method, "GET");
        assert_eq!(reqs[0].path, "/v1/messages?x=1");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_serves_replies_in_order_then_500() {
    let server = ReplayServer::start(vec![
        Reply::json(200, r#"{"n":1}"#),
        Reply::sse("data: 2\n\n").with_slicing(Slicing::Fixed(3)),
    ])
    .await
    .expect("start");
    let mut client = Client::connect(server.addr()).await;
    client
        .send(
            "POST",
            "/v1/chat/completions",
            &[("content-type", "application/json")],
            br#"{"a":1}"#,
        )
        .await;
    let first = client.read_response().await;
    assert_eq!((first.status, first.body()), (200, br#"{"n":1}"#.to_vec()));
    let second = client.get("/second").await; // same connection
    assert_eq!(second.body(), b"data: 2\n\n");
    assert_eq!(second.chunks.len(), 3);
    let third = client.get("/third").await;
    assert_eq!(third.status, 500);
    let err: serde_json::Value = serde_json::from_slice(&third.body()).expect("json error body");
    assert_eq!(err["error"]["type"], "replay_exhausted");
    assert!(err["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("/third"));

    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].body, br#"{"a":1}"#);
    assert_eq!(reqs[0].json(), Some(serde_json::json!({"a": 1})));
    assert_eq!(reqs[0].header("Content-Type"), Some("application/json"));
    assert_eq!(reqs[1].path, "/second");
    assert_eq!(server.disconnects(), 0);
}

#[tokio::test]
async fn cycling_replies_start_over_and_taken_requests_are_forgotten() {
    assert!(ReplayServer::start_cycling(Vec::new()).await.is_err());
    let server = ReplayServer::start_cycling(vec![Reply::new(200, "a"), Reply::new(201, "b")])
        .await
        .expect("start");
    let mut client = Client::connect(server.addr()).await;
    let mut seen = Vec::new();
    for n in 0..5 {
        let r = client.get(&format!("/{n}")).await;
        seen.push((r.status, r.body()));
    }
    let (a, b) = ((200, b"a".to_vec()), (201, b"b".to_vec()));
    assert_eq!(seen, [a.clone(), b.clone(), a.clone(), b, a]);
    let taken = server.take_requests();
    let paths: Vec<&str> = taken.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/0", "/1", "/2", "/3", "/4"]);
    assert!(server.requests().is_empty());
    let r = client.get("/5").await;
    assert_eq!(r.status, 201, "the cycle goes on after take_requests");
    assert_eq!(server.take_requests().len(), 1);
}

#[tokio::test]
async fn replies_are_shared_across_connections_and_close_is_honoured() {
    let server = ReplayServer::start(vec![Reply::new(200, "a"), Reply::new(201, "b")])
        .await
        .expect("start");
    let mut c1 = Client::connect(server.addr()).await;
    c1.send("GET", "/", &[("connection", "close")], b"").await;
    let r1 = c1.read_response().await;
    assert_eq!(r1.header("connection"), Some("close"));
    assert_eq!(r1.body(), b"a");
    assert!(
        !c1.fill().await,
        "server must close after connection: close"
    );
    let mut c2 = Client::connect(server.addr()).await;
    let r2 = c2.get("/").await;
    assert_eq!((r2.status, r2.body()), (201, b"b".to_vec()));
}

#[tokio::test]
async fn chunked_request_bodies_are_decoded() {
    let server = ReplayServer::start(vec![Reply::new(200, "ok")])
        .await
        .expect("start");
    let mut c = Client::connect(server.addr()).await;
    use tokio::io::AsyncWriteExt;
    c.stream
        .write_all(b"POST /x HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n")
        .await
        .expect("write");
    assert_eq!(c.read_response().await.body(), b"ok");
    assert_eq!(server.requests()[0].body, b"abcde");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_disconnect_mid_body_is_counted() {
    let body = vec![b'z'; 32 << 20];
    let server =
        ReplayServer::start_repeating(Reply::new(200, body).with_slicing(Slicing::Fixed(16384)))
            .await
            .expect("start");
    let mut c = Client::connect(server.addr()).await;
    c.send("GET", "/big", &[], b"").await;
    let (status, _) = c.read_head().await;
    assert_eq!(status, 200);
    for _ in 0..3 {
        assert!(c.fill().await);
    }
    drop(c);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while server.disconnects() == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "disconnect never counted"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(server.disconnects(), 1);
    // The server is still alive and serves the repeating reply again.
    let mut c2 = Client::connect(server.addr()).await;
    assert_eq!(c2.get("/again").await.body().len(), 32 << 20);
}

#[tokio::test]
async fn head_and_dropped_server() {
    let server = ReplayServer::start_repeating(Reply::sse("data: 1\n\n"))
        .await
        .expect("start");
    let addr = server.addr();
    assert_eq!(server.url(), format!("http://{addr}"));
    let mut c = Client::connect(addr).await;
    c.send("HEAD", "/", &[], b"").await;
    let (status, _) = c.read_head().await;
    assert_eq!(status, 200);
    let r = c.get("/").await; // nothing from the HEAD body is left in the stream
    assert_eq!(r.body(), b"data: 1\n\n");
    drop(server);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "listener must be gone"
    );
}

/// Send a raw GET and read until the connection ends: the bytes, and how it ended.
async fn read_until_end(stream: &mut tokio::net::TcpStream) -> (Vec<u8>, std::io::Result<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let request = b"GET / HTTP/1.1\r\nhost: x\r\n\r\n";
    stream.write_all(request).await.expect("request");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) => return (got, Ok(())),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(err) => return (got, Err(err)),
        }
    }
}

#[tokio::test]
async fn replies_break_off_by_closing_or_resetting_after_n_bytes() {
    for (reset, reply) in [
        (false, Reply::sse("data: 12345678\n\n").cut_after(5)),
        (true, Reply::sse("data: 12345678\n\n").reset_after(5)),
    ] {
        let server = ReplayServer::start(vec![reply]).await.expect("start");
        let mut stream = tokio::net::TcpStream::connect(server.addr())
            .await
            .expect("connect");
        let (got, end) = read_until_end(&mut stream).await;
        let text = String::from_utf8_lossy(&got);
        if reset {
            let kind = end.expect_err("a reset").kind();
            assert_eq!(kind, std::io::ErrorKind::ConnectionReset, "{text}");
        } else {
            end.expect("a clean close");
            assert!(text.ends_with("\r\n5\r\ndata:\r\n"), "{text:?}");
        }
        assert!(!text.contains("\r\n0\r\n\r\n"), "no last chunk: {text:?}");
    }
}

#[tokio::test]
async fn a_stalled_reply_keeps_the_connection_until_the_client_leaves() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let reply = Reply::sse("data: 12345678\n\n").stall_after(5);
    let server = ReplayServer::start(vec![reply]).await.expect("start");
    let mut stream = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    stream
        .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .expect("request");
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while !got.ends_with(b"5\r\ndata:\r\n") {
        let n = stream.read(&mut buf).await.expect("read");
        assert!(n > 0, "closed: {:?}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    // Still open: the server counts the disconnect only once the client has gone.
    assert_eq!(server.disconnects(), 0);
    drop(stream);
    while server.disconnects() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
