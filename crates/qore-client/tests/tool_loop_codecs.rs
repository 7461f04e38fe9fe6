//! The tool loop on every wire protocol (openai-chat, openai-responses, anthropic, gemini,
//! ollama, and llamacpp and mistral, which speak openai-chat's wire): model turns are
//! hand-written in each wire's streamed shape (copied from recordings under
//! `rig-cassettes/<provider>/`) and served by a loopback [`ReplayServer`].
//!
//! For each wire:
//! - every continuation is encoded again from history, and the bytes of the previous request
//!   up to the end of its last message are exactly the first bytes of the next one (the rest
//!   of the body, tools and system included, is byte-identical too), so provider prompt
//!   caches hit;
//! - each continuation carries the previous turn's tool calls (ids, names, arguments) and
//!   their results in call order, error results flagged the wire's way, thinking signatures
//!   where the model sent them, and no call without its result;
//! - at the round limit the pending calls are answered "not run: tool round limit reached"
//!   and the final request carries the wire's own "no tool calls" fields.

#[path = "tool_loop/support.rs"]
mod support;

use qore_client::tool_loop::{ApprovalMode, ApprovalPolicy, TurnOutcome};
use qore_client::CancellationToken;
use qore_core::ToolOutput;
use qore_testkit::ReplayServer;
use serde_json::{json, Value};
use support::*;

fn tools(log: &Log) -> Vec<std::sync::Arc<dyn qore_core::Tool>> {
    vec![
        TestTool::new("lookup", log)
            .read_only()
            .parallel()
            .schema(json!({
                "type": "object",
                "properties": {"city": {"type": "string", "description": "City name"}},
                "required": ["city"]
            }))
            .answer(|args| ToolOutput::text(format!("sunny in {}", args["city"].as_str().unwrap())))
            .arc(),
        TestTool::new("convert", log)
            .read_only()
            .schema(json!({
                "type": "object",
                "properties": {"celsius": {"type": "number"}, "to": {"enum": ["F", "K"]}},
                "required": ["celsius", "to"]
            }))
            .answer(|args| {
                let c = args["celsius"].as_f64().unwrap();
                ToolOutput::text(format!("{}", c * 9.0 / 5.0 + 32.0))
            })
            .arc(),
    ]
}

/// Whether the wire carries call ids (Gemini 2.x sends none; the engine's own are not sent).
fn has_ids(wire: Wire) -> bool {
    wire != Wire::Gemini
}

fn expect_id(wire: Wire, id: &str) -> Option<String> {
    has_ids(wire).then(|| id.to_owned())
}

/// The new items of request `n` (those after the previous request's), checking that the
/// previous request's conversation is repeated unchanged.
fn new_items(wire: Wire, bodies: &[Value], n: usize) -> Vec<Item> {
    let prev = wire.items(&bodies[n - 1]);
    let next = wire.items(&bodies[n]);
    assert!(
        next.len() > prev.len() && next[..prev.len()] == prev[..],
        "{wire:?}: request {n} does not repeat request {}'s conversation:\n{prev:#?}\n{next:#?}",
        n - 1
    );
    next[prev.len()..].to_vec()
}

async fn continuations_are_byte_stable_and_carry_every_call_with_its_result(wire: Wire) {
    let log = Log::default();
    let thinks = !matches!(wire, Wire::Gemini);
    let mut first = Vec::new();
    if thinks {
        first.push(thinking(
            "The user wants two cities; look both up.",
            "sig-think-1",
        ));
    } else {
        first.push(Part::Thinking {
            text: "Two cities: two lookups.".into(),
            signature: None,
        });
    }
    first.push(text("Looking both up."));
    if wire == Wire::Gemini {
        first.push(signed_call(
            "call_1",
            "lookup",
            json!({"city": "Paris"}),
            "sig-call-1",
        ));
    } else {
        first.push(call("call_1", "lookup", json!({"city": "Paris"})));
    }
    first.push(call(
        "call_2",
        "lookup",
        json!({"city": "Tōkyō ☃ \"quoted\""}),
    ));
    let second = vec![
        call("call_3", "convert", json!({"celsius": 21.5, "to": "F"})),
        call("call_4", "nope", json!({"x": 1})),
    ];
    let server = ReplayServer::start(vec![
        wire.turn(&first, (120, 40)),
        wire.turn(&second, (200, 20)),
        wire.answer("Paris and Tokyo are sunny; 21.5 °C is 70.7 °F."),
    ])
    .await
    .unwrap();
    let client = wire.client(&server);
    let mut h = Harness::new(tools(&log), ApprovalPolicy::new(ApprovalMode::Confirm));
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    let TurnOutcome::Finished { rounds, usage, .. } = &outcome else {
        panic!("{wire:?}: {outcome:?}");
    };
    assert_eq!(*rounds, 2, "{wire:?}");
    assert_eq!(usage.input_tokens, Some(120 + 200 + 10), "{wire:?}");
    assert_eq!(
        h.history.last().unwrap().text(),
        "Paris and Tokyo are sunny; 21.5 °C is 70.7 °F.",
        "{wire:?}"
    );
    assert_history_well_formed(&h.history);

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{wire:?}");
    let bodies: Vec<Value> = requests.iter().map(|r| r.json().unwrap()).collect();
    for (n, body) in bodies.iter().enumerate() {
        assert_no_orphans(&wire.items(body), &format!("{wire:?} request {n}"));
        for (field, forbidden) in wire.forbid_fields() {
            assert_ne!(
                body.get(field),
                Some(&forbidden),
                "{wire:?} request {n}: tools are forbidden too early"
            );
        }
        if n > 0 {
            assert_prefix_stable(
                &requests[n - 1].body,
                &requests[n].body,
                wire.conversation_key(),
                &[],
                &format!("{wire:?} request {n}"),
            );
        }
    }
    // The tool definitions are offered, in registration order.
    let names: Vec<String> = wire
        .tool_specs(&bodies[0])
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["lookup", "convert"], "{wire:?}");

    // Request 1: the first turn's calls, then their results, in call order.
    let added = new_items(wire, &bodies, 1);
    assert_eq!(
        calls_of(&added),
        vec![
            (
                expect_id(wire, "call_1"),
                "lookup".into(),
                json!({"city": "Paris"})
            ),
            (
                expect_id(wire, "call_2"),
                "lookup".into(),
                json!({"city": "Tōkyō ☃ \"quoted\""})
            ),
        ],
        "{wire:?}"
    );
    assert_eq!(
        results_of(&added),
        vec![
            (expect_id(wire, "call_1"), "sunny in Paris".into(), false),
            (
                expect_id(wire, "call_2"),
                "sunny in Tōkyō ☃ \"quoted\"".into(),
                false
            ),
        ],
        "{wire:?}"
    );
    let first_call = added.iter().position(Item::is_call).unwrap();
    let first_result = added.iter().position(Item::is_result).unwrap();
    assert!(
        added[first_call..first_result].iter().all(Item::is_call),
        "{wire:?}: the calls come together, then the results: {added:#?}"
    );
    // Signatures go back exactly where they came from.
    let signed: Vec<&Item> = added.iter().filter(|i| i.signature().is_some()).collect();
    match wire {
        Wire::Anthropic | Wire::Responses => {
            assert_eq!(
                signed,
                vec![&Item::Thinking {
                    text: "The user wants two cities; look both up.".into(),
                    signature: Some("sig-think-1".into()),
                }],
                "{wire:?}: {added:#?}"
            );
            assert!(
                matches!(added[0], Item::Thinking { .. }),
                "{wire:?}: thinking first"
            );
        }
        Wire::Gemini => assert_eq!(
            signed,
            vec![&Item::Call {
                id: None,
                name: "lookup".into(),
                args: json!({"city": "Paris"}),
                signature: Some("sig-call-1".into()),
            }],
            "{wire:?}: the signature stays on the first call's part: {added:#?}"
        ),
        _ => assert!(signed.is_empty(), "{wire:?}"),
    }
    assert!(
        added
            .iter()
            .any(|i| matches!(i, Item::Assistant { text, .. } if text == "Looking both up.")),
        "{wire:?}: the turn's text goes back too: {added:#?}"
    );

    // Request 2: the second turn's calls, the unknown tool answered as an error.
    let added = new_items(wire, &bodies, 2);
    assert_eq!(
        calls_of(&added),
        vec![
            (
                expect_id(wire, "call_3"),
                "convert".into(),
                json!({"celsius": 21.5, "to": "F"})
            ),
            (expect_id(wire, "call_4"), "nope".into(), json!({"x": 1})),
        ],
        "{wire:?}"
    );
    let results = results_of(&added);
    assert_eq!(results.len(), 2, "{wire:?}");
    assert_eq!(
        results[0],
        (expect_id(wire, "call_3"), "70.7".into(), false),
        "{wire:?}"
    );
    assert_eq!(results[1].0, expect_id(wire, "call_4"), "{wire:?}");
    assert!(results[1].2, "{wire:?}: the error is flagged: {results:?}");
    assert!(
        results[1].1.contains("is not available"),
        "{wire:?}: {results:?}"
    );
}

async fn at_the_round_limit_the_final_request_forbids_tool_calls(wire: Wire) {
    let log = Log::default();
    let server = ReplayServer::start(vec![
        wire.turn(
            &[call("call_1", "lookup", json!({"city": "Oslo"}))],
            (10, 5),
        ),
        wire.turn(
            &[call("call_2", "lookup", json!({"city": "Rome"}))],
            (20, 5),
        ),
        wire.answer("Oslo is sunny; I did not get to Rome."),
    ])
    .await
    .unwrap();
    let client = wire.client(&server);
    let mut h = Harness::new(tools(&log), ApprovalPolicy::default());
    h.config.max_rounds = 1;
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(outcome, TurnOutcome::Finished { .. }),
        "{wire:?}: {outcome:?}"
    );
    assert_eq!(
        log.count("start lookup"),
        1,
        "{wire:?}: the second call did not run"
    );
    assert_history_well_formed(&h.history);

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{wire:?}");
    let bodies: Vec<Value> = requests.iter().map(|r| r.json().unwrap()).collect();
    let forbid = wire.forbid_fields();
    for (n, body) in bodies.iter().enumerate() {
        assert_no_orphans(&wire.items(body), &format!("{wire:?} request {n}"));
        for (field, value) in &forbid {
            let present = body.get(*field) == Some(value);
            assert_eq!(
                present,
                n == 2,
                "{wire:?} request {n}: {field} = {value} only in the final request: {body}"
            );
        }
    }
    let last = &bodies[2];
    if wire != Wire::Ollama {
        assert_eq!(
            wire.tool_specs(last).len(),
            2,
            "{wire:?}: the definitions stay while tool calls are forbidden"
        );
    }
    let added = new_items(wire, &bodies, 2);
    let results = results_of(&added);
    assert_eq!(results.len(), 1, "{wire:?}");
    assert_eq!(results[0].0, expect_id(wire, "call_2"), "{wire:?}");
    assert!(results[0].2, "{wire:?}");
    assert!(
        results[0]
            .1
            .to_lowercase()
            .starts_with("not run: tool round limit reached"),
        "{wire:?}: {results:?}"
    );
    let keys: Vec<&str> = forbid.iter().map(|(k, _)| *k).collect();
    assert_prefix_stable(
        &requests[1].body,
        &requests[2].body,
        wire.conversation_key(),
        &keys,
        &format!("{wire:?} final request"),
    );
}

macro_rules! per_wire {
    ($($name:ident => $wire:expr),* $(,)?) => {
        mod continuation {
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    continuations_are_byte_stable_and_carry_every_call_with_its_result($wire)
                        .await;
                }
            )*
        }
        mod round_limit {
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    at_the_round_limit_the_final_request_forbids_tool_calls($wire).await;
                }
            )*
        }
    };
}

per_wire! {
    openai_chat => Wire::OpenAiChat,
    openai_responses => Wire::Responses,
    anthropic => Wire::Anthropic,
    gemini => Wire::Gemini,
    ollama => Wire::Ollama,
    llamacpp => Wire::LlamaCpp,
    mistral => Wire::Mistral,
}

#[test]
fn every_protocol_is_covered() {
    let covered: Vec<&str> = Wire::ALL.iter().map(|w| w.name()).collect();
    for name in qore_client::protocols::NAMES {
        assert!(covered.contains(name), "{name} has no tool-loop test");
    }
}

/// With Anthropic cache breakpoints on, the marker moves to the newest user block on every
/// continuation (the pattern Anthropic documents: the cache is looked up at earlier block
/// boundaries). Apart from that marker, the continuation is still byte-stable.
#[tokio::test]
async fn anthropic_with_cache_breakpoints_only_moves_the_marker() {
    let wire = Wire::Anthropic;
    let log = Log::default();
    let server = ReplayServer::start(vec![
        wire.turn(
            &[
                thinking("look it up", "sig-1"),
                call("call_1", "lookup", json!({"city": "Lyon"})),
            ],
            (10, 5),
        ),
        wire.turn(
            &[call("call_2", "lookup", json!({"city": "Nice"}))],
            (10, 5),
        ),
        wire.answer("Both sunny."),
    ])
    .await
    .unwrap();
    let protocol = std::sync::Arc::new(qore_client::protocols::anthropic::Anthropic {
        cache_breakpoints: true,
    });
    let client =
        qore_client::Client::new(protocol, qore_client::ClientConfig::new(server.url())).unwrap();
    let mut h = Harness::new(tools(&log), ApprovalPolicy::default());
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(outcome, TurnOutcome::Finished { rounds: 2, .. }),
        "{outcome:?}"
    );
    const MARK: &str = r#""cache_control":{"type":"ephemeral"}"#;
    let unmarked = |b: &[u8]| {
        String::from_utf8(b.to_vec())
            .unwrap()
            .replace(&format!("{MARK},"), "")
            .replace(&format!(",{MARK}"), "")
            .into_bytes()
    };
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for (n, r) in requests.iter().enumerate() {
        let body = r.json().unwrap();
        // One marker on the system, the last tool and the last block of the last user turn.
        assert_eq!(
            String::from_utf8_lossy(&r.body).matches(MARK).count(),
            3,
            "{body}"
        );
        let last_user = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .unwrap();
        let last_block = last_user["content"].as_array().unwrap().last().unwrap();
        assert_eq!(
            last_block["cache_control"],
            json!({"type": "ephemeral"}),
            "request {n}"
        );
        if n > 0 {
            assert_prefix_stable(
                &unmarked(&requests[n - 1].body),
                &unmarked(&r.body),
                "messages",
                &[],
                &format!("request {n} without the cache markers"),
            );
        }
    }
}

/// The shared checks reject what they must reject (so a passing test means something).
mod checks {
    use super::*;

    fn fails(f: impl FnOnce() + std::panic::UnwindSafe) -> bool {
        std::panic::catch_unwind(f).is_err()
    }

    #[test]
    fn the_prefix_check_rejects_any_change_before_the_new_messages() {
        let prev = br#"{"messages":[{"role":"user","content":"hi"}],"model":"m","tools":[1]}"#;
        let good = br#"{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x"}],"model":"m","tools":[1]}"#;
        assert!(!fails(|| assert_prefix_stable(
            prev,
            good,
            "messages",
            &[],
            "good"
        )));
        let changed_message = br#"{"messages":[{"role":"user","content":"hi!"},{"role":"assistant","content":"x"}],"model":"m","tools":[1]}"#;
        assert!(fails(|| assert_prefix_stable(
            prev,
            changed_message,
            "messages",
            &[],
            "m"
        )));
        let reordered_keys = br#"{"messages":[{"content":"hi","role":"user"},{"role":"assistant","content":"x"}],"model":"m","tools":[1]}"#;
        assert!(fails(|| assert_prefix_stable(
            prev,
            reordered_keys,
            "messages",
            &[],
            "k"
        )));
        let changed_tools = br#"{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x"}],"model":"m","tools":[2]}"#;
        assert!(fails(|| assert_prefix_stable(
            prev,
            changed_tools,
            "messages",
            &[],
            "t"
        )));
        let nothing_added = prev;
        assert!(fails(|| assert_prefix_stable(
            prev,
            nothing_added,
            "messages",
            &[],
            "n"
        )));
        let forbidding = br#"{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x"}],"model":"m","tool_choice":"none","tools":[1]}"#;
        assert!(fails(|| assert_prefix_stable(
            prev,
            forbidding,
            "messages",
            &[],
            "f"
        )));
        assert!(!fails(|| assert_prefix_stable(
            prev,
            forbidding,
            "messages",
            &["tool_choice"],
            "f"
        )));
        // Strings holding brackets and escaped quotes do not confuse the scanner.
        let tricky = br#"{"messages":[{"content":"a]\"}[","role":"user"}],"z":1}"#;
        assert_eq!(
            field_span(tricky, "z"),
            Some((tricky.len() - 2, tricky.len() - 1))
        );
    }

    #[test]
    fn the_orphan_check_rejects_unanswered_and_misordered_calls() {
        let call = |id: &str| Item::Call {
            id: Some(id.into()),
            name: "t".into(),
            args: json!({}),
            signature: None,
        };
        let result = |id: &str| Item::Result {
            id: Some(id.into()),
            text: "r".into(),
            is_error: false,
        };
        let user = Item::User("next".into());
        assert!(!fails(|| assert_no_orphans(
            &[call("a"), call("b"), result("a"), result("b")],
            "ok"
        )));
        assert!(fails(|| assert_no_orphans(
            &[call("a"), call("b"), result("a")],
            "missing"
        )));
        assert!(fails(|| assert_no_orphans(
            &[call("a"), user.clone(), result("a")],
            "late"
        )));
        assert!(fails(|| assert_no_orphans(
            &[call("a"), call("b"), result("b"), result("a")],
            "order"
        )));
        assert!(fails(|| assert_no_orphans(&[result("a")], "orphan result")));
    }

    #[test]
    fn the_history_check_rejects_a_call_without_its_result() {
        use qore_core::{ContentBlock, History, Message, Role, ToolResultPart};
        let call = Message::new(
            Role::Assistant,
            vec![ContentBlock::ToolUse {
                id: "a".into(),
                name: "t".into(),
                input: json!({}),
                raw_input: None,
                signature: None,
            }],
        );
        let result = Message::new(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_use_id: "a".into(),
                content: vec![ToolResultPart::Text { text: "r".into() }],
                is_error: false,
            }],
        );
        let ok = History::from(vec![Message::user("u"), call.clone(), result.clone()]);
        assert!(!fails(|| assert_history_well_formed(&ok)));
        let orphan = History::from(vec![Message::user("u"), call.clone()]);
        assert!(fails(|| assert_history_well_formed(&orphan)));
        let stray = History::from(vec![Message::user("u"), result]);
        assert!(fails(|| assert_history_well_formed(&stray)));
    }
}
