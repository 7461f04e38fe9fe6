//! The tool loop against recorded multi-exchange tool sessions (`rig-cassettes`, see
//! `/work/shared/fixtures/README.md`), at least one per protocol.
//!
//! For each session: the first recorded request gives the conversation, the tool definitions
//! and the request options; tools are registered under the recorded names and answer with the
//! results read from the recorded continuation requests; the recorded responses are replayed
//! in order from a loopback [`ReplayServer`] and the loop runs to the end. Then every
//! continuation the loop sent must carry each tool call of the previous turn (same ids where
//! the wire has ids, names, arguments) with its result, in the order the recording has them,
//! the thinking signatures the provider sent (where the recording sent them back), no call
//! without its result, and the previous request's bytes as its prefix.
//!
//! The expectations come from the recorded bytes: the recorded continuations are what the
//! provider accepted after those very responses.
//!
//! Shared by `tool_loop_recorded.rs` (the codecs' own encoders) and `qore-agents`'
//! `templated_recorded.rs` (bundled agent profiles render every request): [`replay_session`]
//! takes the client to run with.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::support::*;
use qore_client::tool_loop::{ApprovalMode, ApprovalPolicy, TurnOutcome};
use qore_client::{CancellationToken, RequestOptions};
use qore_core::{ContentBlock, History, Message, Role, Tool, ToolOutput};
use qore_testkit::{
    fixtures_dir, load_cassette_file, reply_from_exchange, Exchange, ReplayServer, Slicing,
};
use serde_json::{Map, Value};

/// Print past the test harness's capture, so every run shows what was replayed.
#[macro_export]
macro_rules! report {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// The rig-cassettes directory, or `None` (the test is skipped, loudly) without fixtures.
fn cassettes() -> Option<PathBuf> {
    let dir = fixtures_dir()?.join("rig-cassettes");
    dir.is_dir().then_some(dir)
}

fn load(root: &std::path::Path, name: &str) -> Vec<Exchange> {
    let path = root.join(format!("{name}.yaml"));
    load_cassette_file(root, &path)
        .unwrap_or_else(|e| panic!("{e}"))
        .exchanges
}

/// The top-level fields each wire's encoder writes itself; the others of the recorded first
/// request are passed as extra fields.
fn encoder_fields(wire: Wire) -> &'static [&'static str] {
    match wire {
        Wire::OpenAiChat | Wire::LlamaCpp | Wire::Mistral => &[
            "model",
            "messages",
            "stream",
            "stream_options",
            "tools",
            "max_tokens",
            "temperature",
        ],
        Wire::Responses => &[
            "model",
            "input",
            "instructions",
            "stream",
            "store",
            "include",
            "tools",
            "max_output_tokens",
            "temperature",
        ],
        Wire::Anthropic => &[
            "model",
            "max_tokens",
            "messages",
            "system",
            "stream",
            "tools",
            "temperature",
        ],
        Wire::Gemini => &["contents", "systemInstruction", "tools"],
        Wire::Ollama => &["model", "messages", "stream", "tools"],
    }
}

/// Conversation, model and options of the recorded first request.
fn first_request(wire: Wire, ex: &Exchange) -> (History, String, RequestOptions) {
    let body = ex.request_json().expect("a JSON request");
    let mut history = History::new();
    for item in wire.items(&body) {
        match item {
            Item::System(t) => history.push(Message::system(t)),
            Item::User(t) => history.push(Message::user(t)),
            other => panic!("{wire:?}: the first request holds more than a prompt: {other:?}"),
        }
    }
    let model = match wire {
        // `/v1beta/models/<model>:streamGenerateContent`
        Wire::Gemini => ex
            .path
            .rsplit('/')
            .next()
            .and_then(|last| last.split(':').next())
            .unwrap()
            .to_owned(),
        _ => body["model"].as_str().unwrap().to_owned(),
    };
    let stream = match wire {
        Wire::Gemini => ex.path.ends_with(":streamGenerateContent"),
        _ => body["stream"].as_bool().unwrap_or(false),
    };
    let max_tokens = match wire {
        Wire::Responses => body["max_output_tokens"].as_u64(),
        _ => body["max_tokens"].as_u64(),
    };
    let mut extra = Map::new();
    for (key, value) in body.as_object().unwrap() {
        let empty = value.is_null() || value.as_object().is_some_and(Map::is_empty);
        if !encoder_fields(wire).contains(&key.as_str()) && !empty {
            extra.insert(key.clone(), value.clone());
        }
    }
    let options = RequestOptions {
        stream,
        max_tokens: max_tokens.map(|n| n as u32),
        temperature: body["temperature"].as_f64(),
        extra,
    };
    (history, model, options)
}

/// What the recording says about one continuation: the items it added after the previous
/// request's conversation.
fn recorded_rounds(wire: Wire, exchanges: &[Exchange]) -> Vec<Vec<Item>> {
    let items: Vec<Vec<Item>> = exchanges
        .iter()
        .map(|ex| wire.items(&ex.request_json().unwrap()))
        .collect();
    (1..items.len())
        .map(|k| {
            let (prev, next) = (&items[k - 1], &items[k]);
            assert!(
                next.len() > prev.len() && next[..prev.len()] == prev[..],
                "{wire:?}: recorded request {k} does not extend request {}",
                k - 1
            );
            next[prev.len()..].to_vec()
        })
        .collect()
}

type Answers = Arc<Mutex<HashMap<(String, String), VecDeque<ToolOutput>>>>;

/// Tools named and described as recorded, answering each call with the recorded result for
/// that tool and those arguments.
fn recorded_tools(
    wire: Wire,
    first: &Value,
    rounds: &[Vec<Item>],
    log: &Log,
) -> Vec<Arc<dyn Tool>> {
    let answers: Answers = Arc::default();
    for round in rounds {
        let calls = calls_of(round);
        let results = results_of(round);
        assert_eq!(calls.len(), results.len(), "{wire:?}: {round:#?}");
        for ((_, name, args), (_, text, is_error)) in calls.into_iter().zip(results) {
            let output = if is_error {
                ToolOutput::error(text)
            } else {
                ToolOutput::text(text)
            };
            answers
                .lock()
                .unwrap()
                .entry((name, args.to_string()))
                .or_default()
                .push_back(output);
        }
    }
    wire.tool_specs(first)
        .into_iter()
        .map(|spec| {
            let name = spec.name.clone();
            let answers = answers.clone();
            TestTool::new(&spec.name, log)
                .read_only()
                .parallel()
                .schema(spec.input_schema.clone())
                .answer(move |args| {
                    answers
                        .lock()
                        .unwrap()
                        .get_mut(&(name.clone(), args.to_string()))
                        .and_then(VecDeque::pop_front)
                        .unwrap_or_else(|| {
                            ToolOutput::error(format!("the recording has no result for {args}"))
                        })
                })
                .arc()
        })
        .collect()
}

/// Ids the recording carries must be the ones we send; where it has none, ours are free.
fn same_id(recorded: &Option<String>, ours: &Option<String>) -> bool {
    recorded.is_none() || recorded == ours
}

/// The recorded sessions replayed for each wire (at least one per protocol).
pub fn sessions(wire: Wire) -> &'static [&'static str] {
    match wire {
        Wire::Anthropic => &[
            "anthropic/messages_sessions/sequential_tool_calls_streaming",
            "anthropic/reasoning_tool_roundtrip/streaming",
            "anthropic/multi_turn_streaming/multi_turn_streaming_tools",
            "anthropic/prompt_caching/conformance_agent_loop",
        ],
        Wire::OpenAiChat => &[
            "openai/completions_api/completions_api_streams_two_tool_calls_before_final_answer",
            "openai/raw_capture_agent_matrix/chat_streamed_tool_run_records_distinct_raw",
            "openai/prompt_caching/chat_completions_agent_loop",
        ],
        Wire::Responses => &[
            "openai/responses_sessions/sequential_tool_calls_streaming",
            "openai/responses_sessions/reasoning_session_two_tool_calls_streaming",
            "openai/responses_sessions/sequential_tool_calls_nonstreaming",
            "chatgpt/codex_sessions/sequential_tool_calls_streaming",
        ],
        Wire::Gemini => &[
            "gemini/multi_turn_streaming/manual_multi_turn_streaming_loop",
            "gemini/streaming_tools/streaming_tools_surface_two_distinct_tool_calls_before_final_answer",
            "gemini/prompt_caching/agent_loop",
        ],
        Wire::Ollama => &[
            "ollama/streaming_tools/streaming_tools_smoke",
            "ollama/reasoning_tool_roundtrip/streaming",
        ],
        Wire::LlamaCpp => &[
            "llamacpp/streaming_tools/streaming_tools_surface_two_distinct_tool_calls_before_final_answer",
            "llamacpp/tools/tools_roundtrip",
        ],
        Wire::Mistral => &[
            "mistral/agent_tool_sessions/sequential_complex_tool_calls_streaming",
            "mistral/agent_tool_sessions/parallel_tool_calls_single_turn_streaming",
        ],
    }
}

/// How a test builds the client for a session: (wire, server, model) -> client.
pub type ClientFor<'a> = &'a dyn Fn(Wire, &ReplayServer, &str) -> qore_client::Client;

/// Replay the recorded session `name` through the loop with the client `client_for` makes,
/// and check every continuation against the recording (see the module doc).
pub async fn replay_session(wire: Wire, name: &str, client_for: ClientFor<'_>) {
    let Some(root) = cassettes() else {
        report!(
            "tool-loop recorded {}: SKIPPED {name} (no fixtures)",
            wire.name()
        );
        return;
    };
    let exchanges = load(&root, name);
    assert!(exchanges.len() >= 2, "{name}: not a multi-exchange session");
    let first = exchanges[0].request_json().unwrap();
    let rounds = recorded_rounds(wire, &exchanges);
    let log = Log::default();
    let tools = recorded_tools(wire, &first, &rounds, &log);
    let (history, model, options) = first_request(wire, &exchanges[0]);

    let replies = exchanges
        .iter()
        .map(|ex| reply_from_exchange(ex, Slicing::Irregular { seed: 11, max: 64 }))
        .collect();
    let server = ReplayServer::start(replies).await.unwrap();
    let client = client_for(wire, &server, &model);
    let mut h = Harness::new(tools, ApprovalPolicy::new(ApprovalMode::Auto));
    h.history = history;
    h.options = options;
    let approver = ScriptedApprover::silent(&log);
    let cancel = CancellationToken::new();
    let outcome = {
        let mut runner = qore_client::tool_loop::ToolLoopRunner {
            client: &client,
            registry: &mut h.registry,
            policy: &mut h.policy,
            approver: &approver,
            config: h.config,
        };
        runner
            .run(&model, &mut h.history, &h.options, &cancel, |_| {})
            .await
    };

    let requests = server.requests();
    let recorded_calls: usize = rounds.iter().map(|r| calls_of(r).len()).sum();
    let TurnOutcome::Finished { rounds: ran, .. } = &outcome else {
        panic!(
            "{name}: the loop did not finish: {outcome:?}\n{:#?}",
            log.entries()
        );
    };
    assert_eq!(
        requests.len(),
        exchanges.len(),
        "{name}: one request per recorded exchange"
    );
    assert_eq!(*ran as usize, rounds.len(), "{name}");
    assert_eq!(
        log.count("start "),
        recorded_calls,
        "{name}: every recorded call ran once"
    );
    assert!(log.count("alone") == 0 && approver.asked().is_empty());

    let bodies: Vec<Value> = requests.iter().map(|r| r.json().unwrap()).collect();
    let ours: Vec<Vec<Item>> = bodies.iter().map(|b| wire.items(b)).collect();
    // The first request offers the recorded tools, in the recorded order.
    let names =
        |b: &Value| -> Vec<String> { wire.tool_specs(b).into_iter().map(|s| s.name).collect() };
    assert_eq!(names(&bodies[0]), names(&first), "{name}");

    for (k, recorded) in rounds.iter().enumerate() {
        let n = k + 1;
        let what = format!("{name}: request {n}");
        assert_no_orphans(&ours[n], &what);
        assert_prefix_stable(
            &requests[n - 1].body,
            &requests[n].body,
            wire.conversation_key(),
            &[],
            &what,
        );
        let (prev, next) = (&ours[n - 1], &ours[n]);
        assert!(
            next.len() > prev.len() && next[..prev.len()] == prev[..],
            "{what}: the previous conversation is not repeated unchanged"
        );
        let added = &next[prev.len()..];

        // Each call of the previous turn, in order, with its result, in order.
        let (our_calls, rec_calls) = (calls_of(added), calls_of(recorded));
        assert_eq!(our_calls.len(), rec_calls.len(), "{what}: {added:#?}");
        for (ours, rec) in our_calls.iter().zip(&rec_calls) {
            assert!(
                same_id(&rec.0, &ours.0),
                "{what}: call id {ours:?} vs {rec:?}"
            );
            assert_eq!((&ours.1, &ours.2), (&rec.1, &rec.2), "{what}: call");
        }
        let (our_results, rec_results) = (results_of(added), results_of(recorded));
        assert_eq!(our_results.len(), rec_results.len(), "{what}");
        for ((ours, rec), call) in our_results.iter().zip(&rec_results).zip(&our_calls) {
            assert!(
                same_id(&rec.0, &ours.0),
                "{what}: result id {ours:?} vs {rec:?}"
            );
            assert_eq!(ours.0, call.0, "{what}: the result answers its call");
            assert_eq!((&ours.1, ours.2), (&rec.1, rec.2), "{what}: result");
        }

        // Thinking signatures come back on the same kind of item, in order.
        let signatures = |items: &[Item]| -> Vec<(&'static str, String)> {
            items
                .iter()
                .filter_map(|i| {
                    let kind = match i {
                        Item::Thinking { .. } => "thinking",
                        Item::Call { .. } => "call",
                        Item::Assistant { .. } => "text",
                        _ => return None,
                    };
                    i.signature().map(|s| (kind, s.to_owned()))
                })
                .collect()
        };
        assert_eq!(
            signatures(added),
            signatures(recorded),
            "{what}: signatures\n ours: {added:#?}\n recorded: {recorded:#?}"
        );
    }

    let last = h.history.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert!(!last.text().trim().is_empty(), "{name}: a final answer");
    assert!(last
        .blocks
        .iter()
        .all(|b| !matches!(b, ContentBlock::ToolUse { .. })));
    assert_history_well_formed(&h.history);
    let signed = rounds
        .iter()
        .flatten()
        .filter(|i| i.signature().is_some())
        .count();
    report!(
        "tool-loop recorded {}: {name}: {} requests, {} rounds, {recorded_calls} calls, \
         {signed} signatures carried back",
        wire.name(),
        requests.len(),
        rounds.len()
    );
}
