//! `qore mcp serve`: qore's built-in tools as an MCP server, driven by the Python `mcp` SDK's
//! client (installed by scripts/mcp-env.sh) over stdio and over streamable HTTP.

mod common;

use common::command;
use common::config::ConfigDir;
use qore_testkit::mcp_env::mcp_env;
use serde_json::{json, Value};

/// A Python MCP client (the `mcp` SDK) that starts `qore mcp serve --root ROOT EXTRA...`
/// (or, given a URL instead of qore's path, connects to it over streamable HTTP), lists the
/// tools (name -> [readOnlyHint, destructiveHint]) and makes the calls given as
/// JSON on stdin, printing one JSON object.
const PY_CLIENT: &str = r#"
import asyncio, json, sys
from mcp import Client, StdioServerParameters

async def main():
    qore, root, *extra = sys.argv[1:]
    calls = json.loads(sys.stdin.read())
    params = StdioServerParameters(command=qore, args=["mcp", "serve", "--root", root, *extra])
    if qore.startswith("http://"):
        params = qore
    async with Client(params) as client:
        listed = await client.list_tools()
        tools = {t.name: [t.annotations.read_only_hint, t.annotations.destructive_hint]
                 for t in listed.tools}
        results = []
        for name, args in calls:
            r = await client.call_tool(name, args)
            results.append([bool(r.is_error), " ".join(c.text for c in r.content if c.type == "text")])
    print(json.dumps({"tools": tools, "results": results}))

asyncio.run(main())
"#;

/// Write `calls` to the Python client's stdin and read its one JSON object.
async fn feed(mut child: tokio::process::Child, calls: Value) -> Value {
    use tokio::io::AsyncWriteExt as _;
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(calls.to_string().as_bytes())
        .await
        .expect("write calls");
    drop(stdin);
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the client finishes")
        .expect("python ran");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    serde_json::from_str(&stdout).expect("one JSON object")
}

#[tokio::test]
async fn qore_mcp_serve_offers_its_tools_to_a_python_client_inside_the_root() {
    let python = mcp_env("python").unwrap_or_else(|e| panic!("{e}"));
    let dir = ConfigDir::new(&[
        ("root/a.txt", "alpha\n"),
        ("secret.txt", "s3cret\n"),
        ("client.py", PY_CLIENT),
    ]);
    let root = dir.0.join("root");
    let client = |target: String, extra: &[&str], calls: Value| {
        let mut cmd = tokio::process::Command::new(&python);
        cmd.arg(dir.0.join("client.py"))
            .arg(target)
            .arg(&root)
            .args(extra)
            .env("QORE_CONFIG_DIR", &dir.0)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        async move { feed(cmd.spawn().expect("python runs"), calls).await }
    };

    // Read-only by default: truthful annotations, reads inside the root, refusals outside.
    let calls = json!([
        ["read_file", {"path": "a.txt"}],
        ["read_file", {"path": "../secret.txt"}],
        ["read_file", {"path": 3}],
    ]);
    let qore = env!("CARGO_BIN_EXE_qore").to_string();
    let out = client(qore.clone(), &[], calls).await;
    let tools = out["tools"].as_object().unwrap();
    assert_eq!(tools["read_file"], json!([true, false]));
    assert!(
        !tools.contains_key("write_file") && !tools.contains_key("run_command"),
        "{tools:?}"
    );
    let results = out["results"].as_array().unwrap();
    assert!(
        results[0][0] == false && results[0][1].as_str().unwrap().contains("alpha"),
        "{results:?}"
    );
    assert!(
        results[1][0] == true && !results[1][1].as_str().unwrap().contains("s3cret"),
        "{results:?}"
    );
    assert_eq!(results[2][0], true, "{results:?}");

    // --allow-write: the writing tools too, marked destructive, still inside the root.
    let calls = json!([
        ["write_file", {"path": "b.txt", "content": "beta\n"}],
        ["write_file", {"path": "../escape.txt", "content": "x"}],
    ]);
    let out = client(qore, &["--allow-write"], calls).await;
    assert_eq!(out["tools"]["write_file"], json!([false, true]));
    let results = out["results"].as_array().unwrap();
    assert_eq!(results[0][0], false, "{results:?}");
    assert_eq!(results[1][0], true, "{results:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("b.txt")).unwrap(),
        "beta\n"
    );
    assert!(!dir.0.join("escape.txt").exists());
}

#[tokio::test]
async fn qore_mcp_serve_speaks_streamable_http_on_loopback() {
    use tokio::io::AsyncBufReadExt as _;
    let python = mcp_env("python").unwrap_or_else(|e| panic!("{e}"));
    let dir = ConfigDir::new(&[("root/a.txt", "alpha\n"), ("client.py", PY_CLIENT)]);
    let root = dir.0.join("root");
    let mut serve = command(&[
        "mcp",
        "serve",
        "--root",
        root.to_str().unwrap(),
        "--http",
        "0",
    ]);
    let mut server = serve.spawn().expect("qore starts");
    let stdout = server.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let url = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
        .await
        .expect("qore prints its URL")
        .unwrap()
        .expect("a line");
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );

    let calls = json!([["read_file", {"path": "a.txt"}], ["read_file", {"path": "../x"}]]);
    let out = tokio::process::Command::new(&python)
        .arg(dir.0.join("client.py"))
        .args([&url, "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python runs");
    let out = feed(out, calls).await;
    assert_eq!(out["tools"]["read_file"], json!([true, false]));
    assert!(out["tools"].get("write_file").is_none());
    let results = out["results"].as_array().unwrap();
    assert!(
        results[0][0] == false && results[0][1].as_str().unwrap().contains("alpha"),
        "{results:?}"
    );
    assert_eq!(results[1][0], true, "{results:?}");
    server.kill().await.unwrap();
}
