//! The Chat Completions dialect against a real `qore_client::Client` over loopback: what the
//! client sends decodes to the history it was given, and what the dialect writes (a stream,
//! a whole body, a stream that fails after its first byte, an error envelope) reaches the
//! client as the same turn or the same error, through the real transport's framing and
//! end-of-body rules.

use qore_client::{
    protocols, CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions,
};
use qore_core::{
    ContentBlock, ErrorInfo, History, Message, MessageAssembler, ResponseEvent, Role, StopReason,
    StreamOutcome, ToolCallInput, ToolSpec, Usage,
};
use qore_serve::dialect::openai_chat::OpenAiChat;
use qore_serve::dialect::Dialect;
use qore_serve::{ReplyMeta, ServeError};
use qore_testkit::{ReplayServer, Reply, Slicing};
use serde_json::json;

fn meta() -> ReplyMeta {
    ReplyMeta {
        id: OpenAiChat.new_id(),
        model: "agent/coder".into(),
        created: 1_700_000_000,
        include_usage: true,
    }
}

fn history() -> History {
    History::from(vec![
        Message::system("be brief"),
        Message::user("what is 2 + 3?"),
        Message::new(
            Role::Assistant,
            vec![ContentBlock::tool_use("c1", "add", json!({"a": 2, "b": 3}))],
        ),
        Message::new(
            Role::User,
            vec![ContentBlock::tool_result("c1", "5", false)],
        ),
    ])
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "add".into(),
        description: "adds".into(),
        input_schema: json!({"type": "object"}),
    }]
}

/// Send the history and tools with a real client to a server answering `reply`; the
/// outcome, and the body the client sent.
async fn exchange(reply: Reply, stream: bool) -> (StreamOutcome, Vec<u8>, usize) {
    let server = ReplayServer::start(vec![reply]).await.unwrap();
    let config = ClientConfig::new(format!("{}/v1", server.url()));
    let client = Client::new(protocols::by_name("openai-chat").unwrap(), config).unwrap();
    let (history, tools) = (history(), tools());
    let options = RequestOptions {
        stream,
        ..RequestOptions::default()
    };
    let request = ChatRequest {
        model: "gpt-x",
        history: &history,
        tools: &tools,
        options: &options,
    };
    let outcome = client
        .stream(&request, CancellationToken::new())
        .finish()
        .await;
    let requests = server.requests();
    let body = requests.first().map(|r| r.body.clone()).unwrap_or_default();
    (outcome, body, requests.len())
}

fn events() -> Vec<ResponseEvent> {
    vec![
        ResponseEvent::ThinkingDelta {
            text: "the tool said 5".into(),
        },
        ResponseEvent::TextDelta {
            text: "2 + 3 = ".into(),
        },
        ResponseEvent::TextDelta { text: "5".into() },
        ResponseEvent::ToolCallStart {
            id: "c2".into(),
            name: "add".into(),
        },
        ResponseEvent::ToolCallArgsDelta {
            id: "c2".into(),
            delta: "{\"a\":5,".into(),
        },
        ResponseEvent::ToolCallArgsDelta {
            id: "c2".into(),
            delta: "\"b\":0}".into(),
        },
        ResponseEvent::ToolCallEnd {
            id: "c2".into(),
            input: ToolCallInput::parse("{\"a\":5,\"b\":0}"),
        },
        ResponseEvent::Usage {
            usage: Usage {
                input_tokens: Some(40),
                output_tokens: Some(12),
                ..Usage::default()
            },
        },
        ResponseEvent::Stop {
            reason: StopReason::ToolUse,
        },
    ]
}

fn fold(events: &[ResponseEvent]) -> StreamOutcome {
    let mut assembler = MessageAssembler::new();
    events.iter().for_each(|e| assembler.apply(e));
    assembler.finish()
}

fn encoded_stream(events: &[ResponseEvent], error: Option<&ServeError>) -> Vec<u8> {
    let mut encoder = OpenAiChat.encoder(&meta());
    let mut out = Vec::new();
    encoder.start(&mut out);
    events.iter().for_each(|e| encoder.event(e, &mut out));
    encoder.finish(&fold(events), error, &mut out);
    out
}

fn finished(outcome: StreamOutcome) -> (Message, Option<StopReason>, Usage) {
    match outcome {
        StreamOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => (message, stop_reason, usage),
        other => panic!("not finished: {other:?}"),
    }
}

#[tokio::test]
async fn what_the_client_sends_decodes_and_what_we_stream_reaches_it() {
    let events = events();
    let want = finished(fold(&events));
    for slicing in [Slicing::PerSseFrame, Slicing::Fixed(3)] {
        let reply = Reply::sse(encoded_stream(&events, None)).with_slicing(slicing);
        let (outcome, sent, _) = exchange(reply, true).await;
        assert_eq!(finished(outcome), want);
        let inbound = OpenAiChat.decode(&sent, &Default::default()).unwrap();
        assert_eq!(inbound.history, history());
        assert_eq!(inbound.tools, tools());
        assert!(inbound.stream && inbound.include_usage);
    }
}

#[tokio::test]
async fn a_whole_body_reaches_the_client_as_the_same_turn() {
    let events = events();
    let body = OpenAiChat.response(&meta(), &fold(&events));
    let reply = Reply::json(200, serde_json::to_vec(&body).unwrap());
    let (outcome, sent, _) = exchange(reply, false).await;
    assert_eq!(finished(outcome), finished(fold(&events)));
    assert!(
        !OpenAiChat
            .decode(&sent, &Default::default())
            .unwrap()
            .stream
    );
}

#[tokio::test]
async fn a_stream_that_fails_after_its_first_byte_fails_the_client_with_its_message() {
    let mut events = events();
    events.truncate(3);
    events.push(ResponseEvent::Error {
        error: ErrorInfo::provider("the upstream went away"),
    });
    let (outcome, _, requests) = exchange(Reply::sse(encoded_stream(&events, None)), true).await;
    match outcome {
        StreamOutcome::Failed { error, .. } => {
            assert!(
                error.message.contains("the upstream went away"),
                "{error:?}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(requests, 1, "an answer already under way is never retried");
}

#[tokio::test]
async fn an_error_envelope_reaches_the_client_with_status_and_message() {
    let error = ServeError::invalid("messages[1].content", "`input_audio` parts are refused");
    let body = serde_json::to_vec(&OpenAiChat.error_body(&error)).unwrap();
    let (outcome, _, _) = exchange(Reply::json(error.status, body), true).await;
    match outcome {
        StreamOutcome::Failed { error, .. } => {
            assert_eq!(error.status(), Some(400));
            assert!(
                error.message.contains("`input_audio` parts are refused"),
                "{error:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}
