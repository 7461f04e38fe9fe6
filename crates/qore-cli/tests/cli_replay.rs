//! `qore run` against recorded provider answers replayed from loopback,
//! sliced into small irregular pieces. Every expectation is read from the recorded bytes.

mod common;

use common::{
    base_url, command, content_text, exchange, expected_stop_reason, qore, replay, run_cmd,
    text_stdout, wire, Run, Wire, IRREGULAR,
};
use qore_testkit::{reply_from_exchange, Exchange, ReplayServer};
use serde_json::{json, Value};

/// Recorded streamed text answers (`/v1/chat/completions`).
const TEXT_STREAMS: &[&str] = &[
    "openai/regression/chat_compat_finish_reason_natural.yaml",
    "openai/turn_termination_matrix/streaming_truncated_turn_reports_length_and_cap.yaml",
    "openai/truncated_turn_matrix/chat_streaming_partial_text_truncation.yaml",
    "llamacpp/content_matrix/unicode_across_chunks.yaml",
    "mistral/history_roundtrip_matrix/streaming_mistral_small_raw_text.yaml",
];

/// Recorded streamed answers that reason first (`reasoning_content`), llama.cpp and DeepSeek.
const REASONING_STREAMS: &[&str] = &[
    "llamacpp/response_shape_matrix/reasoning_streaming.yaml",
    "deepseek/streaming/streaming_prompt_smoke.yaml",
];

/// Recorded streamed tool calls (with and without text, one and two calls, nested input).
const TOOL_STREAMS: &[&str] = &[
    "openai/chat_tool_lifecycle_matrix/streaming_gpt4o_parallel_model.yaml",
    "openai/chat_tool_lifecycle_matrix/streaming_gpt41_nested_model.yaml",
    "openai/streaming_grammar_chat/tool_call_with_content.yaml",
    "mistral/agent_tool_sessions/raw_stream_complex_tool_call_deltas_have_object_arguments.yaml",
    "deepseek/reasoning_block_order/streaming_reasoner_parallel_tool_turn_leads_with_reasoning.yaml",
];

const MODEL: &str = "test-model";

/// `qore run --url <replayed exchange> --model test-model EXTRA... PROMPT_WORDS...`.
async fn run_against(server: &ReplayServer, ex: &Exchange, extra: &[&str], prompt: &[&str]) -> Run {
    let url = base_url(server, ex, "/chat/completions");
    let mut args = vec!["run", "--url", url.as_str(), "--model", MODEL];
    args.extend_from_slice(extra);
    args.extend_from_slice(prompt);
    qore(&args).await
}

/// The one request the server got is the chat request qore should have sent.
fn check_chat_request(server: &ReplayServer, path: &str, prompt: &str) {
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, path);
    let body = request.json().expect("the request body is JSON");
    assert_eq!(body["model"], MODEL, "{body}");
    assert_eq!(body["stream"], true, "{body}");
    assert_eq!(body["stream_options"]["include_usage"], true, "{body}");
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .unwrap_or_else(|| panic!("no messages in {body}"));
    assert_eq!(last["role"], "user", "{body}");
    assert_eq!(content_text(&last["content"]), prompt, "{body}");
}

fn of_type<'a>(events: &'a [Value], kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    events.iter().filter(move |e| e["type"] == kind)
}

/// A `--json` run of `wire` for `prompt`: events, then one `result` line matching the wire.
fn check_json_run(run: &Run, prompt: &str, wire: &Wire) {
    assert_eq!(run.code, Some(0), "{run:?}");
    // The saved session is named first (`{"type": "session"}`), then the stream's events.
    let mut lines = run.json_lines();
    assert_eq!(lines.remove(0)["type"], "session", "{}", run.stdout);
    let (result, events) = lines.split_last().expect("at least one line");
    let stop = expected_stop_reason(wire.finish_reason.as_deref().expect("finish_reason"));
    let usage = wire.usage.as_ref().expect("the recording reports usage");

    // The events, in wire order.
    assert_eq!(events[0]["type"], "message_start", "{}", run.stdout);
    if let Some(id) = &wire.id {
        assert_eq!(events[0]["id"], id.as_str());
    }
    if let Some(model) = &wire.model {
        assert_eq!(events[0]["model"], model.as_str());
    }
    for kind in ["message_start", "result", "error", "cancelled"] {
        let expected = usize::from(kind == "message_start");
        assert_eq!(of_type(events, kind).count(), expected, "{kind}");
    }
    let deltas: String = of_type(events, "text_delta")
        .map(|e| e["text"].as_str().expect("text"))
        .collect();
    assert_eq!(deltas, wire.text);
    let thinking: String = of_type(events, "thinking_delta")
        .map(|e| e["text"].as_str().expect("text"))
        .collect();
    assert_eq!(thinking, wire.reasoning);
    let stops: Vec<&Value> = of_type(events, "stop").collect();
    assert_eq!(stops.len(), 1, "{}", run.stdout);
    assert_eq!(stops[0]["reason"], stop);
    let last_usage = of_type(events, "usage").last().expect("a usage event");
    assert_eq!(last_usage["usage"]["input_tokens"], usage["prompt_tokens"]);
    assert_eq!(
        last_usage["usage"]["output_tokens"],
        usage["completion_tokens"]
    );

    // Tool calls: start (id, name), argument deltas, end (id, parsed input), in order.
    let starts: Vec<Value> = of_type(events, "tool_call_start")
        .map(|e| json!([e["id"], e["name"]]))
        .collect();
    let ends: Vec<Value> = of_type(events, "tool_call_end")
        .map(|e| json!([e["id"], e["input"]]))
        .collect();
    let wire_starts: Vec<Value> = wire.calls.iter().map(|c| json!([c.id, c.name])).collect();
    let wire_ends: Vec<Value> = wire
        .calls
        .iter()
        .map(|c| json!([c.id, c.input()]))
        .collect();
    assert_eq!(starts, wire_starts);
    assert_eq!(ends, wire_ends);
    for call in &wire.calls {
        let position = |kind: &str| {
            events
                .iter()
                .position(|e| e["type"] == kind && e["id"] == call.id.as_str())
                .unwrap_or_else(|| panic!("no {kind} for {}", call.id))
        };
        assert!(position("tool_call_start") < position("tool_call_end"));
        let args: String = of_type(events, "tool_call_args_delta")
            .filter(|e| e["id"] == call.id.as_str())
            .map(|e| e["delta"].as_str().expect("delta"))
            .collect();
        assert_eq!(args, call.arguments, "argument deltas of {}", call.id);
    }

    // The result line.
    assert_eq!(result["type"], "result", "{}", run.stdout);
    assert_eq!(result["text"], wire.text.as_str());
    assert_eq!(result["stop_reason"], stop);
    assert_eq!(result["usage"]["input_tokens"], usage["prompt_tokens"]);
    assert_eq!(result["usage"]["output_tokens"], usage["completion_tokens"]);
    let messages = result["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 2, "{result}");
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(
        messages[0]["blocks"],
        json!([{"type": "text", "text": prompt}])
    );
    assert_eq!(messages[1]["role"], "assistant");
    let blocks = messages[1]["blocks"].as_array().expect("blocks");
    let text: String = blocks
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().expect("text"))
        .collect();
    assert_eq!(text, wire.text);
    let thinking: String = blocks
        .iter()
        .filter(|b| b["type"] == "thinking")
        .map(|b| b["text"].as_str().expect("text"))
        .collect();
    assert_eq!(thinking, wire.reasoning);
    let tool_uses: Vec<Value> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| json!([b["id"], b["name"], b["input"]]))
        .collect();
    let wire_uses: Vec<Value> = wire
        .calls
        .iter()
        .map(|c| json!([c.id, c.name, c.input()]))
        .collect();
    assert_eq!(tool_uses, wire_uses);
}

#[tokio::test]
async fn run_prints_the_streamed_text_and_sends_one_chat_request() {
    for rel in TEXT_STREAMS {
        let Some(ex) = exchange(rel) else { return };
        let wire = wire(&ex.response_body);
        assert!(!wire.text.is_empty(), "{rel}: pick a recording with text");
        let server = replay(&ex).await;
        let run = run_against(&server, &ex, &[], &["Reply", "in", "one  sentence."]).await;
        assert_eq!(run.code, Some(0), "{rel}: {run:?}");
        assert_eq!(run.stdout, text_stdout(&wire.text), "{rel}");
        check_chat_request(&server, &ex.path, "Reply in one  sentence.");
    }
}

#[tokio::test]
async fn run_json_prints_events_then_a_result_matching_the_wire() {
    for rel in TEXT_STREAMS {
        let Some(ex) = exchange(rel) else { return };
        let server = replay(&ex).await;
        let run = run_against(&server, &ex, &["--json"], &["Say something."]).await;
        check_json_run(&run, "Say something.", &wire(&ex.response_body));
        assert_eq!(run.stderr, "", "{rel}");
        check_chat_request(&server, &ex.path, "Say something.");
    }
}

#[tokio::test]
async fn run_json_reports_the_recorded_tool_calls() {
    for rel in TOOL_STREAMS {
        let Some(ex) = exchange(rel) else { return };
        let wire = wire(&ex.response_body);
        assert!(
            !wire.calls.is_empty(),
            "{rel}: pick a recording with tool calls"
        );
        let server = replay(&ex).await;
        let run = run_against(&server, &ex, &["--json"], &["Use the tools."]).await;
        check_json_run(&run, "Use the tools.", &wire);
    }
}

#[tokio::test]
async fn run_text_mode_prints_tool_calls_on_stderr() {
    for rel in [
        "openai/streaming_grammar_chat/tool_call_with_content.yaml",
        "deepseek/reasoning_block_order/streaming_reasoner_parallel_tool_turn_leads_with_reasoning.yaml",
    ] {
        let Some(ex) = exchange(rel) else { return };
        let wire = wire(&ex.response_body);
        let server = replay(&ex).await;
        let run = run_against(&server, &ex, &[], &["Use the tools."]).await;
        assert_eq!(run.code, Some(0), "{rel}: {run:?}");
        assert_eq!(run.stdout, text_stdout(&wire.text), "{rel}");
        // The reasoning (its line finished), then one line per tool call, in wire order.
        let reasoning = match wire.reasoning.as_str() {
            "" => String::new(),
            text => text_stdout(text),
        };
        let calls = run
            .stderr
            .strip_prefix(&reasoning)
            .unwrap_or_else(|| panic!("{rel}: stderr does not start with the reasoning"));
        let lines: Vec<&str> = calls.lines().collect();
        assert_eq!(lines.len(), wire.calls.len(), "{rel}: {calls:?}");
        for (line, call) in lines.iter().zip(&wire.calls) {
            let prefix = format!("[tool call {} ", call.name);
            let suffix = format!("(id {})]", call.id);
            assert!(line.starts_with(&prefix) && line.ends_with(&suffix), "{rel}: {line:?}");
        }
    }
}

#[tokio::test]
async fn reasoning_goes_to_stderr_and_into_thinking_events() {
    for rel in REASONING_STREAMS {
        let Some(ex) = exchange(rel) else { return };
        let wire = wire(&ex.response_body);
        assert!(!wire.reasoning.is_empty() && !wire.text.is_empty(), "{rel}");

        let server = replay(&ex).await;
        let run = run_against(&server, &ex, &[], &["Think first."]).await;
        assert_eq!(run.code, Some(0), "{rel}: {run:?}");
        assert_eq!(run.stdout, text_stdout(&wire.text), "{rel}");
        assert_eq!(run.stderr, text_stdout(&wire.reasoning), "{rel}");

        let server = replay(&ex).await;
        let run = run_against(&server, &ex, &["--json"], &["Think first."]).await;
        check_json_run(&run, "Think first.", &wire);
    }
}

#[tokio::test]
async fn endpoint_overrides_the_request_path() {
    let Some(ex) = exchange(TEXT_STREAMS[0]) else {
        return;
    };
    let server = replay(&ex).await;
    let url = format!("{}/v1", server.url());
    let run = qore(&[
        "run",
        "--url",
        &url,
        "--endpoint",
        "/custom/chat",
        "--model",
        MODEL,
        "hello",
    ])
    .await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, text_stdout(&wire(&ex.response_body).text));
    check_chat_request(&server, "/v1/custom/chat", "hello");
}

const KEY_VAR: &str = "QORE_CLI_TEST_API_KEY";

#[tokio::test]
async fn api_key_env_sends_a_bearer_token_and_only_then() {
    let Some(ex) = exchange(TEXT_STREAMS[0]) else {
        return;
    };
    // With the variable set: `authorization: Bearer <value>`.
    let server = ReplayServer::start_repeating(reply_from_exchange(&ex, IRREGULAR))
        .await
        .expect("server");
    let url = base_url(&server, &ex, "/chat/completions");
    let args = ["run", "--url", &url, "--model", MODEL];
    let mut cmd = command(&args);
    cmd.args(["--api-key-env", KEY_VAR, "hi"])
        .env(KEY_VAR, "sk-test-4242");
    let run = run_cmd(cmd).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-test-4242")
    );

    // With the variable unset: a one-line error naming it, nothing sent.
    let mut cmd = command(&args);
    cmd.args(["--api-key-env", KEY_VAR, "hi"])
        .env_remove(KEY_VAR);
    let run = run_cmd(cmd).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.one_stderr_line().contains(KEY_VAR), "{run:?}");
    assert_eq!(run.stdout, "");
    assert_eq!(
        server.requests().len(),
        1,
        "nothing is sent without the key"
    );

    // Without the flag: no credential at all, even with the variable set.
    let mut cmd = command(&args);
    cmd.arg("hi").env(KEY_VAR, "sk-test-4242");
    let run = run_cmd(cmd).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].header("authorization"), None, "{requests:?}");
}

#[tokio::test]
async fn no_stream_prints_the_recorded_json_answer() {
    let rel = "llamacpp/bare_openai_client/raw_response_text_matches_normalized_choice_text.yaml";
    let Some(ex) = exchange(rel) else { return };
    let body = ex.response_json().expect("a JSON answer");
    let text = body["choices"][0]["message"]["content"]
        .as_str()
        .expect("content");

    let server = replay(&ex).await;
    let run = run_against(&server, &ex, &["--no-stream"], &["hi"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, text_stdout(text));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = requests[0].json().expect("JSON body");
    assert_ne!(sent["stream"], true, "{sent}");

    let server = replay(&ex).await;
    let run = run_against(&server, &ex, &["--no-stream", "--json"], &["hi"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let result = run.last_json();
    assert_eq!(result["type"], "result");
    assert_eq!(result["text"], text);
    assert_eq!(
        result["usage"]["input_tokens"],
        body["usage"]["prompt_tokens"]
    );
    assert_eq!(
        result["usage"]["output_tokens"],
        body["usage"]["completion_tokens"]
    );
    let finish = body["choices"][0]["finish_reason"]
        .as_str()
        .expect("finish_reason");
    assert_eq!(result["stop_reason"], expected_stop_reason(finish));
}
