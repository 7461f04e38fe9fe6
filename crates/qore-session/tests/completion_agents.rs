//! The bundled code-completion agents, reached as `qore complete` reaches them (a config dir
//! whose providers point at a loopback server), send their profile's `[body]`: the bytes
//! the server receives carry each template's keys and literals, and the open files reach
//! llama.cpp's `input_extra` (left out when there are none). The answers are written from
//! the providers' documented formats (no recorded FIM traffic in ../shared/fixtures).

mod completion_common;

use qore_agents::config::Config;
use qore_session::completion::context::OpenFile;
use qore_session::{SessionManager, TargetSpec};
use qore_testkit::chat::chat_answer;
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

use completion_common::{complete_add_py, util_py};

fn infill() -> Reply {
    let chunk = json!({"index": 0, "content": "a + b", "stop": false});
    let last = json!({"index": 0, "content": "", "stop": true, "stop_type": "eos"});
    Reply::sse(format!("data: {chunk}\n\ndata: {last}\n\n"))
}

fn generate() -> Reply {
    let line = json!({"model": "m", "created_at": "t", "response": "a + b", "done": false});
    let last = json!({"model": "m", "created_at": "t", "response": "", "done": true,
        "done_reason": "stop", "prompt_eval_count": 9, "eval_count": 1});
    Reply::new(200, format!("{line}\n{last}\n")).with_header("content-type", "application/x-ndjson")
}

fn text_completion() -> Reply {
    let chunk = json!({"id": "c", "object": "text_completion", "model": "deepseek-chat",
        "choices": [{"index": 0, "text": "a + b", "finish_reason": "stop"}]});
    Reply::sse(format!("data: {chunk}\n\ndata: [DONE]\n\n"))
}

/// A config dir whose built-in providers `llamacpp`, `codestral`, `mistral`, `deepseek` and
/// `ollama` are `url` (without keys).
fn config_dir(url: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    let providers = [
        ("llamacpp", "llamacpp", format!("{url}/v1")),
        ("codestral", "mistral", format!("{url}/v1")),
        ("mistral", "mistral", format!("{url}/v1")),
        ("deepseek", "openai-chat", url.to_owned()),
        ("ollama", "ollama", url.to_owned()),
    ];
    std::fs::create_dir_all(dir.path().join("providers")).expect("providers dir");
    for (name, protocol, url) in providers {
        let text = format!("name = \"{name}\"\nprotocol = \"{protocol}\"\nurl = \"{url}\"\n");
        std::fs::write(dir.path().join(format!("providers/{name}.toml")), text)
            .expect("a provider file");
    }
    dir
}

struct Case {
    agent: &'static str,
    reply: fn() -> Reply,
    with_files: bool,
    path: &'static str,
    /// Keys of the body and their values; `Value::Null`: the key is absent.
    body: Vec<(&'static str, Value)>,
}

fn cases() -> Vec<Case> {
    let extra = json!([{"filename": "util.py", "text": "def sub(a, b):\n    return a - b\n"}]);
    let prefix = json!("def add(a, b):\n    return ");
    let suffix = json!("\n\nprint(add(1, 2))\n");
    let infill_keys = |extra: Value| {
        vec![
            ("input_prefix", prefix.clone()),
            ("input_suffix", suffix.clone()),
            ("input_extra", extra),
            ("n_predict", json!(128)),
            ("temperature", json!(0)),
            ("cache_prompt", json!(true)),
            ("stream", json!(true)),
        ]
    };
    let fim_keys = |model: &str| {
        vec![
            ("model", json!(model)),
            ("prompt", prefix.clone()),
            ("suffix", suffix.clone()),
            ("max_tokens", json!(256)),
            ("temperature", json!(0)),
            ("stream", json!(true)),
        ]
    };
    vec![
        Case {
            agent: "llamacpp-completion",
            reply: infill,
            with_files: true,
            path: "/infill",
            body: infill_keys(extra),
        },
        Case {
            agent: "llamacpp-completion",
            reply: infill,
            with_files: false,
            path: "/infill",
            body: infill_keys(Value::Null),
        },
        Case {
            agent: "codestral-completion",
            reply: || chat_answer("a + b"),
            with_files: true,
            path: "/v1/fim/completions",
            body: fim_keys("codestral-latest"),
        },
        Case {
            agent: "mistral-completion",
            reply: || chat_answer("a + b"),
            with_files: false,
            path: "/v1/fim/completions",
            body: fim_keys("codestral-latest"),
        },
        Case {
            agent: "deepseek-completion",
            reply: text_completion,
            with_files: true,
            path: "/beta/completions",
            body: fim_keys("deepseek-chat"),
        },
        Case {
            agent: "ollama-completion",
            reply: generate,
            with_files: true,
            path: "/api/generate",
            body: vec![
                ("model", json!("qwen2.5-coder:1.5b")),
                ("prompt", prefix.clone()),
                ("suffix", suffix.clone()),
                ("options", json!({"num_predict": 128, "temperature": 0})),
                ("stream", json!(true)),
            ],
        },
    ]
}

#[tokio::test]
async fn bundled_completion_agents_send_their_template() {
    let files = util_py();
    for case in cases() {
        let server = ReplayServer::start(vec![(case.reply)()]).await.unwrap();
        let dir = config_dir(&server.url());
        let manager = SessionManager::new(
            None,
            Config::load(Some(dir.path())),
            qore_session::traced_notes(),
        );
        let spec = TargetSpec {
            agent: Some(case.agent.into()),
            project: Some(dir.path().to_owned()),
            ..TargetSpec::default()
        };
        let target = manager.reach_completer(&spec).await.unwrap();
        let extra: &[OpenFile] = if case.with_files { &files } else { &[] };
        let got = complete_add_py(&target, extra).await;
        let name = format!("{} (files: {})", case.agent, case.with_files);
        assert_eq!(
            got.map(|c| c.map(|c| c.text)),
            Ok(Some("a + b".into())),
            "{name}"
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{name}");
        assert_eq!(requests[0].path, case.path, "{name}");
        let body = requests[0].json().expect("a JSON body");
        for (key, want) in &case.body {
            assert_eq!(
                body.get(*key).unwrap_or(&Value::Null),
                want,
                "{name}: {key} in {body}"
            );
        }
    }
}
