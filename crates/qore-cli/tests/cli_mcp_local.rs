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
/// MCP server as `py` in a config dir that also holds `files`, and `env` set; `qore chat`
/// (ephemeral, the prompt its one line of stdin) when `flags` start with "chat".
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

/// `qore run` and `qore chat` on the tool model: the model calls `py__greet`, the server
/// answers, and the next request carries the answer with the call's id.
#[tokio::test]
async fn the_local_tool_model_calls_an_mcp_tool_through_qore_run_and_chat() {
    let proxy = proxied_tool_server().await;
    let provider = format!(
        "name = \"toolmodel\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
        proxy.url()
    );
    let files = [
        ("agents/greeter.toml", FORCED_GREET),
        ("providers/toolmodel.toml", provider.as_str()),
    ];
    for front in ["run", "chat"] {
        let seen = chats(&proxy).len();
        let mut flags = vec!["--agent", "greeter", "--tool-protocol", "native"];
        if front == "chat" {
            flags.insert(0, "chat");
        }
        let run = run_with_py(&files, &flags, &[]).await;
        assert_eq!(run.code, Some(0), "{front}: {run:?}");
        let bodies = chats(&proxy).split_off(seen);
        assert!(bodies.len() >= 2, "{front}: {run:?}");
        let offered: Vec<&str> = (bodies[0]["tools"].as_array().unwrap().iter())
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        assert!(offered.contains(&"py__greet"), "{front}: {offered:?}");
        let messages = bodies[1]["messages"].as_array().unwrap();
        let call = (messages.iter())
            .find_map(|m| m["tool_calls"].as_array().and_then(|c| c.first()))
            .unwrap_or_else(|| panic!("{front}: no tool call in {}", bodies[1]));
        assert_eq!(call["function"]["name"], "py__greet", "{front}");
        let answered = (messages.iter())
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call["id"])
            .unwrap_or_else(|| panic!("{front}: no result for {call} in {}", bodies[1]));
        let content = answered["content"].as_str().unwrap_or_default();
        assert!(content.starts_with("hello "), "{front}: {content}");
    }
}
