//! A 2xx answer with nothing in it is a clear provider error, never an empty successful
//! turn, on every wire and whether or not the answer was streamed: an empty body, a blank
//! one, or an event stream that ends without a single event. (llama-cpp-python's server
//! answers a streamed request with tools and `tool_choice: "auto"` with an empty 200.)
//! Nothing is retried: the same request would get the same nothing.

use qore_client::{
    protocols, CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions,
};
use qore_core::{ErrorCategory, ErrorInfo, History, Message, StreamOutcome};
use qore_testkit::{ReplayServer, Reply};

async fn outcome(protocol: &str, reply: Reply, stream: bool) -> (StreamOutcome, ReplayServer) {
    let server = ReplayServer::start_repeating(reply).await.unwrap();
    let client = Client::new(
        protocols::by_name(protocol).unwrap(),
        ClientConfig::new(format!("{}/v1", server.url())),
    )
    .unwrap();
    let history = History::from(vec![Message::user("hi")]);
    let options = RequestOptions {
        stream,
        ..RequestOptions::default()
    };
    let request = ChatRequest {
        model: "m",
        history: &history,
        tools: &[],
        options: &options,
    };
    let outcome = client
        .stream(&request, CancellationToken::new())
        .finish()
        .await;
    (outcome, server)
}

fn assert_empty_response_error(outcome: &StreamOutcome, server: &ReplayServer, case: &str) {
    let error: &ErrorInfo = match outcome {
        StreamOutcome::Failed { error, .. } => error,
        other => panic!("{case}: not a failure: {other:?}"),
    };
    assert_eq!(error.category, ErrorCategory::Provider, "{case}: {error:?}");
    assert!(
        error.message.contains("empty response"),
        "{case}: {}",
        error.message
    );
    assert_eq!(error.status(), Some(200), "{case}: {error:?}");
    assert_eq!(server.requests().len(), 1, "{case}: retried");
}

fn empty_replies() -> Vec<(&'static str, Reply)> {
    vec![
        ("empty event stream", Reply::sse("")),
        ("comments only", Reply::sse(": ping\n\n: ping\n\n")),
        ("empty JSON body", Reply::json(200, "")),
        ("blank JSON body", Reply::json(200, " \r\n")),
        ("empty body, no content type", Reply::new(200, "")),
    ]
}

#[tokio::test]
async fn an_empty_2xx_answer_is_a_provider_error_on_every_wire() {
    for protocol in [
        "openai-chat",
        "openai-responses",
        "anthropic",
        "gemini",
        "ollama",
        "llamacpp",
        "mistral",
    ] {
        for stream in [true, false] {
            for (what, reply) in empty_replies() {
                if protocol == "ollama" && what == "comments only" {
                    continue; // SSE comments are not blank lines of NDJSON
                }
                let case = format!("{protocol}, stream={stream}, {what}");
                let (outcome, server) = outcome(protocol, reply, stream).await;
                assert_empty_response_error(&outcome, &server, &case);
            }
        }
    }
}

#[tokio::test]
async fn a_stream_with_events_but_no_end_is_still_an_incomplete_stream() {
    // Not "empty": something came, so the existing incomplete-stream error stands.
    let reply =
        Reply::sse("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n");
    let (outcome, _server) = outcome("openai-chat", reply, true).await;
    match outcome {
        StreamOutcome::Failed { error, .. } => {
            assert!(!error.message.contains("empty response"), "{error:?}")
        }
        other => panic!("{other:?}"),
    }
}
