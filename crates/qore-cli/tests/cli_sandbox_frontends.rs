//! The sandbox in the front ends where nobody approves a call: `qore serve`'s server tools
//! and `qore mcp serve`. Through the real binaries (a loopback upstream scripts the model for
//! `qore serve`; the Python `mcp` SDK's client drives `qore mcp serve`), `run_command`
//! writing to `$HOME` is refused and nothing is written, the same command writing inside the
//! project works (so the test proves the sandbox, not a broken command), and the confined
//! command ran without capabilities (`CapEff` 0: the tests run as root). `qore serve` offers
//! `run_command` only when `[serve] tools` names it exactly and the policy confines it.

mod cli_serve_support;
mod common;

use std::path::{Path, PathBuf};

use cli_serve_support::World;
use qore_testkit::chat::{chat_answer, chat_tool_call};
use qore_testkit::mcp_env::mcp_env;
use qore_testkit::ReplayServer;
use serde_json::{json, Value};

/// What a confined process's `/proc/self/status` says of its effective capabilities.
const NO_CAPS: &str = "CapEff:\\t0000000000000000";

/// A project with `src/` and a home with a `.bashrc`, side by side.
struct Places {
    _dir: tempfile::TempDir,
    base: PathBuf,
    project: PathBuf,
    home: PathBuf,
}

fn places() -> Places {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let project = base.join("project");
    let home = base.join("home");
    for d in [
        project.join("src"),
        project.join(".git/hooks"),
        home.clone(),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(home.join(".bashrc"), "# rc\n").unwrap();
    Places {
        _dir: dir,
        base,
        project,
        home,
    }
}

/// `run_command`'s arguments: python printing its status, then appending `pwned` to `path`;
/// `more` joins the arguments (a request for more rights).
fn write_to(path: &Path, more: &Value) -> Value {
    let code = format!(
        "print(open('/proc/self/status').read()) or open('{}','a').write('pwned')",
        path.display()
    );
    let mut args = json!({"argv": ["python3", "-c", code]});
    if let (Some(args), Some(more)) = (args.as_object_mut(), more.as_object()) {
        args.extend(more.clone());
    }
    args
}

fn pwned(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains("pwned"))
}

/// One call of `run_command`.
struct Case {
    name: &'static str,
    /// The file the command appends to.
    path: PathBuf,
    /// An escape (must fail, the file unchanged) or a control (must work).
    escape: bool,
    /// More arguments of the call.
    more: Value,
}

/// The escapes and the control. Nobody is there to grant more rights, so a call asking for
/// them is refused too.
fn cases(p: &Places) -> Vec<Case> {
    let case = |name, path: PathBuf, escape| Case {
        name,
        path,
        escape,
        more: json!({}),
    };
    vec![
        case("write ~/.bashrc", p.home.join(".bashrc"), true),
        case(
            "write .git/hooks",
            p.project.join(".git/hooks/pre-commit"),
            true,
        ),
        Case {
            more: json!({"sandbox": "full-access", "justification": "the user asked for it"}),
            ..case(
                "ask for full access to write ~/.bashrc",
                p.home.join(".bashrc"),
                true,
            )
        },
        case(
            "control: write src/out.txt",
            p.project.join("src/out.txt"),
            false,
        ),
    ]
}

/// The tool results a Chat Completions request carries.
fn tool_results(request: &Value) -> Vec<String> {
    (request["messages"].as_array().cloned().unwrap_or_default())
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect()
}

/// `qore serve`'s stderr once it listed its server-side tools (it says so after its URL).
async fn tools_said(server: &cli_serve_support::Server) -> String {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let stderr = server.stderr();
        if stderr.contains("server-side tools:") || tokio::time::Instant::now() > deadline {
            return stderr;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

fn serve_config(p: &Places, tools: &str, sandbox: &str) -> String {
    format!(
        "[serve]\ntools = {tools}\nroot = {:?}\n[tools]\nallowed_commands = [\"python3\"]\n{sandbox}",
        p.project.display().to_string()
    )
}

#[tokio::test]
async fn serve_runs_server_side_commands_confined() {
    let p = places();
    let cases = cases(&p);
    let mut replies = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let args = write_to(&case.path, &case.more).to_string();
        replies.push(chat_tool_call(&format!("call_{i}"), "run_command", &args));
        replies.push(chat_answer("done"));
    }
    let upstream = ReplayServer::start(replies).await.unwrap();
    let w = World::new();
    w.chat_provider("up", &upstream)
        .agent("worker", "up", "enable_tools = true");
    let config = serve_config(&p, r#"["read_file", "run_command"]"#, "");
    std::fs::write(w.config.join("config.toml"), config).unwrap();
    let mut server = w.serve_env(&[], &[("HOME", &p.home)]).await;
    let stderr = tools_said(&server).await;
    assert!(
        stderr.contains("server-side tools: read_file, run_command"),
        "{stderr}"
    );
    for case in &cases {
        let name = case.name;
        upstream.take_requests();
        let body = json!({"model": "worker", "stream": false,
            "messages": [{"role": "user", "content": "Work."}]});
        let answer = server.post("/v1/chat/completions", &body, &[]).await;
        assert_eq!(answer.status, 200, "{name}: {}", answer.text);
        let requests: Vec<Value> = (upstream.requests().iter())
            .filter_map(|r| r.json())
            .collect();
        assert_eq!(requests.len(), 2, "{name}: {requests:?}");
        let result = tool_results(&requests[1]).join("\n");
        assert_eq!(pwned(&case.path), !case.escape, "{name}: {result}");
        if case.more == json!({}) {
            // It ran, confined.
            assert!(result.contains(NO_CAPS), "{name}: {result}");
        }
        if case.escape && case.more == json!({}) {
            assert!(result.contains("Permission denied"), "{name}: {result}");
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn serve_offers_run_command_only_named_exactly_and_confined() {
    let p = places();
    // ([serve] tools, [sandbox], a kernel without Landlock?, run_command offered?, what
    // stderr says)
    let cases = [
        (r#"["*"]"#, "", false, false, "server-side tools: "),
        (
            r#"["read_file", "run_command"]"#,
            "[sandbox]\nmode = \"full-access\"\n",
            false,
            false,
            "run_command left out: [sandbox] mode is full-access",
        ),
        (
            r#"["read_file", "run_command"]"#,
            "",
            true,
            false,
            "run_command left out: this kernel cannot confine commands",
        ),
        (
            r#"["run_command"]"#,
            "[sandbox]\nmode = \"read-only\"\n",
            false,
            true,
            "server-side tools: run_command",
        ),
    ];
    let upstream = ReplayServer::start_cycling(vec![chat_answer("hi")])
        .await
        .unwrap();
    for (tools, sandbox, no_landlock, offered, said) in cases {
        let w = World::new();
        w.chat_provider("up", &upstream)
            .agent("worker", "up", "enable_tools = true");
        let config = serve_config(&p, tools, sandbox);
        std::fs::write(w.config.join("config.toml"), config).unwrap();
        let mut env = vec![("HOME", p.home.as_path())];
        if no_landlock {
            env.push(("QORE_SANDBOX_SIMULATE_NO_LANDLOCK", Path::new("1")));
        }
        let mut server = w.serve_env(&[], &env).await;
        let stderr = tools_said(&server).await;
        assert!(stderr.contains(said), "{tools} {sandbox}: {stderr}");
        let listed = (stderr.lines())
            .find(|l| l.contains("server-side tools:"))
            .unwrap_or("");
        assert_eq!(listed.contains("run_command"), offered, "{tools}: {stderr}");
        server.stop().await;
    }
}

/// A Python MCP client that starts `qore mcp serve --root ROOT --allow-write` with this
/// process's whole environment and prints the results of the calls given on stdin.
const PY_CLIENT: &str = r#"
import asyncio, json, os, sys
from mcp import Client, StdioServerParameters

async def main():
    qore, root = sys.argv[1:]
    calls = json.loads(sys.stdin.read())
    params = StdioServerParameters(command=qore, args=["mcp", "serve", "--root", root,
                                   "--allow-write"], env=dict(os.environ))
    async with Client(params) as client:
        results = []
        for name, args in calls:
            r = await client.call_tool(name, args)
            results.append([bool(r.is_error), " ".join(c.text for c in r.content if c.type == "text")])
    print(json.dumps(results))

asyncio.run(main())
"#;

#[tokio::test]
async fn mcp_serve_runs_commands_confined() {
    use tokio::io::AsyncWriteExt as _;
    let python = mcp_env("python").unwrap_or_else(|e| panic!("{e}"));
    let p = places();
    let config = p.base.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[tools]\nallowed_commands = [\"python3\"]\n",
    )
    .unwrap();
    std::fs::write(p.base.join("client.py"), PY_CLIENT).unwrap();
    let cases = cases(&p);
    let calls: Vec<Value> = (cases.iter())
        .map(|case| json!(["run_command", write_to(&case.path, &case.more)]))
        .collect();
    let mut child = tokio::process::Command::new(&python)
        .arg(p.base.join("client.py"))
        .arg(env!("CARGO_BIN_EXE_qore"))
        .arg(&p.project)
        .env("QORE_CONFIG_DIR", &config)
        .env("HOME", &p.home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(json!(calls).to_string().as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let out = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("the client finishes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<(bool, String)> = serde_json::from_str(&stdout).expect("one JSON array");
    assert_eq!(results.len(), cases.len(), "{results:?}");
    for (case, (is_error, text)) in cases.iter().zip(&results) {
        let name = case.name;
        let text = text.replace('\t', "\\t");
        assert_eq!(pwned(&case.path), !case.escape, "{name}: {text}");
        assert_eq!(*is_error, case.escape, "{name}: {text}");
        if case.more == json!({}) {
            assert!(text.contains(NO_CAPS), "{name}: {text}");
        }
        if case.escape && case.more == json!({}) {
            assert!(text.contains("Permission denied"), "{name}: {text}");
        }
    }
}
