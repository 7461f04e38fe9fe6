//! The harness of the escalation tests (`cli_sandbox_escalation`,
//! `cli_sandbox_escalation_chat`): a project and a fake home with a `.bashrc`, the scripted
//! model's `run_command` calls (a write to `~/.bashrc`, plain or asking for full access with
//! a justification), `qore run` with and without a pseudo-terminal, and the tool results the
//! model got.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt as _;

use crate::common::config::ConfigDir;
use crate::common::turns::{answer, tool_results, turn, MODEL};
use crate::common::{command, run_cmd, Run};

pub const CONFIG: &str = "[tools]\nallowed_commands = [\"python3\"]\n";
pub const WHY: &str = "The user asked me to add an alias to their ~/.bashrc.";

/// A project and a fake home with a `.bashrc`.
pub struct World {
    _dir: tempfile::TempDir,
    pub proj: PathBuf,
    pub home: PathBuf,
    pub data: PathBuf,
}

impl World {
    pub fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (proj, home, data) = (base.join("proj"), base.join("home"), base.join("data"));
        for d in [&proj, &home, &data] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(home.join(".bashrc"), "# rc\n").unwrap();
        World {
            _dir: dir,
            proj,
            home,
            data,
        }
    }

    pub fn rc(&self) -> String {
        std::fs::read_to_string(self.home.join(".bashrc")).unwrap()
    }
}

/// `run_command` appending `line` to `~/.bashrc` with python, plus `extra` arguments.
pub fn append(home: &Path, line: &str, extra: Value) -> Value {
    let code = format!(
        "open('{}','a').write('{line}\\n')",
        home.join(".bashrc").display()
    );
    let mut args = json!({"argv": ["python3", "-c", code]});
    if let (Some(args), Value::Object(extra)) = (args.as_object_mut(), extra) {
        args.extend(extra);
    }
    args
}

pub fn escalated(home: &Path, line: &str) -> Value {
    append(
        home,
        line,
        json!({"sandbox": "full-access", "justification": WHY}),
    )
}

/// The model: a plain write (refused by the sandbox), then the same asking for full access.
pub fn script(home: &Path) -> Vec<Reply> {
    vec![
        turn(
            "",
            &[(
                "call_1",
                "run_command",
                append(home, "alias a=1", json!({})),
            )],
        ),
        turn(
            "",
            &[("call_2", "run_command", escalated(home, "alias a=1"))],
        ),
        answer("done"),
    ]
}

/// The model: two calls asking for full access (`alias a=1`, then `alias b=2`), then an
/// answer.
pub fn two_escalations(home: &Path) -> Vec<Reply> {
    vec![
        turn(
            "",
            &[("call_1", "run_command", escalated(home, "alias a=1"))],
        ),
        turn(
            "",
            &[("call_2", "run_command", escalated(home, "alias b=2"))],
        ),
        answer("All done."),
    ]
}

/// The newest tool result of each request after the first.
pub fn results(server: &ReplayServer) -> Vec<String> {
    (server.requests().iter().skip(1))
        .map(|r| {
            let body: Value = r.json().unwrap();
            (tool_results(&body).pop()).map_or_else(String::new, |(_, t)| t)
        })
        .collect()
}

pub async fn run_without_terminal(
    w: &World,
    config: &str,
    replies: Vec<Reply>,
    flags: &[&str],
    env: &[(&str, &str)],
) -> (Run, Vec<String>) {
    let config = ConfigDir::new(&[("config.toml", config)]);
    let server = ReplayServer::start(replies).await.unwrap();
    let url = format!("{}/v1", server.url());
    let project = w.proj.to_str().unwrap();
    let mut args = vec!["run", "--url", &url, "--model", MODEL, "--project", project];
    args.extend(flags);
    args.push("Add the alias.");
    let mut cmd = command(&args);
    cmd.env("QORE_CONFIG_DIR", &config.0).env("HOME", &w.home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let run = run_cmd(cmd).await;
    let results = results(&server);
    eprintln!("{flags:?}: {results:#?}\n{}", run.stderr);
    (run, results)
}

/// `qore run FLAGS` in a pseudo-terminal, with the world's home, config and data dirs.
#[cfg(target_os = "linux")]
pub fn on_a_terminal(
    w: &World,
    server: &ReplayServer,
    config: &ConfigDir,
    flags: &[&str],
    simulate_no_landlock: bool,
) -> tokio::process::Child {
    let url = format!("{}/v1", server.url());
    let mut argv = vec![
        crate::common::QORE,
        "run",
        "--url",
        &url,
        "--model",
        MODEL,
        "--project",
        w.proj.to_str().unwrap(),
    ];
    argv.extend(flags);
    argv.push("Add the alias.");
    let mut env: Vec<(&str, &Path)> = vec![
        ("HOME", &w.home),
        ("QORE_CONFIG_DIR", &config.0),
        ("QORE_DATA_DIR", &w.data),
    ];
    if simulate_no_landlock {
        env.push(("QORE_SANDBOX_SIMULATE_NO_LANDLOCK", Path::new("1")));
    }
    crate::common::pty::in_pty(&argv, &env)
}

/// Type `line` on the terminal.
pub async fn type_line(stdin: &mut tokio::process::ChildStdin, line: &str) {
    stdin
        .write_all(format!("{line}\n").as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();
}

pub async fn ends(child: &mut tokio::process::Child, seen: &str) {
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .unwrap_or_else(|_| panic!("qore did not end: {seen}"))
        .unwrap();
    assert!(status.success(), "{status:?}: {seen}");
}

pub const ONCE: &str = "[y] yes, this call only, [N] no";
