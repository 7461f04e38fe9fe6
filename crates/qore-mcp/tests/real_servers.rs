//! Real MCP servers, installed by scripts/mcp-env.sh: qore-testkit's Python MCPServer
//! (FastMCP) over stdio and streamable HTTP, npm's server-everything, and servers that
//! crash or are missing.

use std::path::PathBuf;
use std::sync::Arc;

use qore_core::{CancellationToken, Tool, ToolOutput, ToolResultPart, ToolSource};
use qore_mcp::config::McpConfig;
use qore_mcp::servers::{McpTools, Status};
use qore_testkit::mcp_env::PY_SERVER;
use serde_json::{json, Value};

fn mcp_env(action: &str) -> String {
    qore_testkit::mcp_env::mcp_env(action).unwrap_or_else(|e| panic!("{e}"))
}

struct Env {
    _dir: tempfile::TempDir,
    marks: PathBuf,
    fsroot: PathBuf,
    config: McpConfig,
}

fn env() -> Env {
    let python = mcp_env("python");
    let everything = mcp_env("everything");
    let filesystem = mcp_env("filesystem");
    let dir = tempfile::tempdir().unwrap();
    let marks = dir.path().join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let fsroot = dir.path().join("fsroot");
    std::fs::create_dir_all(&fsroot).unwrap();
    std::fs::write(fsroot.join("a.txt"), "filesystem says hi").unwrap();
    let script = dir.path().join("server.py");
    std::fs::write(&script, PY_SERVER).unwrap();
    let json = json!({"mcpServers": {
        "py": {"command": python, "args": [script, marks], "tool_timeout_sec": 2,
               "disabled_tools": ["look_not"]},
        "pytrusted": {"command": python, "args": [script, marks], "trusted": true,
                      "enabled_tools": ["look", "greet"]},
        "everything": {"command": "node", "args": [everything, "stdio"], "startup_timeout_sec": 60},
        "fs": {"command": "node", "args": [filesystem, fsroot], "trusted": true},
        "crash": {"command": python, "args": ["-c", "import sys; sys.stderr.buffer.write(b'\\xff not utf-8\\n'); sys.stderr.flush(); print('no config here', file=sys.stderr); sys.exit(3)"]},
        "missing": {"command": "/nonexistent/mcp-server"},
        "hang": {"command": python, "args": ["-c", "import time; time.sleep(30)"],
                 "startup_timeout_sec": 1},
        "off": {"command": "/nonexistent/mcp-server", "enabled": false}
    }});
    std::fs::write(dir.path().join("mcp.json"), json.to_string()).unwrap();
    let config = McpConfig::load(Some(dir.path()), None);
    assert!(config.errors.is_empty(), "{:?}", config.errors);
    Env {
        _dir: dir,
        marks,
        fsroot,
        config,
    }
}

fn tool<'a>(tools: &'a McpTools, name: &str) -> &'a Arc<qore_mcp::tool::McpTool> {
    tools
        .tools
        .iter()
        .find(|t| t.spec().name == name)
        .unwrap_or_else(|| panic!("no tool {name}: {:?}", names(tools)))
}

fn names(tools: &McpTools) -> Vec<String> {
    tools.tools.iter().map(|t| t.spec().name.clone()).collect()
}

async fn call(tools: &McpTools, name: &str, args: Value) -> ToolOutput {
    tool(tools, name).call(args, CancellationToken::new()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_servers_start_together_and_their_tools_answer() {
    let env = env();
    let tools = McpTools::start(&env.config, ["py__greet".to_string()], false).await;
    let status = |name: &str| {
        let r = tools
            .reports
            .iter()
            .find(|r| r.config.name == name)
            .unwrap();
        (r.status.clone(), r.tools.len())
    };
    assert_eq!(status("py"), (Status::Running, 7));
    assert_eq!(
        status("pytrusted"),
        (Status::Running, 2),
        "enabled_tools filter"
    );
    assert_eq!(status("off"), (Status::Disabled, 0));
    let Status::Failed(why) = status("crash").0 else {
        panic!("crash did not fail")
    };
    assert!(
        why.contains("'crash'") && why.contains("no config here"),
        "{why}"
    );
    let Status::Failed(why) = status("missing").0 else {
        panic!("missing did not fail")
    };
    assert!(why.contains("/nonexistent/mcp-server"), "{why}");
    let Status::Failed(why) = status("hang").0 else {
        panic!("a server that never answers did not fail")
    };
    assert!(why.contains("startup_timeout_sec"), "{why}");
    assert_eq!(tools.warnings().len(), 3);

    // Names: a taken name moves aside; every name fits the providers' rule.
    let all = names(&tools);
    assert!(all.contains(&"py__greet_2".to_string()), "{all:?}");
    assert!(all.iter().all(|n| n.len() <= 64
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')));
    // readOnlyHint counts only for trusted servers.
    assert!(tool(&tools, "py__look").destructive());
    assert!(!tool(&tools, "pytrusted__look").destructive());
    assert!(tool(&tools, "pytrusted__greet").destructive());
    // server-filesystem annotates its tools: trusted, its reading tools need no approval.
    assert!(!tool(&tools, "fs__read_text_file").destructive());
    assert!(tool(&tools, "fs__write_file").destructive());
    let schema = &tool(&tools, "py__greet_2").spec().input_schema;
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["name"]["type"], "string");

    // In order: text, isError, server-everything's echo and sum (initialize-era protocol),
    // arguments that are no object, a slow call hitting tool_timeout_sec, a server dying
    // during a call and the call after it (which starts the server again).
    let cases: &[(&str, Value, bool, &str)] = &[
        ("py__greet_2", json!({"name": "qore"}), false, "hello qore"),
        ("py__fail", json!({}), true, "it broke"),
        (
            "everything__echo",
            json!({"message": "ping"}),
            false,
            "ping",
        ),
        ("everything__get-sum", json!({"a": 2, "b": 3}), false, "5"),
        ("py__greet_2", json!([1]), true, "JSON object"),
        (
            "fs__read_text_file",
            json!({"path": env.fsroot.join("a.txt")}),
            false,
            "filesystem says hi",
        ),
        (
            "fs__read_text_file",
            json!({"path": "/etc/hostname"}),
            true,
            "outside allowed directories",
        ),
        ("py__slow", json!({"seconds": 30}), true, "tool_timeout_sec"),
        ("py__die", json!({}), true, "started again"),
        (
            "py__greet_2",
            json!({"name": "again"}),
            false,
            "hello again",
        ),
    ];
    for (name, args, is_error, text) in cases {
        let out = call(&tools, name, args.clone()).await;
        assert!(
            out.is_error == *is_error && out.text_content().contains(text),
            "{name} {args}: {out:?}"
        );
        if *name == "py__slow" {
            // Its cancellation reached the server as notifications/cancelled.
            let cancelled = env.marks.join("cancelled");
            for _ in 0..100 {
                if cancelled.exists() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            assert!(cancelled.exists(), "the server never saw the cancellation");
        }
    }

    let images = call(&tools, "everything__get-tiny-image", json!({})).await;
    assert!(
        images
            .content
            .iter()
            .any(|p| matches!(p, ToolResultPart::Image(_))),
        "{images:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_servers_get_their_headers_and_bearer_token() {
    let python = mcp_env("python");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("server.py");
    std::fs::write(&script, PY_SERVER).unwrap();
    let port = free_port();
    let mut child = tokio::process::Command::new(&python);
    child
        .arg(&script)
        .arg(dir.path())
        .args(["http", &port.to_string()]);
    let mut child = listening(&mut child, port).await;
    // server-everything over streamable HTTP (it listens on every interface, on PORT).
    let everything_port = free_port();
    let mut everything = tokio::process::Command::new("node");
    everything
        .arg(mcp_env("everything"))
        .arg("streamableHttp")
        .env("PORT", everything_port.to_string());
    let mut everything = listening(&mut everything, everything_port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let json = json!({"mcpServers": {
        "web": {"type": "http", "url": url, "headers": {"X-Team": "${QORE_TEST_TEAM:-core}"},
                "bearer_token_env_var": "CARGO_PKG_NAME"},
        "nobearer": {"url": url, "bearer_token_env_var": "QORE_TEST_SURELY_UNSET"},
        "badheader": {"url": url, "headers": {"Bad Name": "x"}},
        "evhttp": {"url": format!("http://127.0.0.1:{everything_port}/mcp")}
    }});
    std::fs::write(dir.path().join("mcp.json"), json.to_string()).unwrap();
    let config = McpConfig::load(Some(dir.path()), None);
    let tools = McpTools::start(&config, [], false).await;
    let failed: Vec<String> = tools.warnings();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(
        failed[1].contains("QORE_TEST_SURELY_UNSET (bearer_token_env_var) is not set"),
        "{failed:?}"
    );
    assert!(failed[0].contains("header name \"Bad Name\""), "{failed:?}");
    let out = call(&tools, "web__headers", json!({})).await;
    // Cargo sets CARGO_PKG_NAME for the test process.
    assert_eq!(
        out.text_content(),
        "auth=Bearer qore-mcp team=core",
        "{out:?}"
    );
    let out = call(&tools, "web__greet", json!({"name": "web"})).await;
    assert_eq!(out.text_content(), "hello web");
    let out = call(&tools, "evhttp__echo", json!({"message": "over http"})).await;
    assert!(
        !out.is_error && out.text_content().contains("over http"),
        "{out:?}"
    );
    child.kill().await.unwrap();
    everything.kill().await.unwrap();
}

/// Wait (up to 20 s) until `tools` heard of a change since `seen`.
async fn changed(tools: &McpTools, seen: u64) -> u64 {
    for _ in 0..400 {
        if tools.version() != seen {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    tools.version()
}

fn snapshot_names(tools: &McpTools) -> Vec<String> {
    (tools.snapshot().1.iter())
        .map(|t| t.spec().name.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_changed_refreshes_a_servers_tools() {
    let env = env();
    let only = |names: &[&str]| McpConfig {
        servers: (env.config.servers.iter())
            .filter(|s| names.contains(&s.name.as_str()))
            .cloned()
            .collect(),
        ..McpConfig::default()
    };
    // The Python server speaks 2026-07-28: the change rides a subscriptions/listen stream.
    let tools = McpTools::start(&only(&["py"]), [], false).await;
    assert_eq!(tools.reports[0].protocol.as_deref(), Some("2026-07-28"));
    let before = tools.version();
    assert!(!snapshot_names(&tools).contains(&"py__grown".to_string()));
    let grew = tools.snapshot().1;
    let grow = grew.iter().find(|t| t.spec().name == "py__grow").unwrap();
    let out = grow.call(json!({}), CancellationToken::new()).await;
    assert_eq!(out.text_content(), "grew", "{out:?}");
    // `grow` announced the change before answering: it is counted by the time the call
    // returned (the next round of a tool loop offers the new list).
    let now = tools.version();
    assert_ne!(
        now, before,
        "the change was not counted when the call returned"
    );
    tools.refetch().await;
    let (version, listed) = tools.snapshot();
    assert_eq!(version, now);
    let grown = listed.iter().find(|t| t.spec().name == "py__grown");
    let out = grown
        .unwrap()
        .call(json!({}), CancellationToken::new())
        .await;
    assert_eq!(out.text_content(), "grown here");
    // Nothing changed since: a refetch keeps the list.
    tools.refetch().await;
    assert_eq!(tools.snapshot().0, version);

    // server-everything (2025-11-25, with initialize) adds its task tool once initialized
    // and says so with a plain notification.
    let tools = McpTools::start(&only(&["everything"]), [], false).await;
    assert_ne!(
        changed(&tools, 0).await,
        0,
        "server-everything's change never arrived"
    );
    tools.refetch().await;
    let names = snapshot_names(&tools);
    assert!(
        names.contains(&"everything__simulate-research-query".to_string()),
        "{names:?}"
    );
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Spawn `cmd` (stderr dropped) and wait until something listens on `port` (up to 10 s).
async fn listening(cmd: &mut tokio::process::Command, port: u16) -> tokio::process::Child {
    let child = cmd
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    child
}
