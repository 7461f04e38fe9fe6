//! `qore run --protocol P` and `qore models --protocol P` for every wire protocol, against
//! recorded provider answers replayed from loopback in small irregular slices. What qore
//! must print is read from the recorded bytes by one small oracle per wire, never from qore.

mod common;

use std::time::Duration;

use common::{
    away_from_the_local_server, base_url, command, exchange_at, ndjson, replay, run_cmd,
    run_with_limit, split_target, sse_data, text_stdout, wire, Run, IRREGULAR,
};
use qore_client::protocols::NAMES;
use qore_testkit::{reply_from_exchange, Exchange, RecordedRequest, ReplayServer};
use serde_json::Value;

/// What a recorded answer says, read straight from the wire.
#[derive(Debug, Default)]
struct Answer {
    /// The answer text: the text deltas, concatenated.
    text: String,
    /// The reasoning, concatenated (never part of the text).
    thinking: String,
}

/// One recorded streamed answer for one protocol.
struct Case {
    protocol: &'static str,
    /// Under `rig-cassettes/`.
    cassette: &'static str,
    /// Which exchange of the cassette (from 0; most record one).
    index: usize,
    /// The recorded path ends with the protocol's chat path as the provider documents it;
    /// what comes before is the base URL given to `--url`. `{model}` stands for the model.
    chat_path: &'static str,
    /// Reads the recorded response body.
    oracle: fn(&str) -> Answer,
    /// Request headers qore must send with exactly their recorded values.
    recorded_headers: &'static [&'static str],
    /// The protocol is being merged: skipped (with a note) while
    /// `qore_client::protocols::NAMES` lacks it.
    merging: bool,
}

const CASES: &[Case] = &[
    Case {
        protocol: "anthropic",
        cassette: "anthropic/streaming/streaming_smoke.yaml",
        index: 0,
        chat_path: "/v1/messages",
        oracle: anthropic_answer,
        recorded_headers: &["anthropic-version"],
        merging: false,
    },
    Case {
        protocol: "anthropic",
        cassette: "anthropic/streaming_grammar/thinking_multi_block_turn.yaml",
        index: 0,
        chat_path: "/v1/messages",
        oracle: anthropic_answer,
        recorded_headers: &["anthropic-version"],
        merging: false,
    },
    Case {
        protocol: "gemini",
        cassette: "gemini/streaming/example_streaming_prompt.yaml",
        index: 0,
        chat_path: "/v1beta/models/{model}:streamGenerateContent",
        oracle: gemini_answer,
        recorded_headers: &[],
        merging: false,
    },
    Case {
        protocol: "gemini",
        cassette: "gemini/streaming/streaming_smoke.yaml",
        index: 0,
        chat_path: "/v1beta/models/{model}:streamGenerateContent",
        oracle: gemini_answer,
        recorded_headers: &[],
        merging: false,
    },
    Case {
        protocol: "ollama",
        cassette: "ollama/streaming/streaming_smoke.yaml",
        index: 0,
        chat_path: "/api/chat",
        oracle: ollama_answer,
        recorded_headers: &[],
        merging: false,
    },
    Case {
        protocol: "ollama",
        cassette: "ollama/reasoning_roundtrip/streaming.yaml",
        index: 0,
        chat_path: "/api/chat",
        oracle: ollama_answer,
        recorded_headers: &[],
        merging: false,
    },
    Case {
        protocol: "llamacpp",
        cassette: "llamacpp/content_matrix/unicode_across_chunks.yaml",
        index: 0,
        chat_path: "/chat/completions",
        oracle: chat_answer,
        recorded_headers: &[],
        merging: false,
    },
    Case {
        protocol: "llamacpp",
        cassette: "llamacpp/response_shape_matrix/reasoning_streaming.yaml",
        index: 0,
        chat_path: "/chat/completions",
        oracle: chat_answer,
        recorded_headers: &[],
        merging: false,
    },
    Case {
        protocol: "mistral",
        cassette: "mistral/history_roundtrip_matrix/streaming_mistral_small_raw_text.yaml",
        index: 0,
        chat_path: "/chat/completions",
        oracle: chat_answer,
        recorded_headers: &[],
        merging: false,
    },
    Case {
        protocol: "openai-chat",
        cassette: "openai/regression/chat_compat_finish_reason_natural.yaml",
        index: 0,
        chat_path: "/chat/completions",
        oracle: chat_answer,
        recorded_headers: &[],
        merging: false,
    },
    Case {
        protocol: "openai-responses",
        cassette: "openai/streaming/streaming_smoke.yaml",
        index: 0,
        chat_path: "/responses",
        oracle: responses_answer,
        recorded_headers: &[],
        merging: true,
    },
    Case {
        protocol: "openai-responses",
        cassette: "openai/streaming_grammar/reasoning_then_text.yaml",
        index: 0,
        chat_path: "/responses",
        oracle: responses_answer,
        recorded_headers: &[],
        merging: true,
    },
];

/// Anthropic Messages: `content_block_delta` frames, `text_delta` (text) and
/// `thinking_delta` (reasoning).
fn anthropic_answer(body: &str) -> Answer {
    let mut answer = Answer::default();
    for event in sse_data(body) {
        if event["type"] != "content_block_delta" {
            continue;
        }
        let delta = &event["delta"];
        match delta["type"].as_str() {
            Some("text_delta") => answer.text.push_str(delta["text"].as_str().expect("text")),
            Some("thinking_delta") => answer
                .thinking
                .push_str(delta["thinking"].as_str().expect("thinking")),
            _ => {}
        }
    }
    answer
}

/// Gemini: the text parts of the first candidate of every chunk; `thought: true` parts are
/// reasoning.
fn gemini_answer(body: &str) -> Answer {
    let mut answer = Answer::default();
    for chunk in sse_data(body) {
        let candidates = chunk["candidates"].as_array().cloned().unwrap_or_default();
        for candidate in candidates
            .iter()
            .filter(|c| c["index"].as_u64().unwrap_or(0) == 0)
        {
            for part in candidate["content"]["parts"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let Some(text) = part["text"].as_str() else {
                    continue;
                };
                if part["thought"] == true {
                    answer.thinking.push_str(text);
                } else {
                    answer.text.push_str(text);
                }
            }
        }
    }
    answer
}

/// Ollama: one JSON object a line, `message.content` (text) and `message.thinking`.
fn ollama_answer(body: &str) -> Answer {
    let mut answer = Answer::default();
    for line in ndjson(body) {
        let message = &line["message"];
        if let Some(text) = message["content"].as_str() {
            answer.text.push_str(text);
        }
        if let Some(text) = message["thinking"].as_str() {
            answer.thinking.push_str(text);
        }
    }
    answer
}

/// Chat Completions (OpenAI, llama.cpp, Mistral): `delta.content` and the reasoning fields.
fn chat_answer(body: &str) -> Answer {
    let wire = wire(body);
    Answer {
        text: wire.text,
        thinking: wire.reasoning,
    }
}

/// Responses API: `response.output_text.delta` (text) and the reasoning summary deltas.
fn responses_answer(body: &str) -> Answer {
    let mut answer = Answer::default();
    for event in sse_data(body) {
        let delta = event["delta"].as_str();
        match event["type"].as_str() {
            Some("response.output_text.delta") => {
                answer.text.push_str(delta.expect("delta"));
            }
            Some("response.reasoning_summary_text.delta") => {
                answer.thinking.push_str(delta.expect("delta"));
            }
            _ => {}
        }
    }
    answer
}

const PROMPT: &[&str] = &["Explain", "it", "in", "one", "sentence."];

/// What qore sends for [`PROMPT`]: the words joined by single spaces.
fn prompt_text() -> String {
    PROMPT.join(" ")
}

/// A case's recording, ready to replay.
struct Loaded {
    ex: Exchange,
    /// The recorded model: the request body's `model`, else the `models/<id>:` of the path.
    model: String,
    answer: Answer,
}

/// `false` (with a note) when the case's protocol is still being merged into this build.
fn available(case: &Case) -> bool {
    if NAMES.contains(&case.protocol) {
        return true;
    }
    assert!(
        case.merging,
        "protocol {:?} is missing from qore_client::protocols::NAMES ({NAMES:?})",
        case.protocol
    );
    eprintln!(
        "skipped {} ({}): `qore` does not know the protocol yet (being merged; \
         qore_client::protocols::NAMES = {NAMES:?})",
        case.protocol, case.cassette
    );
    false
}

fn load(case: &Case) -> Option<Loaded> {
    let ex = exchange_at(case.cassette, case.index)?;
    let model = match ex
        .request_json()
        .and_then(|b| b["model"].as_str().map(str::to_owned))
    {
        Some(model) => model,
        None => ex
            .path
            .split_once("/models/")
            .and_then(|(_, rest)| rest.split_once(':'))
            .map(|(model, _)| model.to_owned())
            .unwrap_or_else(|| panic!("{}: no model in the recording", case.cassette)),
    };
    let answer = (case.oracle)(&ex.response_body);
    assert!(
        !answer.text.is_empty(),
        "{}: pick a recording with text",
        case.cassette
    );
    Some(Loaded { ex, model, answer })
}

/// The base URL to give `--url` so that qore's request lands on the recorded path.
fn case_url(case: &Case, loaded: &Loaded, server: &ReplayServer) -> String {
    let chat_path = case.chat_path.replace("{model}", &loaded.model);
    base_url(server, &loaded.ex, &chat_path)
}

/// `qore run --protocol P --url <replay> --model M EXTRA... PROMPT...` with `env` set; the
/// run and the requests the server got.
async fn run_case(
    case: &Case,
    loaded: &Loaded,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Run, Vec<RecordedRequest>) {
    let server = replay(&loaded.ex).await;
    let url = case_url(case, loaded, &server);
    let mut args = vec![
        "run",
        "--protocol",
        case.protocol,
        "--url",
        &url,
        "--model",
        &loaded.model,
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(PROMPT);
    let mut cmd = command(&args);
    for (name, value) in env {
        cmd.env(name, value);
    }
    let run = run_cmd(cmd).await;
    (run, server.requests())
}

/// The server got exactly one request, the one recorded: method, path, the recorded query
/// parameters (but the redacted `key`), the recorded headers named by the case, the model,
/// `stream` as recorded, and the prompt.
fn check_request(case: &Case, loaded: &Loaded, requests: &[RecordedRequest]) {
    let what = case.cassette;
    assert_eq!(requests.len(), 1, "{what}: {requests:?}");
    let request = &requests[0];
    let ex = &loaded.ex;
    assert_eq!(request.method, ex.method, "{what}");
    let (path, query) = split_target(&request.path);
    assert_eq!(path, ex.path, "{what}: {}", request.path);
    for (name, value) in ex.query.iter().filter(|(name, _)| name != "key") {
        assert!(
            query.contains(&(name.clone(), value.clone())),
            "{what}: {name}={value} missing from {}",
            request.path
        );
    }
    for name in case.recorded_headers {
        let recorded = ex.request_header(name);
        assert!(recorded.is_some(), "{what}: no {name} in the recording");
        assert_eq!(request.header(name), recorded, "{what}: header {name}");
    }
    let body = request.json().expect("the request body is JSON");
    let in_body = body["model"] == loaded.model.as_str();
    assert!(
        in_body || path.contains(&loaded.model),
        "{what}: model: {body}"
    );
    let recorded = ex.request_json().expect("the recorded request is JSON");
    if let Some(stream) = recorded.get("stream") {
        assert_eq!(&body["stream"], stream, "{what}: {body}");
    }
    let sent = String::from_utf8_lossy(&request.body);
    assert!(sent.contains(&prompt_text()), "{what}: prompt: {sent}");
}

#[tokio::test]
async fn run_prints_the_recorded_text_for_every_protocol() {
    for case in CASES {
        if !available(case) {
            continue;
        }
        let Some(loaded) = load(case) else { return };
        let what = format!("{} {}", case.protocol, case.cassette);
        let (run, requests) = run_case(case, &loaded, &[], &[]).await;
        assert_eq!(run.code, Some(0), "{what}: {run:?}");
        assert_eq!(run.stdout, text_stdout(&loaded.answer.text), "{what}");
        // Reasoning goes to stderr (qore may end its lines), nothing else does.
        assert_eq!(
            run.stderr.replace('\n', ""),
            loaded.answer.thinking.replace('\n', ""),
            "{what}"
        );
        check_request(case, &loaded, &requests);
    }
}

#[tokio::test]
async fn run_json_ends_with_a_result_carrying_the_recorded_text() {
    for case in CASES {
        if !available(case) {
            continue;
        }
        let Some(loaded) = load(case) else { return };
        let what = format!("{} {}", case.protocol, case.cassette);
        let (run, requests) = run_case(case, &loaded, &["--json"], &[]).await;
        assert_eq!(run.code, Some(0), "{what}: {run:?}");
        assert_eq!(run.stderr, "", "{what}");
        let lines = run.json_lines();
        let (result, events) = lines.split_last().expect("at least one line");
        assert_eq!(result["type"], "result", "{what}: {}", run.stdout);
        assert_eq!(result["text"], loaded.answer.text.as_str(), "{what}");
        let of_type = |kind: &str| -> String {
            events
                .iter()
                .filter(|e| e["type"] == kind)
                .map(|e| e["text"].as_str().expect("text"))
                .collect()
        };
        assert_eq!(of_type("text_delta"), loaded.answer.text, "{what}");
        assert_eq!(of_type("thinking_delta"), loaded.answer.thinking, "{what}");
        for kind in ["result", "error", "cancelled"] {
            assert!(
                events.iter().all(|e| e["type"] != kind),
                "{what}: {kind} before the end: {}",
                run.stdout
            );
        }
        check_request(case, &loaded, &requests);
    }
}

/// Aliases accepted for `--protocol`, and the protocol each stands for.
const ALIASES: &[(&str, &str)] = &[
    ("openai", "openai-chat"),
    ("chat-completions", "openai-chat"),
    ("llama.cpp", "llamacpp"),
    ("codestral", "mistral"),
    ("anthropic-messages", "anthropic"),
    ("google", "gemini"),
    ("responses", "openai-responses"),
];

#[tokio::test]
async fn aliases_speak_the_same_wire() {
    for &(alias, protocol) in ALIASES {
        let case = CASES
            .iter()
            .find(|c| c.protocol == protocol)
            .expect("a case for the protocol");
        if !available(case) {
            continue;
        }
        let Some(loaded) = load(case) else { return };
        let aliased = Case {
            protocol: alias,
            ..*case
        };
        let (run, requests) = run_case(&aliased, &loaded, &[], &[]).await;
        assert_eq!(run.code, Some(0), "{alias}: {run:?}");
        assert_eq!(run.stdout, text_stdout(&loaded.answer.text), "{alias}");
        check_request(&aliased, &loaded, &requests);
    }
}

/// A recorded model listing and how to read its ids.
struct Listing {
    protocol: &'static str,
    cassette: &'static str,
    /// The recorded path ends with this; what comes before is the base URL.
    models_path: &'static str,
    ids: fn(&Value) -> Vec<String>,
    recorded_headers: &'static [&'static str],
}

const LISTINGS: &[Listing] = &[
    Listing {
        protocol: "anthropic",
        cassette: "anthropic/models/list_models_smoke.yaml",
        models_path: "/v1/models",
        ids: |body| strings(&body["data"], "id", ""),
        recorded_headers: &["anthropic-version"],
    },
    Listing {
        protocol: "gemini",
        cassette: "gemini/models/list_models_smoke.yaml",
        models_path: "/v1beta/models",
        ids: |body| strings(&body["models"], "name", "models/"),
        recorded_headers: &[],
    },
    Listing {
        protocol: "ollama",
        cassette: "ollama/models/list_models_smoke.yaml",
        models_path: "/api/tags",
        ids: |body| strings(&body["models"], "name", ""),
        recorded_headers: &[],
    },
];

/// `items[*][key]` in order, each without `prefix`.
fn strings(items: &Value, key: &str, prefix: &str) -> Vec<String> {
    items
        .as_array()
        .expect("a list")
        .iter()
        .map(|item| {
            let value = item[key].as_str().expect("a string");
            let value = value.strip_prefix(prefix).unwrap_or_else(|| {
                panic!("{value:?} does not start with {prefix:?}");
            });
            value.to_owned()
        })
        .collect()
}

#[tokio::test]
async fn models_lists_the_recorded_ids_in_order() {
    for listing in LISTINGS {
        let what = listing.cassette;
        let Some(ex) = exchange_at(what, 0) else {
            return;
        };
        let ids = (listing.ids)(&ex.response_json().expect("the listing is JSON"));
        assert!(ids.len() > 1, "{what}: pick a listing with several models");
        let server = ReplayServer::start_repeating(reply_from_exchange(&ex, IRREGULAR))
            .await
            .expect("server");
        let url = base_url(&server, &ex, listing.models_path);
        let args = ["models", "--protocol", listing.protocol, "--url", &url];

        let run = common::qore(&args).await;
        assert_eq!(run.code, Some(0), "{what}: {run:?}");
        let printed: Vec<&str> = run
            .stdout
            .lines()
            .map(|line| line.split('\t').next().unwrap_or_default())
            .collect();
        assert_eq!(printed, ids, "{what}");

        let mut json_args = args.to_vec();
        json_args.push("--json");
        let run = common::qore(&json_args).await;
        assert_eq!(run.code, Some(0), "{what}: {run:?}");
        let printed: Vec<String> = run
            .stdout
            .lines()
            .map(|line| {
                let value: Value = serde_json::from_str(line).expect("a JSON line");
                value["id"].as_str().expect("id").to_owned()
            })
            .collect();
        assert_eq!(printed, ids, "{what}");

        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{what}: {requests:?}");
        for request in &requests {
            assert_eq!(request.method, "GET", "{what}");
            assert_eq!(split_target(&request.path).0, ex.path, "{what}");
            for name in listing.recorded_headers {
                assert_eq!(
                    request.header(name),
                    ex.request_header(name),
                    "{what}: {name}"
                );
            }
        }
    }
}

const KEY_VAR: &str = "QORE_CLI_PROTOCOLS_TEST_KEY";
const KEY: &str = "test-key-7d1e0c";

/// Where each protocol puts the API key: header name and what precedes the key.
const CREDENTIALS: &[(&str, &str, &str)] = &[
    ("anthropic", "x-api-key", ""),
    ("gemini", "x-goog-api-key", ""),
    ("openai-chat", "authorization", "Bearer "),
];

#[tokio::test]
async fn api_key_env_reaches_the_protocols_credential_header() {
    for &(protocol, header, prefix) in CREDENTIALS {
        let case = CASES
            .iter()
            .find(|c| c.protocol == protocol)
            .expect("a case for the protocol");
        let Some(loaded) = load(case) else { return };
        let (run, requests) = run_case(
            case,
            &loaded,
            &["--api-key-env", KEY_VAR],
            &[(KEY_VAR, KEY)],
        )
        .await;
        assert_eq!(run.code, Some(0), "{protocol}: {run:?}");
        assert_eq!(run.stdout, text_stdout(&loaded.answer.text), "{protocol}");
        check_request(case, &loaded, &requests);
        let request = &requests[0];
        let expected = format!("{prefix}{KEY}");
        assert_eq!(
            request.header(header),
            Some(expected.as_str()),
            "{protocol}"
        );
        // The key goes nowhere else: no other header, not the URL.
        for (name, value) in &request.headers {
            assert!(
                name.eq_ignore_ascii_case(header) || !value.contains(KEY),
                "{protocol}: the key is also in {name}: {value}"
            );
        }
        assert!(!request.path.contains(KEY), "{protocol}: {}", request.path);
    }
}

/// `qore ARGS` kept away from the local model server, within `limit`; the run, and whether
/// it wrote to the (fresh) cache dir (it must not even try to start the server).
async fn without_local_server(args: &[&str], limit: Duration) -> (Run, bool) {
    let mut cmd = command(args);
    let cache = away_from_the_local_server(&mut cmd);
    let run = run_with_limit(cmd, limit).await;
    let touched = cache.exists();
    if touched {
        let _ = std::fs::remove_dir_all(&cache);
    }
    (run, touched)
}

#[tokio::test]
async fn protocols_the_local_server_does_not_speak_need_a_url() {
    let fast = Duration::from_secs(10);
    for protocol in ["gemini", "ollama"] {
        for args in [
            vec!["run", "--protocol", protocol, "--model", "m", "hi"],
            vec!["run", "--protocol", protocol, "hi"],
            vec!["models", "--protocol", protocol],
        ] {
            let what = args.join(" ");
            let (run, touched) = without_local_server(&args, fast).await;
            assert!(
                matches!(run.code, Some(code) if code != 0),
                "{what}: {run:?}"
            );
            let line = run.one_stderr_line();
            assert!(line.contains("--url"), "{what}: {line}");
            assert_eq!(run.stdout, "", "{what}");
            assert!(!touched, "{what}: wrote to the local server's cache dir");
        }
        // JSON mode: the same failure as the last line, a config error.
        let args = ["run", "--protocol", protocol, "--json", "hi"];
        let (run, touched) = without_local_server(&args, fast).await;
        assert!(matches!(run.code, Some(code) if code != 0), "{run:?}");
        assert!(run.one_stderr_line().contains("--url"), "{run:?}");
        let last = run.last_json();
        assert_eq!(last["type"], "error", "{last}");
        assert_eq!(last["category"], "config", "{last}");
        assert!(!touched);
    }
}

#[tokio::test]
async fn an_unknown_protocol_is_a_usage_error_listing_the_known_ones() {
    let server = ReplayServer::start(Vec::new()).await.expect("server");
    let url = server.url();
    let fast = Duration::from_secs(10);
    for args in [
        vec![
            "run",
            "--protocol",
            "nope",
            "--url",
            &url,
            "--model",
            "m",
            "hi",
        ],
        vec!["run", "--protocol", "nope", "hi"],
        vec!["models", "--protocol", "nope", "--url", &url],
        vec!["models", "--protocol", "nope"],
    ] {
        let what = args.join(" ");
        let (run, touched) = without_local_server(&args, fast).await;
        assert_eq!(run.code, Some(2), "{what}: {run:?}");
        assert_eq!(run.stdout, "", "{what}");
        let line = &run.stderr;
        assert!(line.contains("nope"), "{what}: {line}");
        for case in CASES {
            if case.merging && !NAMES.contains(&case.protocol) {
                continue;
            }
            assert!(
                line.contains(case.protocol),
                "{what}: {line:?} does not list {}",
                case.protocol
            );
        }
        assert!(!touched, "{what}: wrote to the local server's cache dir");
    }
    assert_eq!(server.requests().len(), 0, "nothing is sent");
}
