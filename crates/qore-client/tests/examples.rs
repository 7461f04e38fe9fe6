//! The examples a library user starts from, run against loopback servers: `stream_chat`
//! streams a recorded Anthropic answer, `tool_loop` runs its Rust tools under approval
//! against hand-made Chat Completions turns. The examples' functions are compiled in here
//! through `#[path]`, so the code a user reads is the code tested.

#[path = "../examples/tool_loop.rs"]
#[allow(dead_code)]
mod tool_loop_example;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use qore_client::tool_loop::{ApprovalDecision, ApprovalRequest, Approver, TurnOutcome};
use qore_testkit::chat::{chat_answer, chat_tool_call};
use qore_testkit::{load_cassette_file, reply_from_exchange, ReplayServer, Slicing};
use serde_json::Value;
use tool_loop_example::stream_chat::stream_chat;
use tool_loop_example::{run_tool_loop, Endpoint};

fn endpoint(protocol: &str, url: String) -> Endpoint {
    Endpoint {
        protocol: protocol.into(),
        url,
        model: "claude-sonnet-4-6".into(),
        api_key: Some("sk-test".into()),
    }
}

/// The text of every `text_delta` in a recorded Anthropic stream, read line by line.
fn recorded_text(body: &str) -> String {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .filter(|frame| frame["delta"]["type"] == "text_delta")
        .map(|frame| {
            frame["delta"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn stream_chat_prints_a_recorded_anthropic_answer_as_it_streams() {
    let Some(dir) = qore_testkit::fixtures_dir() else {
        eprintln!("no fixtures directory: the recorded stream is not replayed");
        return;
    };
    let root = dir.join("rig-cassettes");
    let cassette = load_cassette_file(
        &root,
        &root.join("anthropic/streaming/streaming_smoke.yaml"),
    )
    .expect("the cassette loads");
    let exchange = &cassette.exchanges[0];
    let server = ReplayServer::start(vec![reply_from_exchange(
        exchange,
        Slicing::Irregular { seed: 7, max: 13 },
    )])
    .await
    .unwrap();

    let mut printed = Vec::new();
    let message = stream_chat(
        &endpoint("anthropic", server.url()),
        "What is a solar eclipse?",
        &mut printed,
    )
    .await
    .expect("the answer streams");

    let expected = recorded_text(&exchange.response_body);
    assert!(expected.len() > 100, "the recording holds an answer");
    assert_eq!(String::from_utf8(printed).unwrap(), expected);
    assert_eq!(message.text(), expected);
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].path, "/v1/messages");
    assert_eq!(sent[0].header("x-api-key"), Some("sk-test"));
    let body = sent[0].json().unwrap();
    assert_eq!(
        body["messages"][0]["content"][0]["text"],
        "What is a solar eclipse?"
    );
}

/// Allows the first call it is asked about and refuses the rest, logging each request.
#[derive(Default)]
struct FirstOnly(Mutex<Vec<ApprovalRequest>>);

impl Approver for FirstOnly {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>> {
        let mut asked = self.0.lock().unwrap();
        asked.push(request.clone());
        let decision = match asked.len() {
            1 => ApprovalDecision::AllowOnce,
            _ => ApprovalDecision::Deny {
                reason: Some("not this one".into()),
            },
        };
        Box::pin(async move { decision })
    }
}

#[tokio::test]
async fn tool_loop_runs_the_rust_tools_and_asks_before_the_destructive_one() {
    let server = ReplayServer::start(vec![
        chat_tool_call("call_1", "count_words", r#"{"text": "buy oat milk"}"#),
        chat_tool_call("call_2", "save_note", r#"{"text": "buy oat milk"}"#),
        chat_tool_call("call_3", "save_note", r#"{"text": "sell the cow"}"#),
        chat_answer("Saved one note."),
    ])
    .await
    .unwrap();
    let notes = Arc::new(Mutex::new(Vec::new()));
    let approver = FirstOnly::default();

    let (outcome, history) = run_tool_loop(
        &endpoint("openai-chat", format!("{}/v1", server.url())),
        "Save 'buy oat milk'.",
        notes.clone(),
        &approver,
    )
    .await
    .expect("the loop starts");

    assert!(
        matches!(outcome, TurnOutcome::Finished { rounds: 3, .. }),
        "{outcome:?}"
    );
    assert_eq!(history.last().unwrap().text(), "Saved one note.");
    // Only the approved call ran; the reading tool was never put to the approver.
    assert_eq!(*notes.lock().unwrap(), vec!["buy oat milk".to_owned()]);
    let asked: Vec<(String, String)> = (approver.0.lock().unwrap().iter())
        .map(|r| (r.tool.clone(), r.arguments["text"].to_string()))
        .collect();
    assert_eq!(
        asked,
        vec![
            ("save_note".to_owned(), "\"buy oat milk\"".to_owned()),
            ("save_note".to_owned(), "\"sell the cow\"".to_owned()),
        ]
    );
    // Each result went back to the model in the next request.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let last_tool_message = |n: usize| {
        let body = requests[n].json().unwrap();
        let messages = body["messages"].as_array().unwrap().clone();
        let last = messages.last().unwrap().clone();
        assert_eq!(last["role"], "tool", "request {n}");
        last["content"].to_string()
    };
    assert!(
        last_tool_message(1).contains('3'),
        "{}",
        last_tool_message(1)
    );
    assert!(last_tool_message(2).contains("saved (note 1)"));
    assert!(last_tool_message(3).contains("not this one"));
    assert_eq!(
        requests[0].json().unwrap()["tools"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}
