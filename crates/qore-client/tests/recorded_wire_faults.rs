//! Two streams from the field, recorded in the fixtures' format under
//! `tests/data/wire_faults/` and replayed through the real client over loopback, sliced
//! irregularly: GitHub Copilot's Responses endpoint, which changes `item_id` on every event
//! of one item, an Anthropic stream a proxy spliced, starting a second message (another id)
//! inside one still open, and an Anthropic stream repeating the `message_start` of the open
//! message (its own id), a duplicate that changes nothing. Expectations are computed from
//! the recorded bytes, never with the code under test.

mod support;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use qore_client::tool_loop::{ToolRegistry, TurnOutcome};
use qore_client::{protocols, CancellationToken, Client, ClientConfig, RetryPolicy};
use qore_core::{
    ContentBlock, ErrorCategory, History, Message, ResponseEvent, StreamOutcome, Tool, ToolFuture,
    ToolOutput, ToolSpec,
};
use qore_testkit::{parse_exchanges, reply_from_exchange, Exchange, ReplayServer, Slicing};
use serde_json::{json, Value};

fn recorded(name: &str) -> Exchange {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/wire_faults")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("recording");
    let mut exchanges = parse_exchanges(&text).expect("a cassette");
    assert_eq!(exchanges.len(), 1, "{name}");
    exchanges.remove(0)
}

/// The `data:` payloads of the recorded stream, as JSON.
fn recorded_events(ex: &Exchange) -> Vec<Value> {
    ex.response_body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).expect("recorded JSON"))
        .collect()
}

/// Every `field` of the recorded events of type `kind`, in order.
fn fields<'a>(events: &'a [Value], kind: &str, field: &str) -> Vec<&'a str> {
    events
        .iter()
        .filter(|e| e["type"] == kind)
        .filter_map(|e| e[field].as_str())
        .collect()
}

/// The message the recordings answer: their text, then their one call (`call` names it by
/// `name` and by its `id_field`) with the recorded `arguments`.
fn text_and_call(text: &str, call: &Value, id_field: &str, arguments: &Value) -> Vec<ContentBlock> {
    vec![
        ContentBlock::text(text),
        ContentBlock::ToolUse {
            id: call[id_field].as_str().expect("recorded id").to_owned(),
            name: call["name"].as_str().expect("recorded name").to_owned(),
            input: arguments.clone(),
            raw_input: None,
            signature: None,
        },
    ]
}

fn client(server: &ReplayServer, protocol: &str) -> Client {
    let config = ClientConfig {
        retry: RetryPolicy::none(),
        ..ClientConfig::new(server.url())
    };
    Client::new(protocols::by_name(protocol).expect("protocol"), config).expect("client")
}

async fn replay(ex: &Exchange, protocol: &str, seed: u64) -> (Vec<ResponseEvent>, StreamOutcome) {
    let reply = reply_from_exchange(ex, Slicing::Irregular { seed, max: 7 });
    let server = ReplayServer::start(vec![reply]).await.expect("server");
    let client = client(&server, protocol);
    support::drain(support::say_hi(&client, CancellationToken::new())).await
}

#[tokio::test]
async fn rotating_item_ids_give_each_delta_once() {
    let ex = recorded("openai_responses_rotating_item_ids.yaml");
    let wire = recorded_events(&ex);
    let deltas = fields(&wire, "response.output_text.delta", "delta");
    let ids = fields(&wire, "response.output_text.delta", "item_id");
    let distinct: std::collections::HashSet<&&str> = ids.iter().collect();
    assert_eq!(distinct.len(), deltas.len(), "the recording rotates ids");
    let text: String = deltas.concat();
    assert_eq!(text.chars().count(), 138);
    let arguments: String =
        fields(&wire, "response.function_call_arguments.delta", "delta").concat();
    let arguments: Value = serde_json::from_str(&arguments).expect("recorded arguments");
    let added = wire
        .iter()
        .find(|e| e["type"] == "response.output_item.added" && e["item"]["type"] == "function_call")
        .expect("a call");

    for seed in 1..=4 {
        let (events, outcome) = replay(&ex, "openai-responses", seed).await;
        let streamed: String = events
            .iter()
            .filter_map(|e| match e {
                ResponseEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(streamed, text, "seed {seed}: the text is its deltas, once");
        let StreamOutcome::Finished { message, .. } = outcome else {
            panic!("seed {seed}: {outcome:?}");
        };
        let expected = text_and_call(&text, &added["item"], "call_id", &arguments);
        assert_eq!(message.blocks, expected, "seed {seed}");
    }
}

/// The `message.id` of every recorded `message_start`, in order.
fn message_ids(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .filter(|e| e["type"] == "message_start")
        .filter_map(|e| e["message"]["id"].as_str())
        .collect()
}

#[tokio::test]
async fn a_repeated_anthropic_message_start_is_a_duplicate_and_the_answer_completes() {
    let ex = recorded("anthropic_repeated_message_start.yaml");
    let wire = recorded_events(&ex);
    let ids = message_ids(&wire);
    assert_eq!(ids.len(), 2, "the recording repeats message_start");
    assert_eq!(ids[0], ids[1], "of the open message");
    let repeat = wire.iter().rposition(|e| e["type"] == "message_start");
    assert!(repeat < wire.iter().position(|e| e["type"] == "message_stop"));
    let text: String = wire
        .iter()
        .filter_map(|e| e["delta"]["text"].as_str())
        .collect();
    let arguments: String = wire
        .iter()
        .filter_map(|e| e["delta"]["partial_json"].as_str())
        .collect();
    let arguments: Value = serde_json::from_str(&arguments).expect("recorded arguments");
    let call = wire
        .iter()
        .find(|e| e["content_block"]["type"] == "tool_use")
        .expect("a call");
    // Usage comes from the first message_start and each message_delta, never the repeat.
    let usages = 1 + wire.iter().filter(|e| e["type"] == "message_delta").count();

    for seed in 1..=4 {
        let (events, outcome) = replay(&ex, "anthropic", seed).await;
        let starts: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                ResponseEvent::MessageStart { id, .. } => Some(id.as_deref()),
                _ => None,
            })
            .collect();
        assert_eq!(starts, vec![Some(ids[0])], "seed {seed}: {events:?}");
        let usage_events = events
            .iter()
            .filter(|e| matches!(e, ResponseEvent::Usage { .. }))
            .count();
        assert_eq!(usage_events, usages, "seed {seed}: {events:?}");
        let StreamOutcome::Finished { message, .. } = outcome else {
            panic!("seed {seed}: not finished: {outcome:?}");
        };
        let expected = text_and_call(&text, &call["content_block"], "id", &arguments);
        assert_eq!(message.blocks, expected, "seed {seed}");
    }
}

/// A `read_file` that counts its calls.
struct ReadFile(ToolSpec, Arc<AtomicUsize>);

impl Tool for ReadFile {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn call(&self, _: Value, _: CancellationToken) -> ToolFuture {
        self.1.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { ToolOutput::text("fn main() {}") })
    }
}

#[tokio::test]
async fn a_spliced_anthropic_stream_fails_without_inventing_a_tool_call() {
    let ex = recorded("anthropic_spliced_message_start.yaml");
    let wire = recorded_events(&ex);
    let starts = wire.iter().filter(|e| e["type"] == "message_start").count();
    let first_stop = wire.iter().position(|e| e["type"] == "message_stop");
    let second_start = wire.iter().rposition(|e| e["type"] == "message_start");
    assert_eq!(starts, 2, "the recording splices a second message");
    assert!(second_start < first_stop, "inside the first one");
    let ids = message_ids(&wire);
    assert_ne!(ids[0], ids[1], "of another id");

    for seed in 1..=4 {
        let (events, outcome) = replay(&ex, "anthropic", seed).await;
        let ends = events
            .iter()
            .filter(|e| matches!(e, ResponseEvent::ToolCallEnd { .. }))
            .count();
        assert_eq!(ends, 0, "seed {seed}: a tool call made up: {events:?}");
        let StreamOutcome::Failed { error, .. } = outcome else {
            panic!("seed {seed}: not a failure: {outcome:?}");
        };
        assert_eq!(error.category, ErrorCategory::Provider, "seed {seed}");
        assert!(
            error.message.contains("second message"),
            "{}",
            error.message
        );
        assert!(!error.message.contains('\n') && error.message.chars().count() < 300);
    }

    // In the tool loop: the turn fails, no tool runs, history is untouched.
    let calls = Arc::new(AtomicUsize::new(0));
    let spec = ToolSpec {
        name: "read_file".into(),
        description: "Read a file of the project.".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    };
    let mut registry = ToolRegistry::new();
    registry
        .add(Arc::new(ReadFile(spec, Arc::clone(&calls))))
        .expect("tool");
    let server = ReplayServer::start(vec![reply_from_exchange(&ex, Slicing::PerSseFrame)])
        .await
        .expect("server");
    let client = client(&server, "anthropic");
    let before = History::from(vec![Message::user("hi")]);
    let mut history = before.clone();
    let outcome = support::run_loop(&client, &mut registry, &mut history).await;
    assert!(matches!(outcome, TurnOutcome::Failed { .. }), "{outcome:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 0, "a tool ran");
    assert_eq!(history, before);
}
