//! The text tool protocol end to end, over real loopback HTTP, on every codec: the model's
//! replies are plain text streamed in small deltas that cut tags and JSON anywhere; the
//! tools are described in the system prompt; calls are `<tool_call>` blocks in the reply;
//! results go back as `<tool_result>` blocks in the next user turn.
//!
//! Each test reads what was sent with the test's own parser (`support::Wire::items`) and
//! checks it against the protocol as the issue states it, not against the engine's output.

#[path = "tool_loop/support.rs"]
mod support;

use qore_client::tool_loop::{
    ApprovalMode, ApprovalPolicy, LoopEvent, ToolLoopRunner, ToolProtocol, TurnOutcome,
};
use qore_client::CancellationToken;
use qore_core::{ContentBlock, ResponseEvent, Role, ToolCallInput};
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};
use support::*;

/// `reply` as a turn of text deltas of 5 bytes (at char boundaries), so tags, fences and
/// JSON are cut everywhere.
fn text_turn(wire: Wire, reply: &str) -> Reply {
    let mut parts = Vec::new();
    let mut rest = reply;
    while !rest.is_empty() {
        let mut cut = rest.len().min(5);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        parts.push(text(&rest[..cut]));
        rest = &rest[cut..];
    }
    wire.turn(&parts, (40, 12))
}

/// What a run showed its consumer, and how it ended.
struct Run {
    outcome: TurnOutcome,
    /// The text deltas shown, concatenated.
    shown: String,
    /// Tool calls shown: (id, name, arguments or the parse error's raw text).
    shown_calls: Vec<(String, String, Value)>,
}

async fn run(h: &mut Harness, client: &qore_client::Client, log: &Log) -> Run {
    h.config.tool_protocol = ToolProtocol::Text;
    let approver = ScriptedApprover::silent(log);
    let mut runner = ToolLoopRunner {
        client,
        registry: &mut h.registry,
        policy: &mut h.policy,
        approver: &approver,
        config: h.config,
    };
    let mut shown = String::new();
    let mut starts: Vec<(String, String)> = Vec::new();
    let mut shown_calls = Vec::new();
    let outcome = runner
        .run(
            "m",
            &mut h.history,
            &h.options,
            &CancellationToken::new(),
            |event| match event {
                LoopEvent::Response(ResponseEvent::TextDelta { text }) => shown.push_str(text),
                LoopEvent::Response(ResponseEvent::ToolCallStart { id, name }) => {
                    starts.push((id.clone(), name.clone()))
                }
                LoopEvent::Response(ResponseEvent::ToolCallEnd { id, input }) => {
                    let (start_id, name) = starts.pop().expect("a start before the end");
                    assert_eq!(&start_id, id);
                    let args = match input {
                        ToolCallInput::Parsed(v) => v.clone(),
                        ToolCallInput::Invalid(e) => Value::String(e.raw.clone()),
                    };
                    shown_calls.push((id.clone(), name, args));
                }
                _ => {}
            },
        )
        .await;
    Run {
        outcome,
        shown,
        shown_calls,
    }
}

/// The loop in text mode with the echo tool (auto approval) against `replies`, served in
/// order as text turns of `wire`; `max_rounds` overrides the default limit.
async fn run_text_turns(
    wire: Wire,
    replies: &[&str],
    max_rounds: Option<u32>,
) -> (ReplayServer, Harness, Log, Run) {
    let turns = replies.iter().map(|r| text_turn(wire, r)).collect();
    let server = ReplayServer::start(turns).await.expect("replay server");
    let client = wire.client(&server);
    let log = Log::default();
    let mut h = Harness::new(
        vec![TestTool::echo(&log).arc()],
        ApprovalPolicy::new(ApprovalMode::Auto),
    );
    if let Some(limit) = max_rounds {
        h.config.max_rounds = limit;
    }
    let run = run(&mut h, &client, &log).await;
    (server, h, log, run)
}

fn bodies(server: &ReplayServer) -> Vec<Value> {
    (server.requests().iter())
        .map(|r| r.json().expect("a JSON request body"))
        .collect()
}

/// The request offers no native tools and its system text teaches the protocol.
fn assert_text_request(wire: Wire, body: &Value, what: &str) {
    for key in ["tools", "functions"] {
        let offered = body.get(key).is_some_and(|t| !t.is_null());
        assert!(!offered, "{what}: native tools were sent: {body}");
    }
    let system: String = (wire.items(body).iter())
        .filter_map(|i| match i {
            Item::System(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    let system = match wire {
        // Gemini's system instruction is outside the conversation.
        Wire::Gemini => body["systemInstruction"].to_string(),
        Wire::Anthropic => body["system"].to_string(),
        _ => system,
    };
    assert!(
        system.contains("Tool-use protocol") && system.contains("echo"),
        "{what}: the system text does not describe the tools: {system}"
    );
    assert!(
        calls_of(&wire.items(body)).is_empty(),
        "{what}: native tool calls were sent"
    );
}

/// The `<tool_result>` blocks of the last user message: (name, id, error, body).
fn sent_results(wire: Wire, body: &Value) -> Vec<(String, String, bool, String)> {
    let items = wire.items(body);
    let Some(Item::User(text)) = items.iter().rev().find(|i| matches!(i, Item::User(_))) else {
        panic!("no user message in {body}");
    };
    let re = regex::Regex::new(
        r#"(?s)<tool_result(?: name="([^"]*)")? id="([^"]*)"( error="true")?>\n(.*?)</tool_result>"#,
    )
    .unwrap();
    re.captures_iter(text)
        .map(|c| {
            (
                c.get(1).map_or("", |m| m.as_str()).to_owned(),
                c[2].to_owned(),
                c.get(3).is_some(),
                c[4].to_owned(),
            )
        })
        .collect()
}

const TWO_CALLS: &str = "I'll check both.\n<tool_call>{\"name\": \"echo\", \"arguments\": {\"n\": 1}}</tool_call>\n<tool_call>\n  {\"name\":\"echo\",\"args\":{\"n\":2}} trailing junk\n</tool_call>\nWaiting for results.";

#[tokio::test]
async fn two_calls_run_and_their_results_go_back_as_text_on_every_codec() {
    for wire in Wire::ALL {
        let what = wire.name();
        let (server, h, log, run) =
            run_text_turns(wire, &[TWO_CALLS, "Both said hello."], None).await;
        assert!(
            matches!(run.outcome, TurnOutcome::Finished { rounds: 1, .. }),
            "{what}: {:?}",
            run.outcome
        );
        assert_eq!(log.count("start echo"), 2, "{what}: {:?}", log.entries());

        // The consumer saw the reply without the blocks, and the calls as events.
        assert!(!run.shown.contains("tool_call"), "{what}: {}", run.shown);
        assert!(run.shown.starts_with("I'll check both."), "{what}");
        assert!(run.shown.contains("Waiting for results.Both said hello."));
        let args: Vec<&Value> = run.shown_calls.iter().map(|c| &c.2).collect();
        assert_eq!(args, [&json!({"n": 1}), &json!({"n": 2})], "{what}");

        // History: the reply verbatim, one call per block, every call answered.
        assert_history_well_formed(&h.history);
        let reply = &h.history.messages()[2];
        assert_eq!(reply.role, Role::Assistant);
        assert_eq!(reply.text(), TWO_CALLS, "{what}");
        let ids: Vec<&str> = (reply.blocks.iter())
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(ids.len(), 2, "{what}");
        assert_ne!(ids[0], ids[1], "{what}");

        // The requests: no native tools, the protocol in the system text, the results as
        // text in call order, and a byte-stable prefix.
        let sent = bodies(&server);
        assert_eq!(sent.len(), 2, "{what}");
        for (n, body) in sent.iter().enumerate() {
            assert_text_request(wire, body, &format!("{what} request {n}"));
        }
        let results = sent_results(wire, &sent[1]);
        assert_eq!(results.len(), 2, "{what}: {results:?}");
        for ((name, id, error, body), (expected_id, n)) in results.iter().zip(ids.iter().zip(1..)) {
            assert_eq!(name, "echo", "{what}");
            assert_eq!(id, expected_id, "{what}");
            assert!(!error, "{what}");
            assert!(body.contains(&format!("\"n\":{n}")), "{what}: {body}");
        }
        let replayed = wire.items(&sent[1]);
        assert!(
            replayed
                .iter()
                .any(|i| matches!(i, Item::Assistant { text, .. }
                if text.replace("\r\n", "\n") == TWO_CALLS)),
            "{what}: the reply is not replayed verbatim: {replayed:?}"
        );
        let requests = server.requests();
        assert_prefix_stable(
            &requests[0].body,
            &requests[1].body,
            wire.conversation_key(),
            &[],
            what,
        );
    }
}

#[tokio::test]
async fn the_protocol_shown_in_code_runs_nothing_on_every_codec() {
    let reply = "To call a tool, write:\n\n```xml\n<tool_call>{\"name\": \"echo\", \"arguments\": {\"n\": 1}}</tool_call>\n```\n\nor inline: `<tool_call>{\"name\": \"echo\", \"arguments\": {}}</tool_call>`. That's all.";
    for wire in Wire::ALL {
        let what = wire.name();
        let (server, h, log, run) = run_text_turns(wire, &[reply], None).await;
        assert!(
            matches!(run.outcome, TurnOutcome::Finished { rounds: 0, .. }),
            "{what}: {:?}",
            run.outcome
        );
        assert!(log.entries().is_empty(), "{what}: {:?}", log.entries());
        assert!(run.shown_calls.is_empty(), "{what}");
        assert_eq!(
            run.shown, reply,
            "{what}: the code is shown as it was written"
        );
        assert_eq!(server.requests().len(), 1, "{what}");
        let last = h.history.last().expect("the reply");
        assert_eq!(last.text(), reply);
        assert!(!(last.blocks.iter()).any(|b| matches!(b, ContentBlock::ToolUse { .. })));
    }
}

#[tokio::test]
async fn a_malformed_block_and_an_unknown_tool_go_back_as_errors() {
    let wire = Wire::OpenAiChat;
    let reply = "<tool_call>{\"name\": \"echo\", \"arguments\": {\"n\": </tool_call> and <tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>";
    let (server, h, log, run) = run_text_turns(wire, &[reply, "Sorry about that."], None).await;
    assert!(matches!(
        run.outcome,
        TurnOutcome::Finished { rounds: 1, .. }
    ));
    assert!(log.entries().is_empty(), "nothing ran: {:?}", log.entries());
    assert_history_well_formed(&h.history);
    let results = sent_results(wire, &bodies(&server)[1]);
    assert_eq!(results.len(), 2, "{results:?}");
    let (name, _, error, body) = &results[0];
    assert!(name.is_empty() && *error, "{results:?}");
    assert!(
        body.contains("tool_call"),
        "the error explains the syntax: {body}"
    );
    let (name, _, error, body) = &results[1];
    assert!(name == "nope" && *error, "{results:?}");
    assert!(body.contains("is not available"), "{body}");
}

#[tokio::test]
async fn at_the_round_limit_the_final_request_keeps_the_prompt_and_sends_no_tool_choice() {
    let wire = Wire::OpenAiChat;
    let call = "<tool_call>{\"name\": \"echo\", \"arguments\": {\"n\": 1}}</tool_call>";
    let again = "<tool_call>{\"name\": \"echo\", \"arguments\": {\"n\": 2}}</tool_call>";
    let (server, h, log, run) =
        run_text_turns(wire, &[call, again, "Final answer."], Some(1)).await;
    assert!(
        matches!(run.outcome, TurnOutcome::Finished { rounds: 2, .. }),
        "{:?}",
        run.outcome
    );
    assert_eq!(log.count("start echo"), 1);
    let sent = bodies(&server);
    assert_eq!(sent.len(), 3);
    // No native tools were offered, so nothing may name a tool choice.
    assert!(sent[2].get("tool_choice").is_none(), "{}", sent[2]);
    assert_text_request(wire, &sent[2], "final request");
    let results = sent_results(wire, &sent[2]);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].2 && results[0].3.contains("round limit"),
        "{results:?}"
    );
    assert_history_well_formed(&h.history);
}
