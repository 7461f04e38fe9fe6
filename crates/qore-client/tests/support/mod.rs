//! What the integration tests share: draining a response stream into its events and
//! outcome, the parts of a finished turn, the streamed text, the one request a loopback
//! server received, and the one-message chat the transport tests send. [`local`] adds what
//! the tests against the real local model server share.
//!
//! Every helper asserts (panics) rather than returning errors: it is part of the test that
//! calls it. Each test binary uses a subset, hence the `dead_code` allowance.

#![allow(dead_code)]

pub mod local;

use futures_util::StreamExt as _;
use qore_client::{CancellationToken, ChatRequest, Client, RequestOptions, ResponseStream};
use qore_core::{History, Message, ResponseEvent, StopReason, StreamOutcome, Usage};
use qore_testkit::{RecordedRequest, ReplayServer};

/// Every event of `stream`, then its outcome.
pub async fn drain(mut stream: ResponseStream) -> (Vec<ResponseEvent>, StreamOutcome) {
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
    (events, stream.finish().await)
}

/// The message, stop reason and usage of a finished turn; any other outcome fails the test,
/// showing the outcome and the `events` that led to it.
pub fn finished(
    outcome: StreamOutcome,
    events: &[ResponseEvent],
) -> (Message, Option<StopReason>, Usage) {
    match outcome {
        StreamOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => (message, stop_reason, usage),
        other => panic!("the turn did not finish: {other:?}\n{events:?}"),
    }
}

/// The text of every `TextDelta` event, in order.
pub fn text_deltas(events: &[ResponseEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            ResponseEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The server received exactly one request, `method path`; it is returned.
pub fn only_request(server: &ReplayServer, method: &str, path: &str) -> RecordedRequest {
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        (method, path)
    );
    requests[0].clone()
}

/// Stream the answer to a one-message history ("hi" to model `m`, default options); the
/// body is encoded before this returns.
pub fn say_hi(client: &Client, cancel: CancellationToken) -> ResponseStream {
    let history = History::from(vec![Message::user("hi")]);
    let options = RequestOptions::default();
    let request = ChatRequest {
        model: "m",
        history: &history,
        tools: &[],
        options: &options,
    };
    client.stream(&request, cancel)
}

/// One run of the tool loop with `registry` (run automatically), default limits and
/// options, on `history`.
pub async fn run_loop(
    client: &Client,
    registry: &mut qore_client::tool_loop::ToolRegistry,
    history: &mut History,
) -> qore_client::tool_loop::TurnOutcome {
    use qore_client::tool_loop::{ApprovalMode, ApprovalPolicy, LoopConfig, ToolLoopRunner};
    let mut policy = ApprovalPolicy::new(ApprovalMode::Auto);
    let mut runner = ToolLoopRunner {
        client,
        registry,
        policy: &mut policy,
        approver: &Nobody,
        config: LoopConfig::default(),
    };
    let options = RequestOptions::default();
    runner
        .run("m", history, &options, &CancellationToken::new(), |_| {})
        .await
}

/// An approver that is never asked (tests whose tools need no approval) and denies if it is.
pub struct Nobody;

impl qore_client::tool_loop::Approver for Nobody {
    fn decide<'a>(
        &'a self,
        _: &'a qore_client::tool_loop::ApprovalRequest,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = qore_client::tool_loop::ApprovalDecision> + Send + 'a>,
    > {
        Box::pin(async { qore_client::tool_loop::ApprovalDecision::Deny { reason: None } })
    }
}
