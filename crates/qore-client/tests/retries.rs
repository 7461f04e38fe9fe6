//! Retries over real HTTP: "try later" answers and transport failures before any output are
//! sent again (honouring the server's wait); nothing is retried once an event reached the
//! consumer, nor a client error, nor a wait longer than the policy allows.

use std::time::{Duration, Instant};

mod support;

use futures_util::StreamExt as _;
use qore_client::{protocols, CancellationToken, Client, ClientConfig, RetryPolicy, Timeouts};
use qore_core::{ErrorCategory, ResponseEvent, StreamOutcome};
use qore_testkit::{ReplayServer, Reply};

const ANSWER: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n\
    data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

fn client(server: &ReplayServer, policy: RetryPolicy) -> Client {
    let config = ClientConfig {
        retry: policy,
        timeouts: Timeouts {
            idle: Duration::from_secs(10),
            ..Timeouts::default()
        },
        ..ClientConfig::new(format!("{}/v1", server.url()))
    };
    Client::new(protocols::by_name("openai-chat").unwrap(), config).unwrap()
}

fn quick(attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts: attempts,
        initial_delay: Duration::from_millis(5),
        max_delay: Duration::from_secs(2),
    }
}

async fn run(client: &Client) -> StreamOutcome {
    support::say_hi(client, CancellationToken::new())
        .finish()
        .await
}

fn overloaded(status: u16) -> Reply {
    Reply::json(
        status,
        r#"{"error":{"message":"busy","type":"overloaded"}}"#,
    )
}

fn text_of(outcome: &StreamOutcome) -> Option<&str> {
    match outcome {
        StreamOutcome::Finished { message, .. } => message.blocks.first()?.as_text(),
        _ => None,
    }
}

#[tokio::test]
async fn try_later_statuses_are_retried_until_an_answer_comes() {
    let server = ReplayServer::start(vec![
        overloaded(429),
        overloaded(503).with_header("retry-after-ms", "20"),
        overloaded(529),
        Reply::sse(ANSWER),
    ])
    .await
    .unwrap();
    let started = Instant::now();
    let outcome = run(&client(&server, quick(4))).await;
    assert_eq!(text_of(&outcome), Some("Hi"), "{outcome:?}");
    assert_eq!(server.requests().len(), 4);
    assert!(started.elapsed() >= Duration::from_millis(20));
}

#[tokio::test]
async fn attempts_are_bounded_and_the_last_error_is_kept() {
    let server = ReplayServer::start(vec![overloaded(500), overloaded(502), overloaded(504)])
        .await
        .unwrap();
    let outcome = run(&client(&server, quick(3))).await;
    let StreamOutcome::Failed { error, .. } = outcome else {
        panic!("not failed: {outcome:?}");
    };
    assert_eq!(server.requests().len(), 3);
    assert_eq!(error.status(), Some(504));
    assert!(
        error.message.contains("after 3 attempts"),
        "{}",
        error.message
    );
    assert!(error.provider.unwrap().body.unwrap().contains("busy"));
}

#[tokio::test]
async fn client_errors_and_overlong_waits_are_not_retried() {
    let server = ReplayServer::start(vec![overloaded(400)]).await.unwrap();
    let outcome = run(&client(&server, quick(4))).await;
    assert!(matches!(&outcome, StreamOutcome::Failed { error, .. } if error.status() == Some(400)));
    assert_eq!(server.requests().len(), 1);

    let server = ReplayServer::start(vec![overloaded(429).with_header("retry-after", "3600")])
        .await
        .unwrap();
    let started = Instant::now();
    let outcome = run(&client(&server, quick(4))).await;
    assert!(matches!(&outcome, StreamOutcome::Failed { error, .. } if error.status() == Some(429)));
    assert_eq!(server.requests().len(), 1);
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[tokio::test]
async fn a_connection_dropped_before_any_output_is_retried() {
    let server = ReplayServer::start(vec![
        Reply::hang_up(),
        Reply::sse(ANSWER).cut_after(10),
        Reply::sse(ANSWER),
    ])
    .await
    .unwrap();
    let outcome = run(&client(&server, quick(3))).await;
    assert_eq!(text_of(&outcome), Some("Hi"), "{outcome:?}");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn nothing_is_retried_once_output_was_delivered() {
    let cut = ANSWER
        .find("data: {\"choices\":[{\"index\":0,\"delta\":{},")
        .unwrap();
    let server = ReplayServer::start(vec![Reply::sse(ANSWER).cut_after(cut), Reply::sse(ANSWER)])
        .await
        .unwrap();
    let client = client(&server, quick(3));
    let mut stream = support::say_hi(&client, CancellationToken::new());
    let mut texts = Vec::new();
    while let Some(event) = stream.next().await {
        if let ResponseEvent::TextDelta { text } = event {
            texts.push(text.to_string());
        }
    }
    assert_eq!(texts, ["Hi"], "the delivered text is not repeated");
    let outcome = stream.outcome().cloned();
    assert!(
        matches!(&outcome, Some(StreamOutcome::Failed { error, .. }) if error.category == ErrorCategory::Network),
        "{outcome:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn cancelling_during_the_backoff_ends_at_once() {
    let server = ReplayServer::start(vec![overloaded(503).with_header("retry-after", "1")])
        .await
        .unwrap();
    let client = client(&server, quick(4));
    let cancel = CancellationToken::new();
    let stream = support::say_hi(&client, cancel.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let outcome = stream.finish().await;
    canceller.await.unwrap();
    assert!(
        matches!(outcome, StreamOutcome::Cancelled { .. }),
        "{outcome:?}"
    );
    assert!(started.elapsed() < Duration::from_millis(900));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn model_listing_is_retried_too() {
    let server = ReplayServer::start(vec![
        overloaded(503),
        Reply::json(200, r#"{"object":"list","data":[{"id":"m1"}]}"#),
    ])
    .await
    .unwrap();
    let models = client(&server, quick(3)).list_models().await.unwrap();
    assert_eq!(models.len(), 1);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn geminis_retry_info_in_the_body_is_honoured() {
    let body = r#"{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.2s"}]}}"#;
    let answer = "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hi\"}]},\"finishReason\":\"STOP\"}]}\n\n";
    let server = ReplayServer::start(vec![Reply::json(429, body), Reply::sse(answer)])
        .await
        .unwrap();
    let config = ClientConfig {
        retry: quick(3),
        ..ClientConfig::new(server.url())
    };
    let client = Client::new(protocols::by_name("gemini").unwrap(), config).unwrap();
    let started = Instant::now();
    let outcome = run(&client).await;
    assert_eq!(text_of(&outcome), Some("Hi"), "{outcome:?}");
    assert_eq!(server.requests().len(), 2);
    assert!(started.elapsed() >= Duration::from_millis(200));
}
