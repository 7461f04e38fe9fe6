//! Cancelling or dropping a stream mid-way over real HTTP: the outcome is `Cancelled`, no
//! half-built message is produced, and the connection is closed.

use std::time::Duration;

mod support;

use futures_util::StreamExt as _;
use qore_client::{protocols, CancellationToken, Client, ClientConfig, Timeouts};
use qore_core::{ResponseEvent, StreamOutcome};
use qore_testkit::{ReplayServer, Reply, Slicing};

/// A long streamed answer: `n` text deltas, no end.
fn endless_body(n: usize) -> Vec<u8> {
    let mut body = Vec::new();
    for i in 0..n {
        body.extend_from_slice(
            format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{i} \"}}}}]}}\n\n"
            )
            .as_bytes(),
        );
    }
    body
}

fn client(url: &str, idle: Duration) -> Client {
    let config = ClientConfig {
        timeouts: Timeouts {
            idle,
            ..Timeouts::default()
        },
        ..ClientConfig::new(format!("{url}/v1"))
    };
    Client::new(protocols::by_name("openai-chat").unwrap(), config).unwrap()
}

/// A server streaming a long answer, one HTTP chunk per event.
async fn endless_server() -> ReplayServer {
    let reply = Reply::sse(endless_body(200_000)).with_slicing(Slicing::PerSseFrame);
    ReplayServer::start(vec![reply]).await.unwrap()
}

/// Give the server a moment to notice the client went away.
async fn wait_for_disconnect(server: &ReplayServer) {
    for _ in 0..100 {
        if server.disconnects() > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_cancelled_stream_ends_cancelled_and_closes_the_connection() {
    let server = endless_server().await;
    let client = client(&server.url(), Duration::from_secs(30));
    let cancel = CancellationToken::new();
    let mut stream = support::say_hi(&client, cancel.clone());
    let mut seen = 0;
    while let Some(event) = stream.next().await {
        if matches!(event, ResponseEvent::TextDelta { .. }) {
            seen += 1;
            if seen == 10 {
                cancel.cancel();
            }
        }
    }
    assert_eq!(seen, 10, "no event after the cancel");
    assert!(matches!(
        stream.outcome(),
        Some(StreamOutcome::Cancelled { .. })
    ));
    drop(stream);
    wait_for_disconnect(&server).await;
    assert_eq!(server.disconnects(), 1, "the server saw the client go away");
}

#[tokio::test]
async fn dropping_a_stream_closes_the_connection() {
    let server = endless_server().await;
    let client = client(&server.url(), Duration::from_secs(30));
    let mut stream = support::say_hi(&client, CancellationToken::new());
    assert!(stream.next().await.is_some());
    drop(stream);
    wait_for_disconnect(&server).await;
    assert_eq!(server.disconnects(), 1);
}

#[tokio::test]
async fn a_cancel_before_the_response_head_is_cancelled_too() {
    // Nothing answers on this listener: the request waits for a head that never comes.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let client = client(&url, Duration::from_secs(30));
    let cancel = CancellationToken::new();
    let stream = support::say_hi(&client, cancel.clone());
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    assert!(matches!(
        stream.finish().await,
        StreamOutcome::Cancelled { .. }
    ));
    drop(listener);
}

#[tokio::test]
async fn silence_longer_than_the_idle_timeout_fails_as_network() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let client = client(&url, Duration::from_millis(300));
    let StreamOutcome::Failed { error, .. } = support::say_hi(&client, CancellationToken::new())
        .finish()
        .await
    else {
        panic!("expected an idle-timeout failure");
    };
    assert_eq!(error.category, qore_core::ErrorCategory::Network);
    assert!(error.message.contains("idle timeout"), "{}", error.message);
    drop(listener);
}

/// A server that answers with the response head at once, then writes `events` SSE events
/// `gap` apart (each its own HTTP chunk) and, unless `stall`, the final chunk.
async fn paced_server(events: usize, gap: Duration, stall: bool) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = vec![0u8; 64 * 1024];
        let _ = socket.read(&mut request).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                    transfer-encoding: chunked\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        for i in 0..events {
            tokio::time::sleep(gap).await;
            let event = format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{i} \"}}}}]}}\n\n"
            );
            let chunk = format!("{:x}\r\n{event}\r\n", event.len());
            if socket.write_all(chunk.as_bytes()).await.is_err() {
                return;
            }
        }
        if stall {
            // Hold the connection open, silent.
            tokio::time::sleep(Duration::from_secs(60)).await;
            return;
        }
        let end = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
                   data: [DONE]\n\n";
        let chunk = format!("{:x}\r\n{end}\r\n0\r\n\r\n", end.len());
        let _ = socket.write_all(chunk.as_bytes()).await;
    });
    url
}

#[tokio::test]
async fn a_slow_steady_stream_outlasts_the_idle_timeout() {
    // Ten gaps of a third of the idle time: the whole answer takes over three idle periods,
    // no single silence reaches one.
    let idle = Duration::from_millis(300);
    let url = paced_server(10, idle / 3, false).await;
    let outcome = support::say_hi(&client(&url, idle), CancellationToken::new())
        .finish()
        .await;
    let StreamOutcome::Finished { message, .. } = outcome else {
        panic!("expected a finished turn, got {outcome:?}");
    };
    assert_eq!(
        message.text(),
        (0..10).map(|i| format!("w{i} ")).collect::<String>()
    );
}

#[tokio::test]
async fn silence_after_some_events_fails_as_network_and_not_early() {
    let idle = Duration::from_millis(300);
    let url = paced_server(3, Duration::from_millis(10), true).await;
    let mut stream = support::say_hi(&client(&url, idle), CancellationToken::new());
    let mut deltas = 0;
    let mut last_delta = std::time::Instant::now();
    let error = loop {
        match stream.next().await {
            Some(ResponseEvent::TextDelta { .. }) => {
                deltas += 1;
                last_delta = std::time::Instant::now();
            }
            Some(ResponseEvent::Error { error }) => break error,
            Some(_) => {}
            None => panic!("the stream ended without an error"),
        }
    };
    assert_eq!(deltas, 3);
    assert!(
        last_delta.elapsed() >= idle,
        "failed {:?} after the last delta",
        last_delta.elapsed()
    );
    assert_eq!(error.category, qore_core::ErrorCategory::Network);
    assert!(error.message.contains("idle timeout"), "{}", error.message);
}
