//! A caller that asks for one body (no `stream`) gets its upstream asked for one body too,
//! in every inbound dialect onto a Chat Completions and an Anthropic upstream: the upstream
//! (a loopback server replaying recorded whole answers from shared/fixtures) sees a request
//! without `"stream": true` and the caller gets the recorded text; a streaming caller still
//! streams upstream (the control).

use std::path::Path;
use std::time::Duration;

use qore_serve::config::ServeSettings;
use qore_serve::Server;
use qore_testkit::cassette::{fixtures_dir, load_cassettes, Exchange};
use qore_testkit::chat::chat_answer;
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

/// The first recorded whole (JSON) answer of `file` (under rig-cassettes) whose text
/// `text_of` finds: the reply to replay and its text.
fn recorded(fixtures: &Path, file: &str, text_of: fn(&Value) -> Option<String>) -> (Reply, String) {
    let tmp = tempfile::tempdir().unwrap();
    let at = tmp.path().join("rig-cassettes").join(file);
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    std::fs::copy(fixtures.join("rig-cassettes").join(file), &at).unwrap();
    let cassettes = load_cassettes(tmp.path()).unwrap();
    let exchanges: Vec<&Exchange> = cassettes.iter().flat_map(|c| &c.exchanges).collect();
    let (exchange, text) = exchanges
        .iter()
        .find_map(|e| Some((*e, text_of(&e.response_json()?)?)))
        .unwrap_or_else(|| panic!("{file}: no whole answer with text"));
    (Reply::json(200, exchange.response_bytes()), text)
}

fn chat_text(v: &Value) -> Option<String> {
    v["choices"][0]["message"]["content"]
        .as_str()
        .map(str::to_owned)
}

fn messages_text(v: &Value) -> Option<String> {
    let blocks = v["content"].as_array()?;
    let text: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    (v["stop_reason"] == "end_turn" && !text.is_empty()).then_some(text)
}

/// The answer's text as the caller's dialect carries it.
fn answer_text(path: &str, v: &Value) -> String {
    match path {
        "/v1/chat/completions" => chat_text(v).unwrap_or_default(),
        "/v1/messages" => (v["content"].as_array().into_iter().flatten())
            .filter_map(|b| b["text"].as_str())
            .collect(),
        _ => (v["output"].as_array().into_iter().flatten())
            .flat_map(|item| item["content"].as_array().cloned().unwrap_or_default())
            .filter_map(|part| part["text"].as_str().map(str::to_owned))
            .collect(),
    }
}

fn body(path: &str, model: &str, stream: bool) -> Value {
    match path {
        "/v1/responses" => json!({"model": model, "input": "hi", "stream": stream}),
        _ => json!({"model": model, "max_tokens": 64, "stream": stream,
            "messages": [{"role": "user", "content": "hi"}]}),
    }
}

const PATHS: [&str; 3] = ["/v1/chat/completions", "/v1/responses", "/v1/messages"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_answers_are_asked_whole_upstream() {
    let Some(fixtures) = fixtures_dir() else {
        eprintln!("no fixtures: skipped");
        return;
    };
    let (chat_reply, chat_said) = recorded(
        &fixtures,
        "openai/prompt_caching/chat_completions_blocking_probe.yaml",
        chat_text,
    );
    let (messages_reply, messages_said) = recorded(
        &fixtures,
        "anthropic/request_override/request_overridden_by_hook_blocking.yaml",
        messages_text,
    );
    // Three whole answers each, then (Chat) one streamed answer for the control.
    let mut chat_replies = vec![chat_reply; 3];
    chat_replies.push(chat_answer("streamed"));
    let chat_up = ReplayServer::start(chat_replies).await.unwrap();
    let messages_up = ReplayServer::start(vec![messages_reply; 3]).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("providers")).unwrap();
    let providers = [
        ("oa", "openai-chat", format!("{}/v1", chat_up.url())),
        ("an", "anthropic", messages_up.url()),
    ];
    for (name, protocol, url) in &providers {
        let file = format!("name = \"{name}\"\nprotocol = \"{protocol}\"\nurl = \"{url}\"\n");
        std::fs::write(dir.path().join(format!("providers/{name}.toml")), file).unwrap();
    }
    let location = dir.path().join("qore.db").to_string_lossy().into_owned();
    let store = qore_store::open(&location).await.unwrap();
    let settings = ServeSettings {
        listen: "127.0.0.1:0".parse().unwrap(),
        drain_timeout: Duration::from_secs(1),
        ..ServeSettings::default()
    };
    let agents = qore_agents::config::Config::load(Some(dir.path()));
    let server = Server::start(settings, agents, store).await.unwrap();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let ask = |path: &str, model: &str, stream: bool| {
        let request = http
            .post(format!("{}{path}", server.url()))
            .header("content-type", "application/json")
            .header("anthropic-version", "2023-06-01")
            .body(body(path, model, stream).to_string());
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.text().await.unwrap())
        }
    };
    for (model, said, upstream) in [
        ("oa/gpt-4o-mini", &chat_said, &chat_up),
        ("an/claude-x", &messages_said, &messages_up),
    ] {
        for path in PATHS {
            let (status, text) = ask(path, model, false).await;
            assert_eq!(status, 200, "{model} {path}: {text}");
            let answer: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(&answer_text(path, &answer), said, "{model} {path}: {text}");
            let sent = upstream.take_requests().pop().unwrap().json().unwrap();
            assert_ne!(sent["stream"], json!(true), "{model} {path}: asked {sent}");
        }
    }
    let (status, text) = ask(PATHS[0], "oa/gpt-4o-mini", true).await;
    assert_eq!(status, 200, "{text}");
    assert!(
        text.contains("streamed") && text.contains("[DONE]"),
        "{text}"
    );
    let sent = chat_up.take_requests().pop().unwrap().json().unwrap();
    assert_eq!(sent["stream"], json!(true), "the streaming caller: {sent}");
    let (stopped, _) = server.stop().await;
    stopped.unwrap();
}
