//! An MCP stdio server that opted in to the sandbox (`sandbox = "workspace-write"` in its
//! config) cannot write outside its root, and still serves its tools; the same server without
//! the setting (the default, unconfined as before) can. The server is qore-testkit's Python
//! MCPServer (scripts/mcp-env.sh), started by a wrapper that first tries the write.

mod common;

use common::config::{qore_in, ConfigDir};
use qore_testkit::mcp_env::{mcp_env, PY_SERVER};
use serde_json::json;

const WRAPPER: &str = r#"
import runpy, sys
target = sys.argv[1]
try:
    open(target, "w").write("escaped")
    print("wrapper: wrote", target, file=sys.stderr, flush=True)
except OSError as e:
    print("wrapper: refused:", e, file=sys.stderr, flush=True)
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
"#;

#[tokio::test]
async fn a_sandboxed_mcp_server_cannot_write_outside_and_still_serves() {
    let python = mcp_env("python").unwrap_or_else(|e| panic!("{e}"));
    let config = ConfigDir::new(&[("server.py", PY_SERVER), ("wrapper.py", WRAPPER)]);
    let root = config.0.join("root");
    let outside = config.0.join("outside");
    let marks = root.join("marks");
    for d in [&marks, &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    let server = |mark: &str| {
        json!([
            config.0.join("wrapper.py"),
            outside.join(mark),
            config.0.join("server.py"),
            marks
        ])
    };
    let mcp = json!({"mcpServers": {
        "boxed": {"command": python, "args": server("boxed"), "cwd": root,
                  "sandbox": "workspace-write"},
        "free": {"command": python, "args": server("free"), "cwd": root}
    }});
    std::fs::write(config.0.join("mcp.json"), mcp.to_string()).unwrap();

    let run = qore_in(&config, &["mcp", "list"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let row = |name: &str| {
        (run.stdout.lines())
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row {name}: {}", run.stdout))
            .to_string()
    };
    assert!(
        row("boxed").contains("running, 7 tools"),
        "{}",
        row("boxed")
    );
    assert!(row("free").contains("running, 7 tools"), "{}", row("free"));
    assert!(!outside.join("boxed").exists(), "{}", run.stderr);
    assert!(outside.join("free").exists(), "{}", run.stderr);
}

#[tokio::test]
async fn an_unknown_sandbox_mode_makes_that_server_invalid() {
    let config = ConfigDir::new(&[(
        "mcp.json",
        r#"{"mcpServers": {"odd": {"command": "true", "sandbox": "wide-open"}}}"#,
    )]);
    let run = qore_in(&config, &["mcp", "list"]).await;
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(all.contains("wide-open"), "{all}");
}
