//! Seed inputs for the fuzz targets (`fuzz/` and each crate's `tests/fuzz_seeded.rs`), by
//! target name: recorded response bodies for the framers and decoders, recorded request
//! bodies for the comma stripper, hand-written replies for the text tool protocol; for the
//! `qore serve` targets (`serve_*`), the recorded request bodies of each inbound wire,
//! completions bodies (hand-written, and made from recorded chat requests) and the
//! recorded `model` names behind the router's flag byte.
//!
//! Contract: [`seeds`] returns bodies only (no chunking header), each once, in fixture
//! order; an unknown target or one seeded elsewhere (`profile`: the bundled profiles, in
//! `qore-agents`) has none. [`TARGETS`] names every target the `fuzz/` crate builds (checked
//! against `fuzz/Cargo.toml` by `tests/fuzz_targets.rs`).
//! [`run_seeded`] is the short, fixed-seed proptest pass over a target that CI runs.

use std::collections::HashSet;

use crate::Cassette;

/// Every fuzz target, as `fuzz/` names its binaries.
pub const TARGETS: &[&str] = &[
    "sse_framer",
    "ndjson_framer",
    "decode_openai_chat",
    "decode_openai_responses",
    "decode_anthropic",
    "decode_gemini",
    "decode_ollama",
    "decode_llamacpp",
    "decode_mistral",
    "text_protocol",
    "json_commas",
    "profile",
    "serve_decode_chat",
    "serve_decode_responses",
    "serve_decode_messages",
    "serve_completions",
    "serve_route",
];

/// Whether `target` reads a chunking header before its body (`qore_client::fuzz_targets`);
/// the others take their input as it is.
pub fn is_chunked(target: &str) -> bool {
    !matches!(target, "json_commas" | "profile") && !target.starts_with("serve_")
}

/// llama.cpp `/completion` chunks, which the recordings do not have.
const LLAMACPP_COMPLETION: &str = concat!(
    "data: {\"index\":0,\"content\":\"a\",\"tokens\":[253],\"stop\":false}\n\n",
    "data: {\"index\":0,\"content\":\" + b\",\"stop\":false,\"id_slot\":-1}\n\n",
    "data: {\"content\":\"\",\"stop\":true,\"model\":\"m\",\"stop_type\":\"limit\",",
    "\"tokens_predicted\":2,\"tokens_evaluated\":10,\"timings\":{\"cache_n\":9}}\n\n",
);

/// Replies a model might write under the text tool protocol.
const REPLIES: &[&str] = &[
    "Let me look.\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}</tool_call>",
    "<tool_call>\n```json\n{\"name\": \"search\", \"args\": {\"q\": \"<\\/tool_call>\"}}\n```\n</tool_call> done",
    "Use it like this:\n```\n<tool_call>{\"name\": \"x\"}</tool_call>\n```\nand `<tool_call>` inline.",
    "> ~~~~\n> <tool_call>{\"name\": \"x\"}</tool_call>\n> ~~~~\n- ```rust\n  code\n  ```\n",
    "I will write <tool_call> tags later. <tool_call>{\"name\": 3}</tool_call><tool_call>{",
    "<tool_call>{\"name\": \"a\", \"arguments\": [1]}</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": null} trailing</tool_call>",
];

/// JSON the way partials render it: commas after every element, before the first, doubled.
const COMMA_JSON: &[&str] = &[
    "{\"messages\": [ {\"role\": \"system\", \"content\": \"a,]\"}, , {\"role\": \"user\",}, ],}",
    "[,1,,2,\n]",
    "{\"a\": [{},], \"s\": \"\\\\\", \"t\": \"\\\",}\",}",
];

/// `/v1/completions` bodies as editors send them (the recordings have none; more are made
/// from the recorded chat requests by [`completion_of`]).
const COMPLETIONS: &[&str] = &[
    r#"{"model":"local-completion","prompt":"fn add(a: i32, b: i32) -> i32 {\n    ","suffix":"\n}\n","max_tokens":64,"temperature":0.01,"stop":["\n\n"],"stream":true}"#,
    r#"{"model":"codestral/codestral-latest","prompt":["def f(x):\n"],"suffix":"","stream":false,"n":1,"echo":false,"top_p":0.9}"#,
    r#"{"model":"up/m","prompt":"a","stream":true,"stream_options":{"include_usage":true,"other":1},"best_of":1,"stop":"END","user":"u"}"#,
];

/// A `/v1/completions` body made from a recorded chat request: its model, sampling and
/// stream settings, and its messages' text as the prompt.
fn completion_of(request: &serde_json::Value) -> Option<Vec<u8>> {
    let mut body = serde_json::Map::new();
    for key in [
        "model",
        "max_tokens",
        "temperature",
        "stop",
        "stream",
        "stream_options",
    ] {
        if let Some(value) = request.get(key) {
            body.insert(key.to_owned(), value.clone());
        }
    }
    let texts = (request.get("messages")?.as_array()?.iter())
        .filter_map(|m| m.get("content")?.as_str())
        .collect::<Vec<_>>();
    let (prompt, suffix) = match texts.split_last()? {
        (last, []) => (last.to_string(), String::new()),
        (last, before) => (before.join("\n"), last.to_string()),
    };
    body.insert("prompt".into(), prompt.into());
    body.insert("suffix".into(), suffix.into());
    serde_json::to_vec(&body).ok()
}

/// The seeds of the `qore serve` targets in `exchange`: its request body, or what is made
/// from it (a completions body, the model name behind each router flag byte).
fn serve_request(target: &str, exchange: &crate::Exchange) -> Vec<Vec<u8>> {
    let path = exchange.path.as_str();
    let Some(body) = (exchange.method == "POST")
        .then_some(exchange.request_body.as_deref())
        .flatten()
    else {
        return Vec::new();
    };
    let chat = path.ends_with("chat/completions");
    let whole = match target {
        "serve_decode_chat" => chat,
        "serve_decode_responses" => path.ends_with("/responses"),
        "serve_decode_messages" => path.ends_with("/messages"),
        _ => false,
    };
    if whole {
        return vec![body.as_bytes().to_vec()];
    }
    let request = exchange.request_json();
    match (target, request) {
        ("serve_completions", Some(request)) if chat => {
            completion_of(&request).into_iter().collect()
        }
        ("serve_route", Some(request)) => match request.get("model").and_then(|m| m.as_str()) {
            Some(model) => [0u8, 1].map(|f| [&[f], model.as_bytes()].concat()).to_vec(),
            None => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The seeds of `target` found in `cassettes` (and hand-written ones).
pub fn seeds(target: &str, cassettes: &[Cassette]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = match target {
        "text_protocol" => REPLIES.iter().map(|r| r.as_bytes().to_vec()).collect(),
        "json_commas" => COMMA_JSON.iter().map(|r| r.as_bytes().to_vec()).collect(),
        "decode_llamacpp" => vec![LLAMACPP_COMPLETION.as_bytes().to_vec()],
        "serve_completions" => COMPLETIONS.iter().map(|r| r.as_bytes().to_vec()).collect(),
        _ => Vec::new(),
    };
    for exchange in cassettes.iter().flat_map(|c| &c.exchanges) {
        if target.starts_with("serve_") {
            out.extend(serve_request(target, exchange));
            continue;
        }
        let path = exchange.path.as_str();
        let ok = (200..300).contains(&exchange.status);
        let response = match target {
            "sse_framer" => exchange.is_sse(),
            "ndjson_framer" | "decode_ollama" => ok && path.ends_with("/api/chat"),
            "decode_openai_chat" => ok && path.ends_with("chat/completions"),
            "decode_llamacpp" | "decode_mistral" => {
                ok && (path.ends_with("chat/completions") || path.ends_with("fim/completions"))
            }
            "decode_openai_responses" => ok && path.ends_with("/responses"),
            "decode_anthropic" => ok && path.ends_with("/messages"),
            "decode_gemini" => ok && path.contains("enerateContent"),
            _ => false,
        };
        if response {
            out.push(exchange.response_bytes());
        }
        if target == "json_commas" {
            if let Some(body) = &exchange.request_body {
                out.push(body.as_bytes().to_vec());
            }
        }
    }
    let mut seen = HashSet::new();
    out.retain(|seed| seen.insert(seed.clone()));
    out
}

/// Pieces of the wires and formats the targets read, for inputs built from scratch.
const TOKENS: &[&[u8]] = &[
    b"data: ",
    b"data:",
    b"event: ",
    b":",
    b"\n",
    b"\r\n",
    b"\r",
    b" ",
    b"\xEF\xBB\xBF",
    b"\xFF",
    b"\xE2\x82",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b"\"",
    b"\\",
    b"[DONE]",
    b"null",
    b"\"type\":",
    b"\"content\":",
    b"\"text\":",
    b"\"delta\":",
    b"\"name\":",
    b"\"id\":",
    b"\"arguments\":",
    b"\"choices\":[",
    b"\"done\":true",
    b"\"stop\":",
    b"1",
    b"\"a\"",
    b"<tool_call>",
    b"</tool_call>",
    b"```",
    b"~~~",
    b"`",
    b"> ",
    b"- ",
    b"\xC3\xA9",
    b"[body]",
    b"name = ",
    b"extends = ",
    b" = ",
    b"\"\"\"",
    b"'",
    b"{{ ",
    b" }}",
    b"{% include \"",
    b"\" %}",
    b"[match]",
    b"provider = \"openai\"\n",
];

/// The same bytes over a run: proptest's deterministic generator with this seed.
const RNG_SEED: [u8; 32] = *b"qore fuzz_seeded, fixed seed 001";

/// Run `check` over `cases` inputs: a chunking header (see `qore_client::fuzz_targets`;
/// only when [`is_chunked`]) followed by a seed of `target` (its fixtures and `extra`) with a few bytes changed,
/// random bytes, or wire pieces strung together. Fixed seed, no persistence: every run
/// checks the same inputs. A failure panics with the smallest input proptest finds.
pub fn run_seeded(target: &str, extra: Vec<Vec<u8>>, cases: u32, check: impl Fn(&[u8])) {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    // Loaded once per test binary, however many targets it runs.
    static CASSETTES: std::sync::OnceLock<Vec<Cassette>> = std::sync::OnceLock::new();
    let cassettes = CASSETTES.get_or_init(|| {
        crate::fixtures_dir()
            .map(|dir| crate::load_cassettes(&dir).unwrap_or_else(|err| panic!("{err}")))
            .unwrap_or_default()
    });
    let mut pool = seeds(target, cassettes);
    pool.extend(extra);
    // Small seeds keep the pass short; the long runs under `fuzz/` take every size.
    pool.retain(|seed| seed.len() <= 8 * 1024);
    if pool.is_empty() {
        pool.push(Vec::new());
    }
    let count = pool.len();
    let edit = (any::<prop::sample::Index>(), any::<u8>(), 0u8..3);
    let mutated = (0..count, prop::collection::vec(edit, 0..6)).prop_map(move |(i, edits)| {
        let mut bytes = pool[i].clone();
        for (at, byte, op) in edits {
            let at = at.index(bytes.len() + 1);
            match op {
                0 => bytes.insert(at, byte),
                _ if at == bytes.len() => {}
                1 => bytes[at] = byte,
                _ => {
                    bytes.remove(at);
                }
            }
        }
        bytes
    });
    let strung =
        prop::collection::vec(prop::sample::select(TOKENS), 0..48).prop_map(|t| t.concat());
    let body = prop_oneof![
        4 => mutated,
        1 => prop::collection::vec(any::<u8>(), 0..256),
        2 => strung,
    ];
    let max_widths = if is_chunked(target) { 7 } else { 0 };
    let header = prop::collection::vec(any::<u8>(), 0..=max_widths).prop_map(move |widths| {
        let mut header = Vec::new();
        if max_widths > 0 {
            header.push(widths.len() as u8);
            header.extend(widths);
        }
        header
    });
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &RNG_SEED);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let result = runner.run(&(header, body), |(header, body)| {
        check(&[header, body].concat());
        Ok(())
    });
    if let Err(err) = result {
        panic!("fuzz target {target}: {err}");
    }
}
