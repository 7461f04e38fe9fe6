//! MCP tools on the local model. SmolLM2-135M on llama.cpp has no tool calling, so the
//! text protocol: the MCP server's tools are described in the system prompt beside the
//! built-in ones, and the run ends with an answer or a stop. The same model under
//! `scripts/tool-model.sh` (llama-cpp-python's function calling) calls the MCP tool for
//! real when a profile names it in `tool_choice` (the tiny model would otherwise pick any
//! of the tools on offer), and its result reaches the next request with its call id. The
//! model is tiny: the tests assert structure, never words.

mod common;

use std::time::Duration;

use common::config::ConfigDir;
use common::local::{proxied_local_server, proxied_tool_server, proxy_port};
use common::{command, run_with_limit, Run};
use qore_testkit::mcp_env::{mcp_env, PY_SERVER};
use qore_testkit::RecordingProxy;
use serde_json::{json, Value};

/// `qore run FLAGS --tools auto --max-rounds 1 --json --project P PROMPT` with the Python
/// MCP server as `py` in a config dir that also holds `files`, and `env` set.
async fn run_with_py(files: &[(&str, &str)], flags: &[&str], env: &[(&str, &str)]) -> Run {
    let python = mcp_env("python").unwrap_or_else(|e| panic!("{e}"));
    let mut all = vec![("server.py", PY_SERVER), ("project/a.txt", "a")];
    all.extend_from_slice(files);
    let config = ConfigDir::new(&all);
    let mcp = json!({"mcpServers": {"py": {"command": python, "args": [config.0.join("server.py"), config.0.join("project")]}}});
    std::fs::write(config.0.join("mcp.json"), mcp.to_string()).unwrap();
    let project = config.0.join("project");
    let mut args = vec!["run"];
    args.extend_from_slice(flags);
    let rest = [
        "--tools",
        "auto",
        "--max-rounds",
        "1",
        "--json",
        "--project",
    ];
    args.extend_from_slice(&rest);
    args.extend([project.to_str().unwrap(), "Greet qore with the greet tool."]);
    let mut cmd = command(&args);
    cmd.env("QORE_CONFIG_DIR", &config.0)
        .envs(env.iter().copied());
    run_with_limit(cmd, Duration::from_secs(300)).await
}

/// The Chat Completions bodies the proxy saw.
fn chats(proxy: &RecordingProxy) -> Vec<Value> {
    (proxy.requests().iter())
        .filter(|r| r.path.ends_with("/chat/completions"))
        .filter_map(|r| r.json())
        .collect()
}

#[tokio::test]
async fn the_text_protocol_describes_mcp_tools_to_the_local_model() {
    let proxy = proxied_local_server().await;
    let port = proxy_port(&proxy);
    let run = run_with_py(&[], &[], &[("QORE_LOCAL_PORT", &port)]).await;
    let last = run.last_json();
    assert!(
        last["type"] == "result" || last["type"] == "stopped",
        "{run:?}"
    );
    let chats = chats(&proxy);
    assert!(!chats.is_empty(), "{run:?}");
    let system = chats[0]["messages"][0]["content"].to_string();
    assert_eq!(chats[0].get("tools"), None, "no native definitions");
    for tool in ["py__greet", "Greet someone.", "read_file"] {
        assert!(
            system.contains(tool),
            "{tool} not in the system prompt: {system}"
        );
    }
}

/// A profile for the tool server, made to call `py__greet` (see the module doc), not
/// streamed (the server streams no tool calls).
const FORCED_GREET: &str = r#"schema_version = 1
name = "greeter"
extends = "base-openai-chat"
description = "The local tool model, made to call py__greet."
provider = "toolmodel"
model = "smollm2-135m-instruct"

[body]
stream = false
stream_options = ""
max_tokens = 48
temperature = 0
tool_choice = "{% if ctx.tools %}{\"type\": \"function\", \"function\": {\"name\": \"py__greet\"}}{% endif %}"
"#;

#[tokio::test]
async fn the_local_tool_model_calls_an_mcp_tool_through_qore_run() {
    let proxy = proxied_tool_server().await;
    let provider = format!(
        "name = \"toolmodel\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
        proxy.url()
    );
    let files = [
        ("agents/greeter.toml", FORCED_GREET),
        ("providers/toolmodel.toml", provider.as_str()),
    ];
    let flags = ["--agent", "greeter", "--tool-protocol", "native"];
    let run = run_with_py(&files, &flags, &[]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let results: Vec<_> = (run.json_lines().into_iter())
        .filter(|l| l["type"] == "tool_result" && l["ran"] == true)
        .collect();
    assert_eq!(results.len(), 1, "{run:?}");
    let (id, content) = (&results[0]["id"], &results[0]["content"]);
    assert_eq!(results[0]["tool"], "py__greet");
    assert!(content.as_str().unwrap().starts_with("hello "), "{content}");
    let chats = chats(&proxy);
    assert!(chats.len() >= 2, "{run:?}");
    let offered: Vec<&str> = (chats[0]["tools"].as_array().unwrap().iter())
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"py__greet"), "{offered:?}");
    let answered = (chats[1]["messages"].as_array().unwrap().iter())
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == *id)
        .unwrap_or_else(|| panic!("no result for {id} in {}", chats[1]));
    assert_eq!(answered["content"], *content);
}
