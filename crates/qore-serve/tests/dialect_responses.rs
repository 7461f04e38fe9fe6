//! The Responses dialect against real traffic: every recorded Responses request body in
//! `../shared/fixtures` (OpenAI, the ChatGPT Codex backend, OpenRouter, llama.cpp) decodes,
//! except what the dialect refuses by design (file inputs: a 400 naming `input_file`), and
//! what decodes encodes again through qore-client's Responses codec; plus a hand-written
//! request shaped like codex's; and every recorded stream, as qore-client decodes it,
//! re-encoded here decodes to the same turn.

use std::collections::VecDeque;
use std::sync::OnceLock;

use axum::http::HeaderMap;
use qore_client::protocols::openai_responses::OpenAiResponses as ClientResponses;
use qore_client::transport::sse::SseFramer;
use qore_client::{ChatRequest, Protocol, RequestOptions};
use qore_core::{ContentBlock, MessageAssembler, ResponseEvent, Role, StreamOutcome};
use qore_serve::dialect::openai_responses::OpenAiResponses;
use qore_serve::dialect::Dialect;
use qore_serve::ReplyMeta;
use qore_testkit::cassette::{fixtures_dir, load_cassettes, Cassette};
use serde_json::json;

/// The recorded traffic, loaded once for every test here; `None` without fixtures.
fn cassettes() -> Option<&'static [Cassette]> {
    static CASSETTES: OnceLock<Option<Vec<Cassette>>> = OnceLock::new();
    let loaded = CASSETTES.get_or_init(|| {
        let dir = fixtures_dir()?;
        Some(load_cassettes(&dir).expect("fixtures load"))
    });
    loaded.as_deref()
}

#[test]
fn every_recorded_responses_request_decodes() {
    let Some(cassettes) = cassettes() else {
        eprintln!("no fixtures: skipped");
        return;
    };
    let (mut decoded, mut refused, mut failures) = (0, 0, Vec::new());
    for cassette in cassettes {
        for (n, exchange) in cassette.exchanges.iter().enumerate() {
            if exchange.method != "POST" || !exchange.path.ends_with("/responses") {
                continue;
            }
            let Some(body) = &exchange.request_body else {
                continue;
            };
            let name = format!("{} #{n}", cassette.name());
            match OpenAiResponses.decode(body.as_bytes(), &HeaderMap::new()) {
                Ok(inbound) => {
                    decoded += 1;
                    let options = RequestOptions::default();
                    let request = ChatRequest {
                        model: &inbound.model,
                        history: &inbound.history,
                        tools: &inbound.tools,
                        options: &options,
                    };
                    if let Err(error) = ClientResponses::default().encode(&request) {
                        failures.push(format!("{name}: re-encoding: {error:?}"));
                    }
                }
                Err(error) if error.message.contains("input_file") => refused += 1,
                Err(error) => {
                    failures.push(format!("{name}: {} ({:?})", error.message, error.param))
                }
            }
        }
    }
    eprintln!("{decoded} Responses requests decoded, {refused} refused for input_file");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(decoded >= 150, "only {decoded} Responses requests found");
    assert!(refused <= 2, "{refused} refused for input_file");
}

#[test]
fn a_codex_responses_request_decodes() {
    let body = json!({
        "model": "gpt-5-codex",
        "instructions": "You are Codex, a coding agent.",
        "input": [
            {"type": "message", "role": "developer",
                "content": [{"type": "input_text", "text": "<permissions>workspace-write</permissions>"}]},
            {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]},
            {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "fix the bug"}]},
            {"type": "reasoning", "id": "rs_1", "content": null, "encrypted_content": "gAAAAABenc",
                "summary": [{"type": "summary_text", "text": "**Looking at files**"}]},
            {"type": "function_call", "id": "fc_1", "name": "shell", "call_id": "call_1",
                "arguments": "{\"command\":[\"ls\"]}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "Cargo.toml\nsrc"},
            {"type": "custom_tool_call", "id": "ctc_1", "status": "completed", "call_id": "call_2",
                "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch"},
            {"type": "custom_tool_call_output", "call_id": "call_2", "output": "Done"},
            {"type": "web_search_call", "id": "ws_1", "status": "completed",
                "action": {"type": "search", "query": "rust"}},
            {"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "Fixed.", "annotations": []}]},
            {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "thanks"}]},
        ],
        "tools": [
            {"type": "function", "name": "shell", "description": "Runs a command.", "strict": false,
                "parameters": {"type": "object", "properties": {"command": {"type": "array",
                    "items": {"type": "string"}}}, "required": ["command"],
                    "additionalProperties": false}},
            {"type": "custom", "name": "apply_patch", "description": "Edit files.",
                "format": {"type": "grammar", "syntax": "lark", "definition": "start: x"}},
            {"type": "web_search"},
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": false,
        "stream": true,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0199a1b2-c3d4",
        "text": {"verbosity": "medium"},
        "client_metadata": {"x-codex-turn": "1"},
    });
    let inbound = OpenAiResponses
        .decode(body.to_string().as_bytes(), &HeaderMap::new())
        .expect("codex's request decodes");
    assert!(inbound.stream && !inbound.store);
    let shape: Vec<(Role, usize)> = (inbound.history.iter())
        .map(|m| (m.role, m.blocks.len()))
        .collect();
    assert_eq!(
        shape,
        [
            (Role::System, 1),
            (Role::System, 1),
            (Role::User, 2),
            (Role::Assistant, 2),
            (Role::User, 1),
            (Role::Assistant, 1),
            (Role::User, 1),
        ]
    );
    assert_eq!(
        inbound.history.messages()[3].blocks[0],
        ContentBlock::Thinking {
            text: "**Looking at files**".into(),
            signature: Some("gAAAAABenc".into()),
        }
    );
    assert_eq!(inbound.tools.len(), 1);
    assert_eq!(inbound.tools[0].name, "shell");
    let mut dropped = inbound.dropped.clone();
    dropped.sort();
    assert_eq!(
        dropped,
        [
            "client_metadata",
            "custom",
            "custom_tool_call",
            "custom_tool_call_output",
            "parallel_tool_calls",
            "prompt_cache_key",
            "reasoning",
            "text.verbosity",
            "web_search",
            "web_search_call",
        ]
    );
}

/// Every field of a recorded codex request, top-level and in each input item, swapped for
/// every JSON type: each body is answered, `Ok` or a 400, and nothing panics.
#[test]
fn responses_with_wrong_types_anywhere_are_400s_never_panics() {
    let Some(cassettes) = cassettes() else {
        return;
    };
    let bodies: Vec<serde_json::Value> = (cassettes.iter())
        .filter(|c| c.provider == "chatgpt")
        .flat_map(|c| &c.exchanges)
        .filter_map(|e| e.request_json())
        .take(8)
        .collect();
    assert!(!bodies.is_empty());
    let swaps = [
        json!(null),
        json!(7),
        json!("x"),
        json!([]),
        json!({}),
        json!(true),
        json!([1]),
    ];
    let decode = |body: &serde_json::Value| {
        let result = OpenAiResponses.decode(body.to_string().as_bytes(), &HeaderMap::new());
        if let Err(error) = result {
            assert_eq!(error.status, 400, "{}", error.message);
        }
    };
    for body in &bodies {
        let object = body.as_object().unwrap();
        for key in object.keys() {
            for swap in &swaps {
                let mut changed = body.clone();
                changed[key] = swap.clone();
                decode(&changed);
            }
        }
        let items = body["input"].as_array().cloned().unwrap_or_default();
        for (index, item) in items.iter().enumerate() {
            for key in item.as_object().into_iter().flat_map(|o| o.keys()) {
                for swap in &swaps {
                    let mut changed = body.clone();
                    changed["input"][index][key] = swap.clone();
                    decode(&changed);
                    changed["input"][index][key] = json!([{"type": "input_text", "text": swap}]);
                    decode(&changed);
                }
            }
        }
    }
}

/// What qore-client's Responses decoder makes of an SSE body, folded.
fn client_turn(bytes: &[u8]) -> StreamOutcome {
    let mut decoder = ClientResponses::default().decoder();
    let mut framer = SseFramer::new();
    let mut out = VecDeque::new();
    let mut result = framer.feed(bytes, |frame| decoder.frame(frame, &mut out));
    if result.is_ok() {
        result = framer
            .finish(|frame| decoder.frame(frame, &mut out))
            .map(|_| ());
    }
    let mut assembler = MessageAssembler::new();
    out.iter().for_each(|event| assembler.apply(event));
    if let Err(error) = result.and_then(|()| decoder.finish(&mut out)) {
        assembler.apply(&ResponseEvent::Error { error });
    }
    assembler.finish()
}

/// Every recorded Responses stream that finishes, decoded by qore-client, re-encoded by
/// this dialect and decoded again, is the same turn (text, reasoning and signatures, tool
/// calls, stop reason, usage but the cache writes this wire cannot say).
#[test]
fn recorded_responses_streams_survive_a_round_trip_through_the_encoder() {
    let Some(cassettes) = cassettes() else {
        return;
    };
    let meta = ReplyMeta {
        id: "resp_01REPLAY".into(),
        model: "m".into(),
        created: 0,
        include_usage: false,
    };
    let mut replayed = 0;
    for cassette in cassettes {
        for (n, exchange) in cassette.exchanges.iter().enumerate() {
            if !exchange.path.ends_with("/responses")
                || !exchange.is_sse()
                || exchange.status != 200
            {
                continue;
            }
            let name = format!("{} #{n}", cassette.name());
            // The events as qore-client decodes them, and the turn they make.
            let mut decoder = ClientResponses::default().decoder();
            let mut events = VecDeque::new();
            let mut framer = SseFramer::new();
            let bytes = exchange.response_bytes();
            let fed = framer.feed(&bytes, |frame| decoder.frame(frame, &mut events));
            let mut outcome = client_turn(&bytes);
            if fed.is_err() || !matches!(outcome, StreamOutcome::Finished { .. }) {
                continue;
            }
            let mut encoder = OpenAiResponses.encoder(&meta);
            let mut out = Vec::new();
            encoder.start(&mut out);
            events
                .iter()
                .for_each(|event| encoder.event(event, &mut out));
            encoder.finish(&outcome, None, &mut out);
            if let StreamOutcome::Finished { usage, .. } = &mut outcome {
                usage.cache_creation_input_tokens = None;
            }
            assert_eq!(client_turn(&out), outcome, "{name}");
            replayed += 1;
        }
    }
    eprintln!("{replayed} recorded Responses streams replayed");
    assert!(replayed >= 50, "only {replayed} streams replayed");
}
