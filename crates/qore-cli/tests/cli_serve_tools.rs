//! `qore serve` running tools itself: `[serve] tools` allows read-only built-ins over
//! `[serve] root`; an agent with `enable_tools` asked without client tools runs them in
//! qore's tool loop, and the caller sees only the answer. Real binary, loopback upstream.

mod cli_serve_support;
mod common;

use cli_serve_support::World;
use qore_testkit::chat::{chat_answer, chat_tool_call};
use qore_testkit::ReplayServer;
use serde_json::{json, Value};

fn chat(model: &str, text: &str, stream: bool) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": text}], "stream": stream})
}

/// The tool results an upstream request carries (role `tool` messages).
fn tool_results(request: &Value) -> Vec<String> {
    (request["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter())
    .filter(|m| m["role"] == "tool")
    .map(|m| m["content"].to_string())
    .collect()
}

fn offered(request: &Value) -> Vec<String> {
    (request["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter())
    .map(|t| t["function"]["name"].as_str().unwrap_or("").to_owned())
    .collect()
}

#[tokio::test]
async fn an_allowed_read_only_tool_runs_on_the_server_and_the_caller_sees_the_answer() {
    let upstream = ReplayServer::start_cycling(vec![
        chat_tool_call("call_1", "read_file", r#"{"path": "notes.txt"}"#),
        chat_answer("The secret word is heron."),
    ])
    .await
    .unwrap();
    let w = World::new();
    let project = w.config.parent().unwrap().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("notes.txt"), "secret word: heron\n").unwrap();
    w.chat_provider("up", &upstream)
        .agent("reader", "up", "enable_tools = true");
    let config = format!(
        "[serve]\ntools = [\"read_file\", \"write_file\", \"list_files\"]\nroot = {:?}\n",
        project.display().to_string()
    );
    std::fs::write(w.config.join("config.toml"), config).unwrap();
    let mut server = w.serve(&[]).await;
    for stream in [false, true] {
        upstream.take_requests();
        let answer = server
            .post(
                "/v1/chat/completions",
                &chat("reader", "What is the secret word?", stream),
                &[],
            )
            .await;
        assert_eq!(answer.status, 200, "{}", answer.text);
        assert!(answer.text.contains("heron"), "{}", answer.text);
        // The caller never sees the server's own call.
        assert!(!answer.text.contains("call_1"), "{}", answer.text);
        assert!(!answer.text.contains("tool_calls"), "{}", answer.text);
        let requests: Vec<Value> = (upstream.requests().iter())
            .filter_map(|r| r.json())
            .collect();
        assert_eq!(requests.len(), 2, "{requests:?}");
        // Only what the config allows and is read-only is offered.
        let names = offered(&requests[0]);
        assert!(names.contains(&"read_file".to_owned()), "{names:?}");
        assert!(names.contains(&"list_files".to_owned()), "{names:?}");
        assert!(!names.contains(&"write_file".to_owned()), "{names:?}");
        assert!(
            !names.iter().any(|n| n == "search" || n == "run_command"),
            "{names:?}"
        );
        let results = tool_results(&requests[1]);
        assert_eq!(results.len(), 1, "{:?}", requests[1]);
        assert!(results[0].contains("secret word: heron"), "{results:?}");
    }
    // A request with the caller's own tools is answered with those alone.
    upstream.take_requests();
    let mut body = chat("reader", "hi", false);
    body["tools"] = json!([{"type": "function", "function": {"name": "mine", "parameters": {"type": "object"}}}]);
    let answer = server.post("/v1/chat/completions", &body, &[]).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let requests: Vec<Value> = upstream
        .requests()
        .iter()
        .filter_map(|r| r.json())
        .collect();
    assert_eq!(offered(&requests[0]), ["mine"], "{:?}", requests[0]);
    server.stop().await;
}
