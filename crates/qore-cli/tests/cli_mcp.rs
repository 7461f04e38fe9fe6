//! `qore mcp …` and MCP tools in `qore run`: the real binary, real MCP servers installed by
//! scripts/mcp-env.sh (qore-testkit's Python MCPServer), and a loopback model (hand-written
//! Chat Completions streams) that calls an MCP tool.

mod common;

use common::config::{qore_in, run_tools_in, ConfigDir};
use common::live::run_with_stdin;
use common::turns::{answer, offered, tool_results, turn, MODEL};
use common::{command, run_cmd, Run};
use qore_testkit::mcp_env::{mcp_env, PY_SERVER};
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

/// A config dir whose mcp.json has `py` (the Python server), `pyt` (the same, trusted, only
/// its read-only `look`), `crash` (exits at start) and `off` (disabled); its `marks` dir and
/// script live inside it.
fn config_with_servers() -> ConfigDir {
    let python = mcp_env("python").unwrap_or_else(|e| panic!("{e}"));
    let config = ConfigDir::new(&[("server.py", PY_SERVER)]);
    let marks = config.0.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let mcp = json!({"mcpServers": {
        "py": {"command": python, "args": [config.0.join("server.py"), marks]},
        "crash": {"command": python, "args": ["-c", "import sys; print('bad setup', file=sys.stderr); sys.exit(2)"]},
        "off": {"command": "/nonexistent", "enabled": false},
        "pyt": {"command": python, "args": [config.0.join("server.py"), marks], "trusted": true,
                "enabled_tools": ["look"]}
    }});
    std::fs::write(config.0.join("mcp.json"), mcp.to_string()).unwrap();
    config
}

/// `qore run --tools MODE` with `config` against a loopback model answering `replies`;
/// the run and the request bodies the model received.
async fn run_with_model(config: &ConfigDir, mode: &str, replies: Vec<Reply>) -> (Run, Vec<Value>) {
    run_tools_in(config, &config.0.join("marks"), mode, replies).await
}

#[tokio::test]
async fn a_model_calls_an_mcp_tool_through_qore_run_and_gets_its_result() {
    let config = config_with_servers();
    let replies = vec![
        turn(
            "Greeting.",
            &[("call_m", "py__greet", json!({"name": "qore"}))],
        ),
        answer("Done."),
    ];
    let (run, bodies) = run_with_model(&config, "auto", replies).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "Greeting.\nDone.\n");
    // The crashed server is a warning naming it and its stderr; the run goes on.
    assert!(
        run.stderr.contains("'crash'") && run.stderr.contains("bad setup"),
        "{}",
        run.stderr
    );

    assert_eq!(bodies.len(), 2);
    let offered = offered(&bodies[0]);
    for tool in ["read_file", "py__greet", "py__fail", "py__look"] {
        assert!(
            offered.contains(&tool.to_string()),
            "{tool} not in {offered:?}"
        );
    }
    let results = tool_results(&bodies[1]);
    assert_eq!(results, [("call_m".to_string(), "hello qore".to_string())]);
}

/// Turn one greets and calls `py__grow`, which adds `grown` and says the tools changed
/// (`notifications/tools/list_changed`); turn two is offered `py__grown` and calls it.
#[tokio::test]
async fn qore_chat_offers_mcp_tools_on_every_turn_and_follows_their_changes() {
    let config = config_with_servers();
    let server = ReplayServer::start(vec![
        turn(
            "",
            &[
                ("c1", "py__greet", json!({"name": "one"})),
                ("c2", "py__grow", json!({})),
            ],
        ),
        answer("First."),
        turn("", &[("c3", "py__grown", json!({}))]),
        answer("Second."),
    ])
    .await
    .expect("replay server");
    let url = format!("{}/v1", server.url());
    let project = config.0.join("marks");
    let args = [
        "chat",
        "--url",
        &url,
        "--model",
        MODEL,
        "--tools",
        "auto",
        "--ephemeral",
        "--project",
    ];
    let mut cmd = command(&args);
    cmd.arg(&project).env("QORE_CONFIG_DIR", &config.0);
    let run = run_with_stdin(cmd, "Greet one.\nUse the new tool.\n").await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let bodies: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.json().unwrap())
        .collect();
    assert_eq!(bodies.len(), 4, "{run:?}");
    assert!(!offered(&bodies[0]).contains(&"py__grown".to_string()));
    assert_eq!(
        tool_results(&bodies[1]),
        [
            ("c1".to_string(), "hello one".to_string()),
            ("c2".to_string(), "grew".to_string())
        ]
    );
    let offered = offered(&bodies[2]);
    assert!(offered.contains(&"py__grown".to_string()), "{offered:?}");
    assert!(offered.contains(&"py__greet".to_string()), "{offered:?}");
    let second = tool_results(&bodies[3]);
    assert_eq!(
        second.last(),
        Some(&("c3".to_string(), "grown here".to_string()))
    );
}

/// One turn: round 1 calls `py__grow`, which adds `grown` and says the tools changed
/// before it answers; round 2's request already offers `py__grown`, and its call is run.
#[tokio::test]
async fn qore_run_offers_a_tool_an_mcp_server_added_from_the_next_round_of_the_same_turn() {
    let config = config_with_servers();
    let replies = vec![
        turn("", &[("c1", "py__grow", json!({}))]),
        turn("", &[("c2", "py__grown", json!({}))]),
        answer("Done."),
    ];
    let (run, bodies) = run_with_model(&config, "auto", replies).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(bodies.len(), 3, "{run:?}");
    assert!(!offered(&bodies[0]).contains(&"py__grown".to_string()));
    let offered = offered(&bodies[1]);
    assert!(offered.contains(&"py__grown".to_string()), "{offered:?}");
    assert!(offered.contains(&"py__greet".to_string()), "{offered:?}");
    assert_eq!(
        tool_results(&bodies[2]),
        [
            ("c1".to_string(), "grew".to_string()),
            ("c2".to_string(), "grown here".to_string())
        ]
    );
}

#[tokio::test]
async fn read_only_runs_only_a_trusted_servers_read_only_tools() {
    let config = config_with_servers();
    let calls = [
        ("c1", "py__greet", json!({"name": "x"})),
        ("c2", "py__look", json!({})),
        ("c3", "pyt__look", json!({})),
    ];
    let replies = vec![turn("", &calls), answer("Done.")];
    let (run, bodies) = run_with_model(&config, "read-only", replies).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let results = tool_results(&bodies[1]);
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[0].1.contains("read-only"), "{results:?}");
    assert!(
        results[1].1.contains("read-only"),
        "untrusted hints do not count: {results:?}"
    );
    assert_eq!(results[2], ("c3".to_string(), "looked".to_string()));
}

#[tokio::test]
async fn mcp_list_tools_add_and_rm() {
    let config = config_with_servers();
    let run = qore_in(&config, &["mcp", "list"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let row = |name: &str| {
        run.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row {name}: {}", run.stdout))
            .to_string()
    };
    assert!(row("py").contains("running, 7 tools"), "{}", row("py"));
    assert!(row("crash").contains("failed"), "{}", row("crash"));
    assert!(row("off").contains("disabled"), "{}", row("off"));
    assert!(run.stderr.contains("bad setup"), "{}", run.stderr);

    let run = qore_in(&config, &["mcp", "tools", "py"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let greet = run
        .stdout
        .lines()
        .find(|l| l.contains("py__greet"))
        .expect("py__greet");
    assert!(
        greet.contains("confirm") && greet.contains("Greet someone."),
        "{greet}"
    );
    let cases: &[(&[&str], &str)] = &[
        (
            &["mcp", "tools", "nope"],
            "no MCP server 'nope' is configured (known: crash, off, py, pyt)",
        ),
        (&["mcp", "tools", "crash"], "bad setup"),
        (&["mcp", "rm", "nope"], "has no MCP server 'nope'"),
    ];
    for (args, want) in cases {
        let run = qore_in(&config, args).await;
        assert_eq!(run.code, Some(1), "{args:?}: {run:?}");
        assert!(run.stderr.contains(want), "{args:?}: {}", run.stderr);
    }

    let run = qore_in(
        &config,
        &[
            "mcp",
            "add",
            "echo",
            "--env",
            "A=1",
            "--",
            "echo-server",
            "--flag",
        ],
    )
    .await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.starts_with("added MCP server 'echo' in "),
        "{}",
        run.stdout
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(config.0.join("mcp.json")).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"]["echo"],
        json!({"command": "echo-server", "args": ["--flag"], "env": {"A": "1"}})
    );
    assert!(written["mcpServers"]["py"].is_object(), "the others stay");
    let run = qore_in(&config, &["mcp", "rm", "echo"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let run = qore_in(&config, &["mcp", "add", "x", "--env", "novalue", "--", "c"]).await;
    assert_eq!(run.code, Some(2), "{run:?}");
    let run = qore_in(&config, &["mcp", "add", "x"]).await;
    assert_eq!(run.code, Some(2), "a command is required: {run:?}");
}

#[tokio::test]
async fn a_projects_servers_start_only_once_trusted_and_until_the_file_changes() {
    let python = mcp_env("python").unwrap_or_else(|e| panic!("{e}"));
    let config = ConfigDir::new(&[("server.py", PY_SERVER)]);
    let project = config.0.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let mcp_json = |extra: &str| {
        let mut servers =
            json!({"proj": {"command": python, "args": [config.0.join("server.py"), &project]}});
        if !extra.is_empty() {
            servers[extra] = json!({"command": "/nonexistent"});
        }
        std::fs::write(
            project.join(".mcp.json"),
            json!({"mcpServers": servers}).to_string(),
        )
        .unwrap();
    };
    mcp_json("");

    // Not trusted yet and nobody to ask: not started, and stderr says how to allow them.
    let (run, bodies) = run_tools_in(&config, &project, "auto", vec![answer("No.")]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.contains("not started") && run.stderr.contains("qore mcp trust"),
        "{}",
        run.stderr
    );
    assert!(!offered(&bodies[0]).contains(&"proj__greet".to_string()));

    let mut trust = command(&["mcp", "trust", "--project", project.to_str().unwrap()]);
    trust.env("QORE_CONFIG_DIR", &config.0);
    let run = run_cmd(trust).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.starts_with("trusted: "), "{}", run.stdout);

    let replies = vec![
        turn("", &[("call_p", "proj__greet", json!({"name": "p"}))]),
        answer("Ok."),
    ];
    let (run, bodies) = run_tools_in(&config, &project, "auto", replies).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        tool_results(&bodies[1]),
        [("call_p".to_string(), "hello p".to_string())]
    );

    // `qore mcp list` in the project shows it running; a changed file is untrusted again.
    let mut list = command(&["mcp", "list"]);
    list.env("QORE_CONFIG_DIR", &config.0).current_dir(&project);
    let run = run_cmd(list).await;
    assert!(
        run.stdout
            .lines()
            .any(|l| l.contains("proj") && l.contains("running")),
        "{}",
        run.stdout
    );
    mcp_json("added");
    let (run, bodies) = run_tools_in(&config, &project, "auto", vec![answer("No.")]).await;
    assert!(run.stderr.contains("not started"), "{}", run.stderr);
    assert!(!offered(&bodies[0]).contains(&"proj__greet".to_string()));
}
