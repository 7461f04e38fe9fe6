//! run_command with real processes: the allow-list, exit codes, output caps, the timeout,
//! cancellation and dropping, each killing the whole process group.

mod common;

use std::time::{Duration, Instant};

use common::Project;
use qore_core::CancellationToken;
use qore_tools::{ToolOptions, DEFAULT_ALLOWED_COMMANDS};
use serde_json::json;

fn project(f: impl FnOnce(&mut ToolOptions)) -> Project {
    let mut options = ToolOptions {
        allowed_commands: ["echo", "pwd", "sh", "sleep", "cat", "ls", "yes", "true"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ..ToolOptions::default()
    };
    f(&mut options);
    Project::with_options(options)
}

/// Whether the process `pid` is gone (or a zombie waiting to be reaped), waiting up to 5 s.
#[cfg(target_os = "linux")]
async fn process_ends(pid: u32) -> bool {
    for _ in 0..100 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) => {
                // The state follows the command name in parentheses.
                let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                if state.starts_with('Z') || state.starts_with('X') {
                    return true;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Waits until `path` holds a pid, and returns it.
#[cfg(target_os = "linux")]
async fn pid_from(path: &std::path::Path) -> u32 {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(path) {
            if let Ok(pid) = text.trim().parse() {
                return pid;
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no pid appeared in {}", path.display());
}

/// A script that starts a grandchild, writes its pid and then its own, and waits.
#[cfg(target_os = "linux")]
const WAIT_SCRIPT: &str = "sleep 30 &\necho $! > child.pid\necho $$ > self.pid\nwait\necho never\n";

#[test]
fn the_default_allow_list_is_documented() {
    assert_eq!(
        DEFAULT_ALLOWED_COMMANDS,
        &["git", "ls", "cat", "grep", "rg", "cargo", "echo", "pwd"]
    );
    assert_eq!(
        ToolOptions::default().allowed_commands,
        DEFAULT_ALLOWED_COMMANDS
    );
}

#[tokio::test]
async fn a_command_runs_in_the_project_root_and_reports_its_exit_code() {
    let p = project(|_| {});
    let out = p
        .call("run_command", json!({"argv": ["echo", "hello", "world"]}))
        .await;
    assert!(!out.is_error);
    assert_eq!(
        out.text_content(),
        "`echo hello world` exited with code 0.\nstdout:\nhello world\n\nstderr: (empty)"
    );
    assert_eq!(
        out.structured,
        Some(json!({"exit_code": 0, "timed_out": false, "stdout_bytes": 12, "stderr_bytes": 0}))
    );
    let out = p.ok("run_command", json!({"argv": ["pwd"]})).await;
    assert!(
        out.contains(&format!("stdout:\n{}\n", p.root.display())),
        "{out}"
    );
    p.write("listed.txt", "");
    let out = p.ok("run_command", json!({"argv": ["ls"]})).await;
    assert!(out.contains("listed.txt"), "{out}");
}

#[tokio::test]
async fn commands_get_only_the_passed_on_environment() {
    // cargo sets CARGO_PKG_NAME for the test process; it is not on the pass-on list.
    assert_eq!(std::env::var("CARGO_PKG_NAME").as_deref(), Ok("qore-tools"));
    assert!(std::env::var_os("PATH").is_some());
    let script = "echo \"pkg=${CARGO_PKG_NAME:-unset} path=${PATH:+set}\"\n";
    let p = project(|_| {});
    p.write("env.sh", script);
    let out = p.ok("run_command", json!({"argv": ["sh", "env.sh"]})).await;
    assert!(out.contains("stdout:\npkg=unset path=set\n"), "{out}");
    let p = project(|o| o.command_env.push("CARGO_PKG_NAME".into()));
    p.write("env.sh", script);
    let out = p.ok("run_command", json!({"argv": ["sh", "env.sh"]})).await;
    assert!(out.contains("stdout:\npkg=qore-tools path=set\n"), "{out}");
}

#[tokio::test]
async fn a_non_zero_exit_is_an_error_with_both_streams() {
    let p = project(|_| {});
    p.write("fail.sh", "echo to-out\necho to-err >&2\nexit 3\n");
    let out = p
        .call("run_command", json!({"argv": ["sh", "fail.sh"]}))
        .await;
    assert!(out.is_error);
    assert_eq!(
        out.text_content(),
        "`sh fail.sh` exited with code 3.\nstdout:\nto-out\n\nstderr:\nto-err\n"
    );
    assert_eq!(out.structured.as_ref().unwrap()["exit_code"], 3);
}

#[cfg(unix)]
#[tokio::test]
async fn death_by_signal_is_reported() {
    let p = project(|_| {});
    p.write("die.sh", "kill -9 $$\n");
    let out = p
        .call("run_command", json!({"argv": ["sh", "die.sh"]}))
        .await;
    assert!(out.is_error);
    assert!(
        out.text_content().contains("was killed by signal 9"),
        "{}",
        out.text_content()
    );
    assert_eq!(out.structured.as_ref().unwrap()["exit_code"], json!(null));
}

#[tokio::test]
async fn only_allow_listed_bare_program_names_run() {
    let p = project(|_| {});
    let msg = p
        .err("run_command", json!({"argv": ["rm", "-rf", "."]}))
        .await;
    assert!(
        msg.contains("`rm` is not an allowed program") && msg.contains("echo, pwd"),
        "{msg}"
    );
    let msg = p
        .err("run_command", json!({"argv": ["/bin/echo", "x"]}))
        .await;
    assert!(msg.contains("bare name"), "{msg}");
    let msg = p.err("run_command", json!({"argv": ["./echo"]})).await;
    assert!(msg.contains("bare name"), "{msg}");
    assert!(p
        .err("run_command", json!({"argv": []}))
        .await
        .contains("argv is empty"));
    p.err("run_command", json!({"argv": "echo hi"})).await;
    p.err("run_command", json!({"argv": ["echo"], "timeout_secs": 0}))
        .await;
    // Allowed but not installed.
    let p = project(|o| o.allowed_commands = vec!["qore-no-such-program".into()]);
    let msg = p
        .err("run_command", json!({"argv": ["qore-no-such-program"]}))
        .await;
    assert!(msg.contains("not found"), "{msg}");
}

#[tokio::test]
async fn output_is_capped_to_its_head_and_tail() {
    let p = project(|o| o.command_output_cap = 20);
    let body: String = (0..100).map(|i| format!("{i:03}\n")).collect(); // 400 bytes
    p.write("big.txt", &body);
    let out = p
        .ok("run_command", json!({"argv": ["cat", "big.txt"]}))
        .await;
    let expected = format!(
        "`cat big.txt` exited with code 0.\nstdout:\n{}\n[… 380 bytes of stdout cut (400 in total) …]\n{}\nstderr: (empty)",
        &body[..10],
        &body[390..]
    );
    assert_eq!(out, expected);
}

#[tokio::test]
async fn a_command_past_its_timeout_is_killed() {
    let p = project(|_| {});
    let started = Instant::now();
    let out = p
        .call(
            "run_command",
            json!({"argv": ["sleep", "30"], "timeout_secs": 1}),
        )
        .await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(out.is_error);
    assert!(out
        .text_content()
        .starts_with("`sleep 30` timed out after 1 s and was killed."));
    assert_eq!(out.structured.as_ref().unwrap()["timed_out"], true);
}

#[tokio::test]
async fn endless_output_is_drained_capped_and_stopped_by_the_timeout() {
    let p = project(|o| o.command_output_cap = 64);
    let out = p
        .call(
            "run_command",
            json!({"argv": ["yes", "spam"], "timeout_secs": 1}),
        )
        .await;
    assert!(out.is_error);
    let text = out.text_content();
    assert!(
        text.contains("timed out") && text.contains("bytes of stdout cut"),
        "{text}"
    );
    assert!(text.len() < 400, "{text}");
    let bytes = out.structured.as_ref().unwrap()["stdout_bytes"]
        .as_u64()
        .unwrap();
    assert!(bytes > 64, "{bytes}");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_timeout_kills_grandchildren_too() {
    let p = project(|_| {});
    // The script's child sleeps on; only a group kill ends it.
    p.write("spawn.sh", "sleep 30 &\necho $! > child.pid\nwait\n");
    let out = p
        .call(
            "run_command",
            json!({"argv": ["sh", "spawn.sh"], "timeout_secs": 1}),
        )
        .await;
    assert!(out.is_error && out.text_content().contains("timed out"));
    let pid = pid_from(&p.root.join("child.pid")).await;
    assert!(
        process_ends(pid).await,
        "grandchild {pid} survived the timeout"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn cancellation_stops_the_command_promptly_and_kills_it() {
    let p = project(|_| {});
    p.write("wait.sh", WAIT_SCRIPT);
    let cancel = CancellationToken::new();
    let tool = p.tool("run_command");
    let call = tool.call(json!({"argv": ["sh", "wait.sh"]}), cancel.clone());
    let pid_file = p.root.join("self.pid");
    let canceller = async {
        let pid = pid_from(&pid_file).await;
        cancel.cancel();
        pid
    };
    let started = Instant::now();
    let (out, pid) = tokio::join!(call, canceller);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        out.is_error && out.text_content().starts_with("cancelled"),
        "{}",
        out.text_content()
    );
    assert!(process_ends(pid).await, "{pid} survived the cancellation");
    let child = pid_from(&p.root.join("child.pid")).await;
    assert!(
        process_ends(child).await,
        "grandchild {child} survived the cancellation"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn dropping_the_call_kills_the_command() {
    let p = project(|_| {});
    p.write("wait.sh", WAIT_SCRIPT);
    let tool = p.tool("run_command");
    let call = tool.call(json!({"argv": ["sh", "wait.sh"]}), CancellationToken::new());
    let pid_file = p.root.join("self.pid");
    // The loop gives up on the call (its own timeout) and drops the future.
    let gave_up = tokio::time::timeout(Duration::from_secs(3), async {
        tokio::pin!(call);
        tokio::select! {
            _ = &mut call => panic!("the command should still be running"),
            pid = pid_from(&pid_file) => pid,
        }
    })
    .await
    .unwrap();
    assert!(process_ends(gave_up).await, "{gave_up} survived the drop");
    let child = pid_from(&p.root.join("child.pid")).await;
    assert!(
        process_ends(child).await,
        "grandchild {child} survived the drop"
    );
}

#[test]
fn the_tool_timeout_leaves_room_for_the_longest_command() {
    let p = project(|o| o.command_max_timeout = Duration::from_secs(120));
    assert!(p.tool("run_command").timeout() > Duration::from_secs(120));
}
