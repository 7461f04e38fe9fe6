//! The sandbox through the real tool loop: `qore run --tools auto` against a loopback server
//! that scripts a model asking for `run_command` (and the file tools). Under the default
//! policy each escape fails, its result tells the model the sandbox may be why, and the
//! command ran without capabilities; with `[sandbox] mode = "full-access"` in config.toml (or
//! a control inside the root) the same command works. `[tools] allowed_commands` is the
//! setting that lets `python3` run at all.

mod common;

use std::net::TcpListener;
use std::path::PathBuf;

use common::config::ConfigDir;
use common::turns::{answer, tool_results, turn, MODEL};
use common::{command, run_cmd, Run};
use qore_testkit::ReplayServer;
use serde_json::{json, Value};

const DEFAULT: &str = "[tools]\nallowed_commands = [\"python3\", \"echo\"]\n";
const FULL: &str =
    "[tools]\nallowed_commands = [\"python3\", \"echo\"]\n[sandbox]\nmode = \"full-access\"\n";

/// A project (with `.git/hooks` and `src/`) and a fake home with a key and a `.bashrc`.
struct World {
    _dir: tempfile::TempDir,
    proj: PathBuf,
    home: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let proj = base.join("proj");
    let home = base.join("home");
    for d in [proj.join(".git/hooks"), proj.join("src"), home.join(".ssh")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(home.join(".ssh/id_ed25519"), "SECRET-KEY-MATERIAL\n").unwrap();
    std::fs::write(home.join(".bashrc"), "# rc\n").unwrap();
    World {
        _dir: dir,
        proj,
        home,
    }
}

/// One run where the model calls `tool` with `input`, under `config`; the run and the
/// tool result the next request carried.
async fn call(
    w: &World,
    config: &str,
    tool: &str,
    input: Value,
    env: &[(&str, &str)],
) -> (Run, String, Value) {
    let config = ConfigDir::new(&[("config.toml", config)]);
    let server = ReplayServer::start(vec![turn("", &[("call_1", tool, input)]), answer("done")])
        .await
        .unwrap();
    let url = format!("{}/v1", server.url());
    let mut cmd = command(&[
        "run",
        "--url",
        &url,
        "--model",
        MODEL,
        "--tools",
        "auto",
        "--project",
        w.proj.to_str().unwrap(),
        "Work.",
    ]);
    cmd.env("QORE_CONFIG_DIR", &config.0)
        .env("HOME", &w.home)
        .env("PATH", "/usr/bin:/bin");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let run = run_cmd(cmd).await;
    let bodies: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.json().unwrap())
        .collect();
    let result = bodies
        .get(1)
        .map(|b| {
            tool_results(b)
                .into_iter()
                .map(|(_, t)| t)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    eprintln!("{tool}: {result}\n{}", run.stderr);
    (run, result, bodies.first().cloned().unwrap_or(Value::Null))
}

/// Whether a case got out, given the tool result.
type Escaped = Box<dyn Fn(&str) -> bool>;

fn py(code: &str) -> Value {
    json!({"argv": ["python3", "-c", code]})
}

#[tokio::test]
async fn escapes_through_run_command_fail_and_their_controls_work() {
    let w = world();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let port = tcp.local_addr().unwrap().port();
    let rc = w.home.join(".bashrc");
    let hook = w.proj.join(".git/hooks/pre-commit");
    let status = "print(open('/proc/self/status').read())";
    // (case, python code, did it get out?)
    let cases: Vec<(&str, String, Escaped)> = vec![
        (
            "write ~/.bashrc",
            format!("{status} or open('{}','a').write('pwned')", rc.display()),
            Box::new(move |_| std::fs::read_to_string(&rc).unwrap().contains("pwned")),
        ),
        (
            "write .git/hooks",
            format!("{status} or open('.git/hooks/pre-commit','w').write('x')"),
            Box::new(move |_| hook.exists()),
        ),
        (
            "read ~/.ssh",
            format!(
                "{status} or print(open('{}/.ssh/id_ed25519').read())",
                w.home.display()
            ),
            Box::new(|result| result.contains("SECRET-KEY-MATERIAL")),
        ),
        (
            "connect to a loopback TCP server",
            format!("{status} or __import__('socket').create_connection(('127.0.0.1',{port}))"),
            Box::new(move |_| tcp.accept().is_ok()),
        ),
    ];
    for (name, code, escaped) in cases {
        let (run, result, first) = call(&w, DEFAULT, "run_command", py(&code), &[]).await;
        assert_eq!(run.code, Some(0), "{name}: {run:?}");
        assert!(
            !escaped(&result),
            "{name}: escaped the default policy: {result}"
        );
        assert!(
            result.contains("CapEff:\t0000000000000000"),
            "{name}: caps kept: {result}"
        );
        assert!(
            result.contains("may come from the sandbox"),
            "{name}: no note: {result}"
        );
        let description = first["tools"].to_string();
        assert!(
            description.contains("python3") && !description.contains("cargo"),
            "{description}"
        );
        let (_, free, _) = call(&w, FULL, "run_command", py(&code), &[]).await;
        assert!(
            escaped(&free),
            "{name}: the full-access control failed too: {free}"
        );
    }
}

#[tokio::test]
async fn inside_the_root_commands_and_file_tools_work_and_protected_places_are_refused_alike() {
    let w = world();
    let (_, ok, _) = call(
        &w,
        DEFAULT,
        "run_command",
        py("open('src/made.txt','w').write('ok')"),
        &[],
    )
    .await;
    assert!(w.proj.join("src/made.txt").exists(), "{ok}");
    assert!(ok.contains("exited with code 0"), "{ok}");
    // The file tools check the same policy: .qore is read-only for them too.
    std::fs::create_dir_all(w.proj.join(".qore")).unwrap();
    let (_, refused, _) = call(
        &w,
        DEFAULT,
        "write_file",
        json!({"path": ".qore/settings.toml", "content": "x = 1\n"}),
        &[],
    )
    .await;
    assert!(!w.proj.join(".qore/settings.toml").exists(), "{refused}");
    assert!(refused.contains("read-only"), "{refused}");
    let (_, written, _) = call(
        &w,
        FULL,
        "write_file",
        json!({"path": ".qore/settings.toml", "content": "x = 1\n"}),
        &[],
    )
    .await;
    assert!(w.proj.join(".qore/settings.toml").exists(), "{written}");
}

#[tokio::test]
async fn without_landlock_a_command_is_refused_never_run_unconfined() {
    let w = world();
    let (run, result, _) = call(
        &w,
        DEFAULT,
        "run_command",
        py("open('src/made.txt','w').write('ok')"),
        &[("QORE_SANDBOX_SIMULATE_NO_LANDLOCK", "1")],
    )
    .await;
    assert!(!w.proj.join("src/made.txt").exists(), "{result}");
    assert_eq!(
        (run.stderr.lines())
            .filter(|l| l.starts_with("qore: this kernel cannot confine commands"))
            .count(),
        1,
        "said once: {}",
        run.stderr
    );
    assert!(result.contains("could not be set up"), "{result}");
    assert!(result.contains("never run unconfined"), "{result}");
}

#[tokio::test]
async fn a_broken_sandbox_setting_names_the_file_and_line() {
    let w = world();
    let config = ConfigDir::new(&[(
        "config.toml",
        "[tools]\n\n[sandbox]\nmode = \"wide-open\"\n",
    )]);
    let run = run_cmd({
        let mut cmd = command(&["sandbox", "check"]);
        cmd.env("QORE_CONFIG_DIR", &config.0).current_dir(&w.proj);
        cmd
    })
    .await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stderr.contains("config.toml"), "{}", run.stderr);
    assert!(run.stderr.contains("line 3"), "{}", run.stderr);
    assert!(run.stderr.contains("wide-open"), "{}", run.stderr);
}

#[tokio::test]
async fn sandbox_check_prints_the_kernel_and_the_policy_in_force() {
    let w = world();
    let config = ConfigDir::new(&[("config.toml", "[sandbox]\nnetwork = true\n")]);
    let check = |extra: Option<(&'static str, &'static str)>| {
        let mut cmd = command(&["sandbox", "check"]);
        cmd.env("QORE_CONFIG_DIR", &config.0).current_dir(&w.proj);
        if let Some((k, v)) = extra {
            cmd.env(k, v);
        }
        run_cmd(cmd)
    };
    let run = check(None).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("landlock: ABI "), "{}", run.stdout);
    assert!(run.stdout.contains("seccomp: yes"), "{}", run.stdout);
    assert!(
        run.stdout.contains("policy: workspace-write (network on;"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(".git, .qore"), "{}", run.stdout);
    let simulated = check(Some(("QORE_SANDBOX_SIMULATE_NO_LANDLOCK", "1"))).await;
    assert_eq!(simulated.code, Some(1), "{simulated:?}");
    assert!(
        simulated.stdout.contains("landlock: none"),
        "{}",
        simulated.stdout
    );
}
