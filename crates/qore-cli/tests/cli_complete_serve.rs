//! `qore serve` meets agents by what their `[body]` reads, not their `completion` tag:
//! `/v1/completions` fills in the middle with an untagged agent whose body reads
//! `ctx.prefix`/`ctx.suffix` and refuses a chat-bodied one tagged `completion` (a 400 naming
//! it, nothing sent upstream), which `/v1/chat/completions` serves; the FIM-bodied agent is
//! no chat model. The real binary, a loopback upstream.

mod cli_serve_support;
mod common;

use cli_serve_support::World;
use qore_testkit::chat::chat_answer;
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

const FIM_AGENT: &str = "name = \"fim-mine\"\nprovider = \"infill\"\nmodel = \"qwen\"\n\
    endpoint = \"../infill\"\n[body]\ninput_prefix = \"{{ tojson(ctx.prefix) }}\"\n\
    input_suffix = \"{{ tojson(ctx.suffix) }}\"\nstream = true\n";
const CHAT_AGENT: &str = "name = \"chatty\"\nextends = \"openai-chat\"\nprovider = \"chat\"\n\
    model = \"m\"\ntags = [\"completion\"]\n";

/// llama.cpp's `/infill` stream saying `text`.
fn infill(text: &str) -> Reply {
    let chunk = json!({"index": 0, "content": text, "stop": false});
    let last = json!({"index": 0, "content": "", "stop": true, "stop_type": "eos"});
    Reply::sse(format!("data: {chunk}\n\ndata: {last}\n\n"))
}

fn fill(model: &str) -> Value {
    json!({"model": model, "prompt": "def add(a, b):\n    return ", "suffix": "\n", "stream": false})
}

fn chat(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "hi"}]})
}

#[tokio::test]
async fn serve_routes_by_what_the_body_reads_not_the_tag() {
    let upstream = ReplayServer::start(vec![infill("a + b"), chat_answer("hello")])
        .await
        .unwrap();
    let w = World::new();
    let base = format!("{}/v1", upstream.url());
    w.provider("infill", "llamacpp", &base)
        .provider("chat", "openai-chat", &base);
    for (name, text) in [("fim_mine", FIM_AGENT), ("chatty", CHAT_AGENT)] {
        std::fs::write(w.config.join(format!("agents/{name}.toml")), text).unwrap();
    }
    let mut server = w.serve(&[]).await;
    // (path, body, status, words in the answer, quotes as its JSON escapes them)
    let cases = [
        ("/v1/completions", fill("fim-mine"), 200, "a + b"),
        (
            "/v1/completions",
            fill("chatty"),
            400,
            "chatty\\\" chats (its [body]",
        ),
        ("/v1/chat/completions", chat("chatty"), 200, "hello"),
        (
            "/v1/chat/completions",
            chat("fim-mine"),
            404,
            "fim-mine\\\" does not exist",
        ),
    ];
    for (path, body, status, words) in &cases {
        let answer = server.post(path, body, &[]).await;
        assert_eq!(answer.status, *status, "{path} {body}: {}", answer.text);
        assert!(
            answer.text.contains(words),
            "{path} {body}: {}",
            answer.text
        );
    }
    let asked: Vec<String> = upstream.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(asked, ["/infill", "/v1/chat/completions"]);
    let sent = upstream.requests()[0].json().expect("a JSON body");
    assert_eq!(sent["input_prefix"], "def add(a, b):\n    return ");
    assert_eq!(server.stop().await, Some(0));
}
