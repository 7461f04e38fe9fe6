//! The tool-use loop over real loopback HTTP: model turns are hand-written Chat Completions
//! streams served in order by a [`ReplayServer`]; the tools are test tools that log what they
//! do. Each test checks what the loop did (outcome, events, history) and what it sent (the
//! requests the server received, read back with the test's own parser).
//!
//! Covered: rounds and results in call order; approval first; consecutive parallel-safe calls
//! at once and the others one at a time, never before an earlier call; per-tool timeouts;
//! cancellation while tools run and while an approval is pending; bad calls (unknown tool, arguments not JSON, not an object, schema
//! violations); the repetition guard; the round limit (final answer with tools forbidden, or
//! failure); approval modes, decisions and rules; failed provider turns.

#[path = "tool_loop/support.rs"]
mod support;

use std::time::{Duration, Instant};

use qore_client::tool_loop::{
    ApprovalDecision, ApprovalMode, ApprovalPolicy, ApprovalRule, ArgumentMatch, AtRoundLimit,
    LoopStop, TurnOutcome,
};
use qore_client::CancellationToken;
use qore_core::{ContentBlock, ErrorCategory, History, Role, StopReason};
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};
use support::*;

const WIRE: Wire = Wire::OpenAiChat;

async fn server(replies: Vec<Reply>) -> ReplayServer {
    ReplayServer::start(replies).await.expect("replay server")
}

/// The bodies the server received, parsed.
fn bodies(server: &ReplayServer) -> Vec<Value> {
    server
        .requests()
        .iter()
        .map(|r| r.json().expect("a JSON request body"))
        .collect()
}

/// The tool results a request body carries (read with the test's parser).
fn sent_results(body: &Value) -> Vec<(Option<String>, String, bool)> {
    results_of(&WIRE.items(body))
}

fn id(s: &str) -> Option<String> {
    Some(s.to_owned())
}

fn finished_rounds(outcome: &TurnOutcome) -> u32 {
    match outcome {
        TurnOutcome::Finished { rounds, .. } => *rounds,
        other => panic!("the loop did not finish: {other:?}"),
    }
}

/// Every request sent is well formed and continues the one before byte for byte.
fn assert_requests_consistent(server: &ReplayServer) {
    let requests = server.requests();
    for (n, request) in requests.iter().enumerate() {
        let body = request.json().unwrap();
        assert_no_orphans(&WIRE.items(&body), &format!("request {n}"));
        if n > 0 {
            assert_prefix_stable(
                &requests[n - 1].body,
                &request.body,
                WIRE.conversation_key(),
                &[],
                &format!("request {n}"),
            );
        }
    }
}

#[tokio::test]
async fn a_turn_without_tool_calls_finishes_at_once() {
    let server = server(vec![WIRE.answer("Nothing to do.")]).await;
    let client = WIRE.client(&server);
    let log = Log::default();
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    let before = h.history.len();
    let (outcome, events) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(
            &outcome,
            TurnOutcome::Finished {
                rounds: 0,
                stop_reason: Some(StopReason::EndTurn),
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(h.history.len(), before + 1);
    assert_eq!(h.history.last().unwrap().text(), "Nothing to do.");
    assert!(tool_events(&events).is_empty());
    assert_eq!(server.requests().len(), 1);
    assert!(log.entries().iter().all(|e| !e.starts_with("start")));
}

#[tokio::test]
async fn a_round_runs_the_calls_and_sends_every_result_in_call_order() {
    let server = server(vec![
        WIRE.turn(
            &[
                text("Let me look."),
                call("call_a", "echo", json!({"n": 1})),
                call("call_b", "echo", json!({"n": 2})),
            ],
            (100, 20),
        ),
        WIRE.turn(&[call("call_c", "echo", json!({"n": 3}))], (150, 10)),
        WIRE.answer("Done: 1, 2, 3."),
    ])
    .await;
    let client = WIRE.client(&server);
    let log = Log::default();
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    let (outcome, events) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;

    let TurnOutcome::Finished { rounds, usage, .. } = &outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(*rounds, 2);
    // Usage is summed over the three turns (100+150+10 in, 20+10+3 out).
    assert_eq!(usage.input_tokens, Some(260));
    assert_eq!(usage.output_tokens, Some(33));

    assert_eq!(
        tool_events(&events),
        vec![
            Ev::Starting {
                round: 1,
                ids: vec!["call_a".into(), "call_b".into()]
            },
            Ev::Finished {
                id: "call_a".into(),
                name: "echo".into(),
                text: r#"echo {"n":1}"#.into(),
                is_error: false,
                ran: true
            },
            Ev::Finished {
                id: "call_b".into(),
                name: "echo".into(),
                text: r#"echo {"n":2}"#.into(),
                is_error: false,
                ran: true
            },
            Ev::Starting {
                round: 2,
                ids: vec!["call_c".into()]
            },
            Ev::Finished {
                id: "call_c".into(),
                name: "echo".into(),
                text: r#"echo {"n":3}"#.into(),
                is_error: false,
                ran: true
            },
        ]
    );

    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 3);
    assert!(sent_results(&bodies[0]).is_empty());
    assert_eq!(
        sent_results(&bodies[1]),
        vec![
            (id("call_a"), r#"echo {"n":1}"#.into(), false),
            (id("call_b"), r#"echo {"n":2}"#.into(), false),
        ]
    );
    assert_eq!(
        calls_of(&WIRE.items(&bodies[1])),
        vec![
            (id("call_a"), "echo".into(), json!({"n": 1})),
            (id("call_b"), "echo".into(), json!({"n": 2})),
        ]
    );
    assert_eq!(sent_results(&bodies[2]).len(), 3);
    assert_eq!(sent_results(&bodies[2])[2].0, id("call_c"));
    assert_requests_consistent(&server);
    assert_history_well_formed(&h.history);
    // system, user, assistant, results, assistant, results, answer
    assert_eq!(h.history.len(), 7);
    assert_eq!(h.history.last().unwrap().text(), "Done: 1, 2, 3.");
}

#[tokio::test]
async fn parallel_safe_calls_run_at_once_and_the_others_one_at_a_time_results_in_call_order() {
    let log = Log::default();
    // The first three echo calls wait until three echo calls have started: they only
    // succeed when they really run at the same time.
    let echo = TestTool::echo(&log).rendezvous(3);
    let write = TestTool::new("write", &log)
        .read_only()
        .delay(Duration::from_millis(30));
    let (echo_gauge, write_gauge) = (echo.gauge.clone(), write.gauge.clone());
    let server = server(vec![
        WIRE.turn(
            &[
                call("e1", "echo", json!({"n": 1})),
                call("e2", "echo", json!({"n": 2})),
                call("e3", "echo", json!({"n": 3})),
                call("w1", "write", json!({"n": 1})),
                call("e4", "echo", json!({"n": 4})),
                call("w2", "write", json!({"n": 2})),
            ],
            (10, 10),
        ),
        WIRE.answer("ok"),
    ])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(
        vec![echo.arc(), write.arc()],
        ApprovalPolicy::new(ApprovalMode::Auto),
    );
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(finished_rounds(&outcome), 1);

    assert_eq!(echo_gauge.max(), 3, "the parallel-safe calls ran together");
    assert_eq!(write_gauge.max(), 1, "the other calls ran one at a time");
    assert_eq!(log.count("alone"), 0, "{:#?}", log.entries());
    // Nothing runs before a call the model wrote earlier has ended (a read after a write
    // reads the write), and the one-at-a-time calls run alone.
    for n in 1..=3 {
        assert!(
            log.at(&format!(r#"end echo {{"n":{n}}}"#)) < log.at(r#"start write {"n":1}"#),
            "{:#?}",
            log.entries()
        );
    }
    assert!(log.at(r#"end write {"n":1}"#) < log.at(r#"start echo {"n":4}"#));
    assert!(log.at(r#"end echo {"n":4}"#) < log.at(r#"start write {"n":2}"#));

    let ids: Vec<String> = last_results_before_answer(&h.history)
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(
        ids,
        ["e1", "e2", "e3", "w1", "e4", "w2"],
        "results in call order"
    );
    let sent: Vec<Option<String>> = sent_results(&bodies(&server)[1])
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(
        sent,
        [id("e1"), id("e2"), id("e3"), id("w1"), id("e4"), id("w2")]
    );
    assert_requests_consistent(&server);
}

/// The results message right before the final answer.
fn last_results_before_answer(history: &History) -> Vec<(String, String, bool)> {
    let messages = history.messages();
    last_results(&History::from(messages[..messages.len() - 1].to_vec()))
}

#[tokio::test]
async fn a_tool_that_overruns_its_timeout_gives_an_error_result_and_the_loop_goes_on() {
    let log = Log::default();
    let slow = TestTool::new("slow", &log)
        .read_only()
        .parallel()
        .delay(Duration::from_secs(30))
        .timeout(Duration::from_millis(150));
    let server = server(vec![
        WIRE.turn(
            &[
                call("s1", "slow", json!({})),
                call("e1", "echo", json!({"n": 1})),
            ],
            (10, 10),
        ),
        WIRE.answer("The slow tool timed out."),
    ])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(
        vec![slow.arc(), TestTool::echo(&log).arc()],
        ApprovalPolicy::default(),
    );
    let started = Instant::now();
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the timeout was not applied"
    );
    assert_eq!(finished_rounds(&outcome), 1);

    let results = last_results_before_answer(&h.history);
    assert_eq!(results[0].0, "s1");
    assert!(results[0].2, "a timeout is an error result");
    assert!(
        results[0].1.contains("timed out") && results[0].1.contains("0.15"),
        "{}",
        results[0].1
    );
    assert_eq!(results[1], ("e1".into(), r#"echo {"n":1}"#.into(), false));
    let sent = sent_results(&bodies(&server)[1]);
    assert_eq!(sent[0].0, id("s1"));
    assert!(sent[0].2 && sent[0].1.contains("timed out"), "{sent:?}");
    // The overrunning call was stopped: its future dropped and its token cancelled.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(log.count("dropped slow"), 1, "{:#?}", log.entries());
    assert_eq!(log.count("token cancelled slow"), 1, "{:#?}", log.entries());
    assert_eq!(log.count("end slow"), 0);
    assert_requests_consistent(&server);
}

#[tokio::test]
async fn cancelling_while_tools_run_answers_every_call_and_sends_nothing_more() {
    let log = Log::default();
    let slow_serial = TestTool::new("slow_serial", &log)
        .read_only()
        .delay(Duration::from_secs(30));
    let server = server(vec![
        WIRE.turn(
            &[
                call("c1", "echo", json!({"n": 1})),
                call("c2", "slow_serial", json!({"n": 1})),
                call("c3", "slow_serial", json!({"n": 2})),
                call("c4", "nope", json!({})),
            ],
            (10, 10),
        ),
        WIRE.answer("never asked for"),
    ])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(
        vec![TestTool::echo(&log).arc(), slow_serial.arc()],
        ApprovalPolicy::default(),
    );
    let cancel = CancellationToken::new();
    let canceller = {
        let cancel = cancel.clone();
        let log = log.clone();
        tokio::spawn(async move {
            // Cancel while the first one-at-a-time call is running.
            while log.count(r#"start slow_serial {"n":1}"#) == 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
            cancel.cancel();
        })
    };
    let started = Instant::now();
    let (outcome, events) = h
        .run(&client, &ScriptedApprover::silent(&log), &cancel)
        .await;
    canceller.await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "cancellation did not stop the running tool ({:?}): {:#?}",
        started.elapsed(),
        log.entries()
    );
    assert!(
        matches!(outcome, TurnOutcome::Cancelled { rounds: 1, .. }),
        "{outcome:?}"
    );
    assert_eq!(server.requests().len(), 1, "nothing is sent after a cancel");
    assert_history_well_formed(&h.history);
    let results = last_results(&h.history);
    let ids: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4"]);
    // The finished call keeps its result.
    assert_eq!(results[0], ("c1".into(), r#"echo {"n":1}"#.into(), false));
    // The running call says for how long it ran: "cancelled after N s".
    assert!(results[1].2, "{:?}", results[1]);
    let n = seconds_cancelled_after(&results[1].1);
    assert!((0.2..5.0).contains(&n), "{n}");
    // The call not started yet, and the bad one, are answered too.
    assert!(
        results[2].2 && results[2].1.contains("Not run"),
        "{:?}",
        results[2]
    );
    assert!(
        results[3].2 && results[3].1.contains("is not available"),
        "{:?}",
        results[3]
    );
    assert_eq!(log.count(r#"start slow_serial {"n":2}"#), 0);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        log.count(r#"dropped slow_serial {"n":1}"#),
        1,
        "stopped at once"
    );
    assert_eq!(log.count(r#"token cancelled slow_serial {"n":1}"#), 1);
    let finished: Vec<String> = tool_events(&events)
        .into_iter()
        .filter_map(|e| match e {
            Ev::Finished { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    assert_eq!(finished, ["c1", "c2", "c3", "c4"]);
}

/// N in "… cancelled after N s."; panics when the text does not say so.
fn seconds_cancelled_after(text: &str) -> f64 {
    text.split("cancelled after ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(" s."))
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("{text:?} does not say \"cancelled after N s\""))
}

#[tokio::test]
async fn cancelling_while_parallel_tools_run_stops_them_at_once() {
    let log = Log::default();
    let slow = TestTool::new("slow", &log)
        .read_only()
        .parallel()
        .delay(Duration::from_secs(30));
    let server = server(vec![
        WIRE.turn(
            &[
                call("p1", "slow", json!({"n": 1})),
                call("p2", "slow", json!({"n": 2})),
                call("p3", "echo", json!({"n": 3})),
            ],
            (10, 10),
        ),
        WIRE.answer("never asked for"),
    ])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(
        vec![slow.arc(), TestTool::echo(&log).arc()],
        ApprovalPolicy::default(),
    );
    let cancel = CancellationToken::new();
    {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        });
    }
    let started = Instant::now();
    let (outcome, _) = h
        .run(&client, &ScriptedApprover::silent(&log), &cancel)
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(outcome, TurnOutcome::Cancelled { .. }),
        "{outcome:?}"
    );
    assert_history_well_formed(&h.history);
    let results = last_results(&h.history);
    assert_eq!(results.len(), 3);
    for r in &results[..2] {
        assert!(r.2, "{r:?}");
        let n = seconds_cancelled_after(&r.1);
        assert!((0.2..5.0).contains(&n), "{n}");
    }
    assert_eq!(results[2], ("p3".into(), r#"echo {"n":3}"#.into(), false));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(log.count("dropped slow"), 2, "{:#?}", log.entries());
    assert_eq!(log.count("token cancelled slow"), 2);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn bad_calls_go_back_as_error_results_and_the_loop_goes_on() {
    let log = Log::default();
    let schema_tool = TestTool::new("move", &log).read_only().schema(json!({
        "type": "object",
        "properties": {
            "from": {"type": "string"},
            "steps": {"type": "integer", "minimum": 1}
        },
        "required": ["from", "steps"],
        "additionalProperties": false
    }));
    let gauge = schema_tool.gauge.clone();
    let server = server(vec![
        WIRE.turn(
            &[
                call("b1", "teleport", json!({"to": "mars"})),
                raw_call("b2", "echo", r#"{"n": 1,"#),
                raw_call("b3", "echo", "[1, 2]"),
                call("b4", "move", json!({"from": "a"})),
                call("b5", "move", json!({"from": "a", "steps": "three"})),
                call("b6", "move", json!({"from": "a", "steps": 2})),
                call(
                    "b7",
                    "move",
                    json!({"from": "a", "steps": 0, "extra": true}),
                ),
            ],
            (10, 10),
        ),
        WIRE.answer("Some calls were wrong."),
    ])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(
        vec![TestTool::echo(&log).arc(), schema_tool.arc()],
        ApprovalPolicy::default(),
    );
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(finished_rounds(&outcome), 1);
    assert_eq!(gauge.started(), 1, "only the valid call ran");
    assert_eq!(log.count("start echo"), 0);

    let results = last_results_before_answer(&h.history);
    let by_id = |id: &str| results.iter().find(|r| r.0 == id).unwrap().clone();
    let unknown = by_id("b1");
    assert!(unknown.2 && unknown.1.contains("teleport"), "{unknown:?}");
    assert!(
        unknown.1.contains("echo") && unknown.1.contains("move"),
        "lists the tools: {unknown:?}"
    );
    let not_json = by_id("b2");
    assert!(
        not_json.2 && not_json.1.contains("not valid JSON"),
        "{not_json:?}"
    );
    assert!(
        not_json.1.contains(r#"{"n": 1,"#),
        "quotes what was sent: {not_json:?}"
    );
    let not_object = by_id("b3");
    assert!(
        not_object.2 && not_object.1.contains("object"),
        "{not_object:?}"
    );
    let missing = by_id("b4");
    assert!(missing.2 && missing.1.contains("steps"), "{missing:?}");
    let wrong_type = by_id("b5");
    assert!(
        wrong_type.2 && wrong_type.1.contains("/steps"),
        "{wrong_type:?}"
    );
    assert_eq!(
        by_id("b6"),
        ("b6".into(), r#"move {"from":"a","steps":2}"#.into(), false)
    );
    let two_problems = by_id("b7");
    assert!(two_problems.2, "{two_problems:?}");
    // Every problem is listed: the minimum and the unexpected property.
    assert!(two_problems.1.contains("minimum"), "{two_problems:?}");
    assert!(two_problems.1.contains("extra"), "{two_problems:?}");
    let ids: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(ids, ["b1", "b2", "b3", "b4", "b5", "b6", "b7"]);

    // The request sends the malformed arguments back as the model wrote them, and every
    // result with its error flag.
    let bodies = bodies(&server);
    let calls = calls_of(&WIRE.items(&bodies[1]));
    assert_eq!(calls[1].2, json!(r#"{"n": 1,"#));
    assert_eq!(calls[2].2, json!([1, 2]));
    let sent = sent_results(&bodies[1]);
    let flags: Vec<bool> = sent.iter().map(|r| r.2).collect();
    assert_eq!(flags, [true, true, true, true, true, false, true]);
    assert_requests_consistent(&server);
    assert_history_well_formed(&h.history);
}

#[tokio::test]
async fn the_same_call_three_times_in_a_row_stops_the_loop() {
    let log = Log::default();
    let same = |n: &str| WIRE.turn(&[call(n, "echo", json!({"q": "again"}))], (10, 10));
    let server = server(vec![same("r1"), same("r2"), same("r3"), WIRE.answer("x")]).await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    let TurnOutcome::Failed {
        limit: Some(reason),
        rounds,
        ..
    } = &outcome
    else {
        panic!("{outcome:?}");
    };
    assert_eq!(
        reason,
        &LoopStop::RepeatedCall {
            tool: "echo".into(),
            times: 3
        }
    );
    assert_eq!(*rounds, 3);
    // A limit is a failed turn whose error says which limit.
    let error = outcome.error().unwrap();
    assert_eq!(error.category, ErrorCategory::Limit);
    assert_eq!(
        error.message,
        "stopped: the model called echo with the same arguments 3 times in a row"
    );
    assert_eq!(
        log.count("start echo"),
        2,
        "the third identical call did not run"
    );
    assert_eq!(server.requests().len(), 3, "no request after the stop");
    assert_history_well_formed(&h.history);
    let results = last_results(&h.history);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "r3");
    assert!(
        results[0].2 && results[0].1.contains("same arguments"),
        "{results:?}"
    );
}

#[tokio::test]
async fn the_repetition_limit_is_configurable_and_only_counts_identical_calls_in_a_row() {
    let log = Log::default();
    // Same tool, arguments alternating: never the same call twice in a row.
    let turn = |n: &str, q: &str| WIRE.turn(&[call(n, "echo", json!({"q": q}))], (10, 10));
    let server = server(vec![
        turn("a1", "x"),
        turn("a2", "y"),
        turn("a3", "x"),
        turn("a4", "y"),
        WIRE.answer("alternating is fine"),
    ])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    h.config.repeat_limit = 2;
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(finished_rounds(&outcome), 4);
    assert_eq!(log.count("start echo"), 4);

    // With a limit of 2, the second identical call in a row stops it.
    let server = server_of(vec![turn("b1", "x"), turn("b2", "x"), WIRE.answer("x")]).await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    h.config.repeat_limit = 2;
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(
            &outcome,
            TurnOutcome::Failed {
                limit: Some(LoopStop::RepeatedCall { times: 2, .. }),
                rounds: 2,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(server.requests().len(), 2);
    assert_history_well_formed(&h.history);
}

/// [`server`], for tests where a variable called `server` hides the function.
async fn server_of(replies: Vec<Reply>) -> ReplayServer {
    server(replies).await
}

/// `n` turns, each calling echo with new arguments, then an answer.
fn many_rounds(n: usize) -> Vec<Reply> {
    let mut replies: Vec<Reply> = (1..=n)
        .map(|i| WIRE.turn(&[call(&format!("t{i}"), "echo", json!({"i": i}))], (10, 1)))
        .collect();
    replies.push(WIRE.answer("Here is what I found."));
    replies
}

#[tokio::test]
async fn at_the_default_limit_of_25_rounds_the_pending_calls_are_not_run_and_a_final_answer_is_asked_with_tools_forbidden(
) {
    let log = Log::default();
    let server = server(many_rounds(26)).await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    assert_eq!(h.config.max_rounds, 25, "the default limit");
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(outcome, TurnOutcome::Finished { .. }),
        "{outcome:?}"
    );
    assert_eq!(log.count("start echo"), 25, "25 rounds ran, not 26");
    assert_eq!(log.count(r#"start echo {"i":26}"#), 0);
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 27);
    // Before the limit the model may call tools ("auto", as OpenAI defaults with tools).
    for (n, body) in bodies.iter().enumerate().take(26) {
        assert_eq!(body["tool_choice"], json!("auto"), "request {n}: {body}");
    }
    let last = &bodies[26];
    assert_eq!(last["tool_choice"], json!("none"));
    assert!(
        last["tools"].as_array().is_some_and(|t| !t.is_empty()),
        "the tool definitions stay (the history holds tool calls)"
    );
    let results = sent_results(last);
    let (id26, text26, error26) = results.last().unwrap();
    assert_eq!(id26.as_deref(), Some("t26"));
    assert!(*error26);
    assert!(
        text26
            .to_lowercase()
            .contains("not run: tool round limit reached"),
        "{text26}"
    );
    assert_eq!(h.history.last().unwrap().text(), "Here is what I found.");
    assert_history_well_formed(&h.history);
    let requests = server.requests();
    assert_prefix_stable(
        &requests[25].body,
        &requests[26].body,
        "messages",
        &["tool_choice"],
        "the final request",
    );
}

#[tokio::test]
async fn the_round_limit_is_configurable() {
    let log = Log::default();
    let server = server(many_rounds(3)).await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    h.config.max_rounds = 2;
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(outcome, TurnOutcome::Finished { .. }),
        "{outcome:?}"
    );
    assert_eq!(log.count("start echo"), 2);
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 4);
    assert_eq!(bodies[3]["tool_choice"], json!("none"));
    assert_eq!(bodies[2]["tool_choice"], json!("auto"));
    assert_history_well_formed(&h.history);
}

#[tokio::test]
async fn a_model_that_still_calls_tools_when_forbidden_is_stopped() {
    let log = Log::default();
    // Three rounds of calls, limit 1: round 2 is answered "not run", the forbidden request
    // still gets calls back; they are answered too and the loop stops.
    let server = server(many_rounds(3)).await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    h.config.max_rounds = 1;
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(
            &outcome,
            TurnOutcome::Failed {
                limit: Some(LoopStop::RoundLimit { rounds: 1 }),
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(log.count("start echo"), 1);
    assert_eq!(server.requests().len(), 3);
    assert_history_well_formed(&h.history);
    let results = last_results(&h.history);
    assert_eq!(results[0].0, "t3");
    assert!(
        results[0].2 && results[0].1.contains("round limit"),
        "{results:?}"
    );
}

#[tokio::test]
async fn at_the_round_limit_the_loop_fails_when_configured_so() {
    let log = Log::default();
    let server = server(many_rounds(3)).await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    h.config.max_rounds = 2;
    h.config.at_round_limit = AtRoundLimit::Fail;
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(
            &outcome,
            TurnOutcome::Failed {
                limit: Some(LoopStop::RoundLimit { rounds: 2 }),
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(log.count("start echo"), 2);
    assert_eq!(server.requests().len(), 3, "no final request");
    assert_history_well_formed(&h.history);
    let results = last_results(&h.history);
    assert_eq!(results[0].0, "t3");
    assert!(
        results[0]
            .1
            .to_lowercase()
            .contains("not run: tool round limit reached"),
        "{results:?}"
    );
}

/// A turn calling `write` then `echo`.
fn write_and_echo(n: u32) -> Reply {
    WIRE.turn(
        &[
            call(
                &format!("w{n}"),
                "write",
                json!({"path": format!("f{n}.txt")}),
            ),
            call(&format!("e{n}"), "echo", json!({"n": n})),
        ],
        (10, 10),
    )
}

#[tokio::test]
async fn auto_runs_every_tool_without_asking() {
    let log = Log::default();
    let server = server(vec![write_and_echo(1), WIRE.answer("written")]).await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(
        vec![TestTool::write(&log).arc(), TestTool::echo(&log).arc()],
        ApprovalPolicy::new(ApprovalMode::Auto),
    );
    let approver = ScriptedApprover::silent(&log);
    let (outcome, _) = h.run(&client, &approver, &CancellationToken::new()).await;
    assert_eq!(finished_rounds(&outcome), 1);
    assert!(approver.asked().is_empty());
    assert_eq!(log.count("start write"), 1);
    assert_eq!(log.count("start echo"), 1);
}

#[tokio::test]
async fn read_only_refuses_destructive_tools_with_an_informative_result() {
    let log = Log::default();
    let server = server(vec![write_and_echo(1), WIRE.answer("I could not write.")]).await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(
        vec![TestTool::write(&log).arc(), TestTool::echo(&log).arc()],
        ApprovalPolicy::new(ApprovalMode::ReadOnly),
    );
    let approver = ScriptedApprover::silent(&log);
    let (outcome, events) = h.run(&client, &approver, &CancellationToken::new()).await;
    assert_eq!(finished_rounds(&outcome), 1);
    assert!(approver.asked().is_empty(), "read-only never asks");
    assert_eq!(
        log.count("start write"),
        0,
        "the destructive tool never ran"
    );
    assert_eq!(log.count("start echo"), 1, "read-only tools still run");
    let sent = sent_results(&bodies(&server)[1]);
    assert_eq!(sent[0].0, id("w1"));
    assert!(sent[0].2, "{sent:?}");
    assert!(
        sent[0].1.contains("read-only") && sent[0].1.contains("write"),
        "the model is told why: {}",
        sent[0].1
    );
    assert!(tool_events(&events).contains(&Ev::Finished {
        id: "w1".into(),
        name: "write".into(),
        text: sent[0].1.clone(),
        is_error: true,
        ran: false
    }));
}

#[tokio::test]
async fn confirm_asks_for_destructive_tools_only_and_before_anything_runs() {
    let log = Log::default();
    let server = server(vec![
        WIRE.turn(
            &[
                call("e1", "echo", json!({"n": 1})),
                call("w1", "write", json!({"path": "a"})),
                call("w2", "write", json!({"path": "b"})),
            ],
            (10, 10),
        ),
        WIRE.answer("ok"),
    ])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(
        vec![TestTool::write(&log).arc(), TestTool::echo(&log).arc()],
        ApprovalPolicy::new(ApprovalMode::Confirm),
    );
    let approver = ScriptedApprover::new(
        &log,
        [ApprovalDecision::AllowOnce, ApprovalDecision::AllowOnce],
    );
    let (outcome, _) = h.run(&client, &approver, &CancellationToken::new()).await;
    assert_eq!(finished_rounds(&outcome), 1);
    let asked = approver.asked();
    let asked_ids: Vec<&str> = asked.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(asked_ids, ["w1", "w2"], "read-only echo is not asked about");
    assert_eq!(asked[0].tool, "write");
    assert_eq!(asked[0].arguments, json!({"path": "a"}));
    // Both questions came before any tool started.
    let first_start = log
        .entries()
        .iter()
        .position(|e| e.starts_with("start"))
        .unwrap();
    assert!(
        log.at(r#"ask write {"path":"b"}"#) < first_start,
        "{:#?}",
        log.entries()
    );
    assert_eq!(log.count("start write"), 2);
}

#[tokio::test]
async fn allow_once_asks_again_next_time_allow_for_the_session_does_not() {
    let log = Log::default();
    let server = server(vec![
        write_and_echo(1),
        write_and_echo(2),
        write_and_echo(3),
        write_and_echo(4),
        WIRE.answer("all written"),
    ])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(
        vec![TestTool::write(&log).arc(), TestTool::echo(&log).arc()],
        ApprovalPolicy::new(ApprovalMode::Confirm),
    );
    let approver = ScriptedApprover::new(
        &log,
        [
            ApprovalDecision::AllowOnce,
            ApprovalDecision::AllowOnce,
            ApprovalDecision::AllowSession,
        ],
    );
    let (outcome, _) = h.run(&client, &approver, &CancellationToken::new()).await;
    assert_eq!(finished_rounds(&outcome), 4);
    let asked: Vec<String> = approver.asked().into_iter().map(|r| r.call_id).collect();
    assert_eq!(
        asked,
        ["w1", "w2", "w3"],
        "asked each time after 'once', never after 'for the session'"
    );
    assert_eq!(log.count("start write"), 4);
    // The session decision is kept by the policy for later runs of the same session.
    assert_eq!(
        h.policy.verdict("write", true, &json!({"path": "z"})),
        qore_client::tool_loop::Verdict::Run
    );
    assert_history_well_formed(&h.history);
}

#[tokio::test]
async fn allow_for_the_session_covers_the_later_calls_of_the_same_turn() {
    let log = Log::default();
    let server = server(vec![
        WIRE.turn(
            &[
                call("w1", "write", json!({"path": "a"})),
                call("w2", "write", json!({"path": "b"})),
                call("w3", "write", json!({"path": "c"})),
            ],
            (10, 10),
        ),
        WIRE.answer("written"),
    ])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(
        vec![TestTool::write(&log).arc()],
        ApprovalPolicy::new(ApprovalMode::Confirm),
    );
    // One answer only: "allow write for the rest of the session".
    let approver = ScriptedApprover::new(&log, [ApprovalDecision::AllowSession]);
    let (outcome, _) = h.run(&client, &approver, &CancellationToken::new()).await;
    assert_eq!(finished_rounds(&outcome), 1);
    let asked: Vec<String> = approver.asked().into_iter().map(|r| r.call_id).collect();
    assert_eq!(
        asked,
        ["w1"],
        "not asked again right after 'for the session'"
    );
    assert_eq!(log.count("start write"), 3, "{:#?}", log.entries());
    let sent = sent_results(&bodies(&server)[1]);
    assert!(sent.iter().all(|r| !r.2), "{sent:?}");
}

#[tokio::test]
async fn a_denial_with_a_reason_goes_back_to_the_model_as_a_declined_error_result() {
    let log = Log::default();
    let server = server(vec![
        write_and_echo(1),
        write_and_echo(2),
        WIRE.answer("understood"),
    ])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(
        vec![TestTool::write(&log).arc(), TestTool::echo(&log).arc()],
        ApprovalPolicy::new(ApprovalMode::Confirm),
    );
    let approver = ScriptedApprover::new(
        &log,
        [
            ApprovalDecision::Deny {
                reason: Some("not on a Friday".into()),
            },
            ApprovalDecision::Deny { reason: None },
        ],
    );
    let (outcome, _) = h.run(&client, &approver, &CancellationToken::new()).await;
    assert_eq!(finished_rounds(&outcome), 2);
    assert_eq!(log.count("start write"), 0);
    assert_eq!(
        log.count("start echo"),
        2,
        "the other calls of the turn still ran"
    );
    let bodies = bodies(&server);
    let sent = sent_results(&bodies[1]);
    assert_eq!(sent[0].0, id("w1"));
    assert!(sent[0].2, "a denial is an error result: {sent:?}");
    assert!(
        sent[0].1.contains("declined") && sent[0].1.contains("not on a Friday"),
        "{}",
        sent[0].1
    );
    assert_eq!(sent[1], (id("e1"), r#"echo {"n":1}"#.into(), false));
    // A denial without a reason is still a clear decline; a denial is not remembered.
    let sent = sent_results(&bodies[2]);
    assert_eq!(sent[2].0, id("w2"));
    assert!(sent[2].2 && sent[2].1.contains("declined"), "{sent:?}");
    assert_eq!(approver.asked().len(), 2);
    assert_requests_consistent(&server);
}

#[tokio::test]
async fn rules_pre_decide_by_tool_name_and_argument_pattern() {
    let log = Log::default();
    let run_command = TestTool::new("run_command", &log).schema(json!({
        "type": "object",
        "properties": {"argv": {"type": "array", "items": {"type": "string"}}},
        "required": ["argv"]
    }));
    let server = server(vec![
        WIRE.turn(
            &[
                call(
                    "g",
                    "run_command",
                    json!({"argv": ["git", "status", "--short"]}),
                ),
                call("r", "run_command", json!({"argv": ["rm", "-rf", "/"]})),
                call("t", "write", json!({"path": "notes/todo.md"})),
                call("s", "write", json!({"path": "/etc/passwd"})),
            ],
            (10, 10),
        ),
        WIRE.answer("ok"),
    ])
    .await;
    let client = WIRE.client(&server);
    let policy = ApprovalPolicy::new(ApprovalMode::Confirm)
        .with_rule(ApprovalRule {
            tool: "run_command".into(),
            when: Some(ArgumentMatch::new("/argv", "git (status|log)( .*)?").unwrap()),
            allow: true,
        })
        .with_rule(ApprovalRule {
            tool: "run_command".into(),
            when: Some(ArgumentMatch::new("/argv", "rm .*").unwrap()),
            allow: false,
        })
        .with_rule(ApprovalRule {
            tool: "write".into(),
            when: Some(ArgumentMatch::new("/path", "notes/.*").unwrap()),
            allow: true,
        });
    let mut h = Harness::new(vec![run_command.arc(), TestTool::write(&log).arc()], policy);
    let approver = ScriptedApprover::new(
        &log,
        [ApprovalDecision::Deny {
            reason: Some("system file".into()),
        }],
    );
    let (outcome, _) = h.run(&client, &approver, &CancellationToken::new()).await;
    assert_eq!(finished_rounds(&outcome), 1);
    // Only the call no rule decides is asked about.
    let asked: Vec<String> = approver.asked().into_iter().map(|r| r.call_id).collect();
    assert_eq!(asked, ["s"]);
    assert_eq!(
        log.count(r#"start run_command {"argv":["git","status","--short"]}"#),
        1
    );
    assert_eq!(log.count(r#"start run_command {"argv":["rm""#), 0);
    assert_eq!(log.count(r#"start write {"path":"notes/todo.md"}"#), 1);
    assert_eq!(log.count(r#"start write {"path":"/etc/passwd"}"#), 0);
    let sent = sent_results(&bodies(&server)[1]);
    assert!(!sent[0].2);
    assert!(sent[1].2 && sent[1].1.contains("rules deny"), "{sent:?}");
    assert!(!sent[2].2);
    assert!(sent[3].2 && sent[3].1.contains("system file"), "{sent:?}");
}

#[tokio::test]
async fn cancelling_while_an_approval_is_pending_answers_every_call_and_runs_nothing() {
    let log = Log::default();
    let server = server(vec![
        WIRE.turn(
            &[
                call("e1", "echo", json!({"n": 1})),
                call("w1", "write", json!({"path": "a"})),
                call("x1", "nope", json!({})),
                call("w2", "write", json!({"path": "b"})),
            ],
            (10, 10),
        ),
        WIRE.answer("never asked for"),
    ])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(
        vec![TestTool::write(&log).arc(), TestTool::echo(&log).arc()],
        ApprovalPolicy::new(ApprovalMode::Confirm),
    );
    let approver = PendingApprover::default();
    let cancel = CancellationToken::new();
    {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            cancel.cancel();
        });
    }
    let started = Instant::now();
    let (outcome, events) = h.run(&client, &approver, &cancel).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(outcome, TurnOutcome::Cancelled { rounds: 1, .. }),
        "{outcome:?}"
    );
    assert_eq!(approver.asked.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(
        log.entries().iter().all(|e| !e.starts_with("start")),
        "nothing ran: {:#?}",
        log.entries()
    );
    assert_eq!(server.requests().len(), 1);
    assert_history_well_formed(&h.history);
    let results = last_results(&h.history);
    let ids: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(ids, ["e1", "w1", "x1", "w2"]);
    assert!(results.iter().all(|r| r.2), "{results:?}");
    assert!(results[2].1.contains("is not available"), "{results:?}");
    for r in [&results[0], &results[1], &results[3]] {
        assert!(r.1.contains("cancelled"), "{r:?}");
    }
    assert_eq!(
        tool_events(&events)
            .iter()
            .filter(|e| matches!(e, Ev::Finished { .. }))
            .count(),
        4
    );
}

#[tokio::test]
async fn a_failed_provider_turn_leaves_history_unchanged_and_well_formed() {
    let log = Log::default();
    // First turn fails outright.
    let server = server(vec![Reply::json(
        400,
        r#"{"error":{"message":"bad request","type":"invalid_request_error"}}"#,
    )])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    let before = h.history.clone();
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    assert!(
        matches!(&outcome, TurnOutcome::Failed { error, rounds: 0, .. } if error.status() == Some(400)),
        "{outcome:?}"
    );
    assert_eq!(h.history, before);

    // A round, then the continuation breaks off mid-stream (after a tool call started).
    let broken = WIRE.turn(
        &[text("Next I will"), call("c2", "echo", json!({"n": 2}))],
        (10, 10),
    );
    let cut = broken.body.len() / 2;
    let server = server_of(vec![
        WIRE.turn(&[call("c1", "echo", json!({"n": 1}))], (10, 10)),
        broken.cut_after(cut),
    ])
    .await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    let (outcome, _) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    let TurnOutcome::Failed { error, rounds, .. } = &outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(*rounds, 1);
    assert_eq!(error.category, ErrorCategory::Network, "{error:?}");
    assert_eq!(server.requests().len(), 2);
    // system, user, the first turn, its results: nothing of the broken turn.
    assert_eq!(h.history.len(), 4, "{:#?}", h.history);
    assert_eq!(h.history.last().unwrap().role, Role::User);
    assert!(h
        .history
        .iter()
        .flat_map(|m| &m.blocks)
        .all(|b| !matches!(b, ContentBlock::ToolUse { id, .. } if id == "c2")));
    assert_history_well_formed(&h.history);
    assert_eq!(log.count(r#"start echo {"n":2}"#), 0);
}

#[tokio::test]
async fn cancelling_while_a_turn_streams_leaves_history_unchanged() {
    let log = Log::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    // A server that accepts and never answers: the turn is pending when the cancel comes.
    let url = format!("http://{}", listener.local_addr().unwrap());
    let client = qore_client::Client::new(
        qore_client::protocols::by_name("openai-chat").unwrap(),
        qore_client::ClientConfig::new(url),
    )
    .unwrap();
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    let before = h.history.clone();
    let cancel = CancellationToken::new();
    {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cancel.cancel();
        });
    }
    let (outcome, _) = h
        .run(&client, &ScriptedApprover::silent(&log), &cancel)
        .await;
    assert!(
        matches!(outcome, TurnOutcome::Cancelled { rounds: 0, .. }),
        "{outcome:?}"
    );
    assert_eq!(h.history, before);
    drop(listener);
}

#[tokio::test]
async fn concurrent_runs_share_no_state() {
    let log = Log::default();
    let same = |n: &str| WIRE.turn(&[call(n, "echo", json!({"q": "same"}))], (10, 10));
    // Two runs, each seeing the same call twice: a shared repetition counter would stop
    // one of them at three.
    let a = server(vec![same("a1"), same("a2"), WIRE.answer("a")]).await;
    let b = server(vec![same("b1"), same("b2"), WIRE.answer("b")]).await;
    let (ca, cb) = (WIRE.client(&a), WIRE.client(&b));
    let registry_tools = || vec![TestTool::echo(&log).arc()];
    let mut ha = Harness::new(registry_tools(), ApprovalPolicy::default());
    let mut hb = Harness::new(registry_tools(), ApprovalPolicy::default());
    let (sa, sb) = (
        ScriptedApprover::silent(&log),
        ScriptedApprover::silent(&log),
    );
    let cancel = CancellationToken::new();
    let ((oa, _), (ob, _)) = tokio::join!(ha.run(&ca, &sa, &cancel), hb.run(&cb, &sb, &cancel));
    assert_eq!(finished_rounds(&oa), 2);
    assert_eq!(finished_rounds(&ob), 2);
    assert_eq!(ha.history.last().unwrap().text(), "a");
    assert_eq!(hb.history.last().unwrap().text(), "b");
}

#[test]
fn the_registry_refuses_taken_names_and_broken_schemas_and_keeps_registration_order() {
    use qore_client::tool_loop::ToolRegistry;
    let log = Log::default();
    let mut registry = ToolRegistry::new();
    registry
        .extend(vec![
            TestTool::new("b", &log).arc(),
            TestTool::new("a", &log).arc(),
            TestTool::new("c", &log).arc(),
        ])
        .unwrap();
    let names: Vec<&str> = registry.specs().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["b", "a", "c"]);
    let taken = registry.add(TestTool::new("a", &log).arc()).unwrap_err();
    assert_eq!(taken.category, ErrorCategory::Config);
    assert!(taken.message.contains("\"a\""), "{}", taken.message);
    let broken = registry
        .add(
            TestTool::new("d", &log)
                .schema(json!({"type": "object", "properties": {"x": {"type": 5}}}))
                .arc(),
        )
        .unwrap_err();
    assert_eq!(broken.category, ErrorCategory::Config);
    assert!(broken.message.contains("\"d\""), "{}", broken.message);
    assert!(registry.get("d").is_none());
    assert_eq!(registry.specs().len(), 3, "nothing half-registered");
    assert!(registry.add(TestTool::new("", &log).arc()).is_err());
}

#[tokio::test]
async fn rounds_are_the_turns_that_ended_with_tool_calls() {
    // Limit 2, fail mode: turns 1 and 2 run, turn 3's calls are answered "not run".
    let log = Log::default();
    let server = server(many_rounds(3)).await;
    let client = WIRE.client(&server);
    let mut h = Harness::new(vec![TestTool::echo(&log).arc()], ApprovalPolicy::default());
    h.config.max_rounds = 2;
    h.config.at_round_limit = AtRoundLimit::Fail;
    let (outcome, events) = h
        .run(
            &client,
            &ScriptedApprover::silent(&log),
            &CancellationToken::new(),
        )
        .await;
    let TurnOutcome::Failed {
        limit: Some(reason),
        rounds,
        ..
    } = outcome
    else {
        panic!("{outcome:?}");
    };
    assert_eq!(reason, LoopStop::RoundLimit { rounds: 2 });
    assert_eq!(rounds, 3, "three turns ended with tool calls");
    let started: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            Ev::Starting { round, .. } => Some(*round),
            _ => None,
        })
        .collect();
    assert_eq!(started, [1, 2], "only two rounds of calls ran");
}
