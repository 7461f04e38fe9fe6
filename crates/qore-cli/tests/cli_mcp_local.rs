//! MCP tools on the local model (SmolLM2-135M on llama.cpp, which has no tool calling, so
//! the text protocol): the MCP server's tools are described in the system prompt beside
//! the built-in ones, and the run ends with an answer or a stop. The model is tiny: the
//! test asserts structure, never words.

mod common;

use std::time::Duration;

use common::config::ConfigDir;
use common::local::{proxied_local_server, proxy_port};
use common::{command, run_with_limit};
use qore_testkit::mcp_env::{mcp_env, PY_SERVER};
use serde_json::json;

#[tokio::test]
async fn the_text_protocol_describes_mcp_tools_to_the_local_model() {
    let python = mcp_env("python").unwrap_or_else(|e| panic!("{e}"));
    let config = ConfigDir::new(&[("server.py", PY_SERVER), ("project/a.txt", "a")]);
    let mcp = json!({"mcpServers": {"py": {"command": python, "args": [config.0.join("server.py"), config.0.join("project")]}}});
    std::fs::write(config.0.join("mcp.json"), mcp.to_string()).unwrap();
    let proxy = proxied_local_server().await;
    let project = config.0.join("project");
    let args = [
        "run",
        "--tools",
        "auto",
        "--max-rounds",
        "1",
        "--json",
        "--project",
        project.to_str().unwrap(),
        "Greet qore with the greet tool.",
    ];
    let mut cmd = command(&args);
    cmd.env("QORE_LOCAL_PORT", proxy_port(&proxy))
        .env("QORE_CONFIG_DIR", &config.0);
    let run = run_with_limit(cmd, Duration::from_secs(300)).await;
    let last = run.last_json();
    assert!(
        last["type"] == "result" || last["type"] == "stopped",
        "{run:?}"
    );
    let chats: Vec<_> = proxy
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .filter_map(|r| r.json())
        .collect();
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
