//! Model listings and probes ([`Client::list_models`], [`Client::get`]) over loopback fail
//! the way streams do: a 2xx HTML page or plain text is named by its status, title or first
//! line, content type and size; a non-JSON error page of a listing likewise; the API key
//! never shows; a server that never accepts is named by the connect timeout in force.

use std::time::Duration;

use qore_client::{protocols, Client, ClientConfig, RetryPolicy, Timeouts};
use qore_core::{ErrorCategory, ErrorInfo};
use qore_testkit::{ReplayServer, Reply};

const KEY: &str = "sk-canary-1234";

fn client(url: String, connect: Duration) -> Client {
    let config = ClientConfig {
        api_key: Some(KEY.to_owned()),
        retry: RetryPolicy::none(),
        timeouts: Timeouts {
            connect,
            idle: Duration::from_secs(600),
        },
        ..ClientConfig::new(url)
    };
    Client::new(protocols::by_name("openai-chat").expect("protocol"), config).expect("client")
}

/// What each way of asking gives: the listing, or the probe of `/health`.
async fn ask(client: &Client, listing: bool) -> Result<(), ErrorInfo> {
    match listing {
        true => client.list_models().await.map(drop),
        false => client.get("/health").await.map(drop),
    }
}

fn assert_one_line_without_the_key(error: &ErrorInfo, case: &str) {
    let text = serde_json::to_string(error).expect("an error serializes");
    assert!(!text.contains(KEY), "{case}: {text}");
    assert!(
        !error.message.contains('\n') && error.message.chars().count() <= 280,
        "{case}: {}",
        error.message
    );
}

#[tokio::test]
async fn pages_and_text_are_named_and_the_key_never_shows() {
    let page = format!("<!DOCTYPE html><html><head><title>Sign in, {KEY}</title></head></html>");
    let text = format!("\n  Gateway says no to {KEY}\nmore\n");
    let html = ("content-type", "text/html; charset=UTF-8");
    let plain = ("content-type", "Text/Plain");
    // (status, header, body, listing or probe, what the message holds)
    let cases = [
        (200, html, &page, true, "HTTP 200 OK from"),
        (200, html, &page, false, "HTTP 200 OK from"),
        (200, plain, &text, true, "HTTP 200 OK from"),
        (200, plain, &text, false, "HTTP 200 OK from"),
        (502, html, &page, true, "HTTP 502 Bad Gateway from"),
    ];
    for (status, (name, value), body, listing, head) in cases {
        let case = format!("{status} {value} listing={listing}");
        let reply = Reply::new(status, body.clone()).with_header(name, value);
        let server = ReplayServer::start(vec![reply]).await.expect("server");
        let error = ask(&client(server.url(), Duration::from_secs(10)), listing)
            .await
            .expect_err(&case);
        assert_eq!(error.category, ErrorCategory::Provider, "{case}");
        assert_eq!(error.status(), Some(status), "{case}");
        let essence = value.to_ascii_lowercase();
        let essence = essence.split(';').next().unwrap_or_default();
        let quoted = match essence {
            "text/html" => "\"Sign in, [redacted]\"".to_owned(),
            _ => "\"Gateway says no to [redacted]\"".to_owned(),
        };
        let what = format!("{quoted} ({essence}, {} B)", body.len());
        assert!(error.message.starts_with(head), "{case}: {}", error.message);
        assert!(error.message.ends_with(&what), "{case}: {}", error.message);
        if status == 200 {
            assert!(error.message.contains("is not JSON"), "{case}");
        }
        assert_one_line_without_the_key(&error, &case);
    }
}

/// A listener whose accept queue is full: Linux drops further SYNs, so a connect hangs until
/// the client gives up (backlog 0 holds one connection, which the test keeps).
#[tokio::test]
async fn a_server_that_never_accepts_is_named_by_the_connect_timeout() {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .expect("bind");
    let listener = socket.listen(0).expect("listen");
    let addr = listener.local_addr().expect("address");
    let _held = tokio::net::TcpStream::connect(addr)
        .await
        .expect("the one connection the queue holds");
    let client = client(format!("http://{addr}/v1"), Duration::from_millis(300));
    for (listing, doing) in [(true, "listing models at"), (false, "GET")] {
        let error = ask(&client, listing).await.expect_err(doing);
        assert_eq!(error.category, ErrorCategory::Network, "{doing}");
        assert!(error.message.starts_with(doing), "{}", error.message);
        assert!(
            error
                .message
                .contains("no connection within the connect timeout (0.3 s)"),
            "{}",
            error.message
        );
        assert_one_line_without_the_key(&error, doing);
    }
    drop(listener);
}
