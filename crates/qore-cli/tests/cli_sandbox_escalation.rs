//! Asking for more rights, through the real binary and the real tool loop: a loopback server
//! scripts a model whose write to `~/.bashrc` the default sandbox refuses; the refusal tells
//! it how to ask, and it asks again with `"sandbox": "full-access"` and a justification.
//! Without a terminal the call is refused whatever the approval mode (`auto`, `--yes`,
//! `confirm`) and the file stays as it was; on a terminal (a pseudo-terminal) the question
//! shows the rights and the justification, "always" is not an answer, `y` runs it (the file
//! is written) and the next such call is asked about again. On a kernel that cannot confine
//! commands (simulated), `[sandbox] unconfinable = "ask"` asks before every command.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::config::ConfigDir;
use common::turns::{answer, tool_results, turn, MODEL};
use common::{command, run_cmd, Run};
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt as _;

const CONFIG: &str = "[tools]\nallowed_commands = [\"python3\"]\n";
const WHY: &str = "The user asked me to add an alias to their ~/.bashrc.";

/// A project and a fake home with a `.bashrc`.
struct World {
    _dir: tempfile::TempDir,
    proj: PathBuf,
    home: PathBuf,
    data: PathBuf,
}

impl World {
    fn new() -> World {
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

    fn rc(&self) -> String {
        std::fs::read_to_string(self.home.join(".bashrc")).unwrap()
    }
}

/// `run_command` appending `line` to `~/.bashrc` with python, plus `extra` arguments.
fn append(home: &Path, line: &str, extra: Value) -> Value {
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

fn escalated(home: &Path, line: &str) -> Value {
    append(
        home,
        line,
        json!({"sandbox": "full-access", "justification": WHY}),
    )
}

/// The model: a plain write (refused by the sandbox), then the same asking for full access.
fn script(home: &Path) -> Vec<Reply> {
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

/// The newest tool result of each request after the first.
fn results(server: &ReplayServer) -> Vec<String> {
    (server.requests().iter().skip(1))
        .map(|r| {
            let body: Value = r.json().unwrap();
            (tool_results(&body).pop()).map_or_else(String::new, |(_, t)| t)
        })
        .collect()
}

async fn run_without_terminal(
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

#[tokio::test]
async fn without_a_terminal_more_rights_are_refused_in_every_approval_mode() {
    // (flags, what the refusal says)
    let cases: [(&[&str], &str); 3] = [
        (&["--tools", "auto"], "only a person can grant"),
        (&["--yes"], "only a person can grant"),
        // confirm with nobody to ask is read-only.
        (&["--tools", "confirm"], "read-only"),
    ];
    for (flags, refusal) in cases {
        let w = World::new();
        let (run, results) = run_without_terminal(&w, CONFIG, script(&w.home), flags, &[]).await;
        assert_eq!(run.code, Some(0), "{flags:?}: {run:?}");
        assert_eq!(w.rc(), "# rc\n", "{flags:?}: written");
        assert_eq!(results.len(), 2, "{flags:?}: {results:?}");
        if flags != ["--tools", "confirm"] {
            // The sandbox's refusal tells the model how to ask.
            for part in [
                "may come from the sandbox",
                "\"sandbox\": \"full-access\"",
                "justification",
            ] {
                assert!(
                    results[0].contains(part),
                    "{flags:?}: {part}: {}",
                    results[0]
                );
            }
        }
        assert!(
            results[1].contains(refusal) && results[1].contains("sandbox mode full-access"),
            "{flags:?}: {}",
            results[1]
        );
        assert!(
            !results[1].contains("exited with code"),
            "{flags:?}: ran: {}",
            results[1]
        );
    }
}

#[tokio::test]
async fn the_schema_offers_more_rights_unless_escalation_is_never() {
    let w = World::new();
    let never = format!("{CONFIG}[sandbox]\nescalation = \"never\"\n");
    for (config, offered) in [(CONFIG.to_owned(), true), (never, false)] {
        let server = ReplayServer::start(vec![
            turn("", &[("call_1", "run_command", escalated(&w.home, "x=1"))]),
            answer("done"),
        ])
        .await
        .unwrap();
        let config_dir = ConfigDir::new(&[("config.toml", &config)]);
        let url = format!("{}/v1", server.url());
        let project = w.proj.to_str().unwrap();
        let mut cmd = command(&[
            "run",
            "--url",
            &url,
            "--model",
            MODEL,
            "--project",
            project,
            "--yes",
            "Go.",
        ]);
        cmd.env("QORE_CONFIG_DIR", &config_dir.0)
            .env("HOME", &w.home);
        let run = run_cmd(cmd).await;
        assert_eq!(run.code, Some(0), "{run:?}");
        let first: Value = server.requests()[0].json().unwrap();
        let tools = first["tools"].to_string();
        assert_eq!(
            tools.contains("justification"),
            offered,
            "{config}: {tools}"
        );
        // Never: the arguments break the schema; ask: nobody to grant them. Not run either way.
        assert_eq!(w.rc(), "# rc\n", "{config}");
    }
}

/// `qore run FLAGS` in a pseudo-terminal, with the world's home, config and data dirs.
#[cfg(target_os = "linux")]
fn on_a_terminal(
    w: &World,
    server: &ReplayServer,
    config: &ConfigDir,
    flags: &[&str],
    simulate_no_landlock: bool,
) -> tokio::process::Child {
    let url = format!("{}/v1", server.url());
    let mut argv = vec![
        common::QORE,
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
    common::pty::in_pty(&argv, &env)
}

/// Type `line` on the terminal.
async fn type_line(stdin: &mut tokio::process::ChildStdin, line: &str) {
    stdin
        .write_all(format!("{line}\n").as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();
}

async fn ends(child: &mut tokio::process::Child, seen: &str) {
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .unwrap_or_else(|_| panic!("qore did not end: {seen}"))
        .unwrap();
    assert!(status.success(), "{status:?}: {seen}");
}

const ONCE: &str = "[y] yes, this call only, [N] no";

/// On a terminal, in `auto` (`--yes`) and in `confirm` alike: the question names the rights
/// and the justification, "always" is refused as an answer, `y` writes the file, and the
/// next call asking for full access is asked about again (`n` leaves it unwritten).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn on_a_terminal_a_person_grants_more_rights_one_call_at_a_time() {
    use common::pty::{has_script, read_until_count};
    if !has_script() {
        return;
    }
    for flags in [&["--yes"][..], &["--tools", "confirm"][..]] {
        let w = World::new();
        let config = ConfigDir::new(&[("config.toml", CONFIG)]);
        let server = ReplayServer::start(vec![
            turn(
                "",
                &[("call_1", "run_command", escalated(&w.home, "alias a=1"))],
            ),
            turn(
                "",
                &[("call_2", "run_command", escalated(&w.home, "alias b=2"))],
            ),
            answer("All done."),
        ])
        .await
        .unwrap();
        let mut child = on_a_terminal(&w, &server, &config, flags, false);
        let mut terminal = child.stdout.take().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut seen = String::new();
        read_until_count(&mut terminal, &mut seen, ONCE, 1).await;
        for part in [
            "run_command asks for more rights for this call: sandbox mode full-access",
            &format!("the model's justification: {WHY}"),
            "with sandbox mode full-access?",
        ] {
            assert!(seen.contains(part), "{flags:?}: {part}: {seen}");
        }
        type_line(&mut stdin, "a").await;
        read_until_count(&mut terminal, &mut seen, "granted one call at a time", 1).await;
        type_line(&mut stdin, "y").await;
        // The next call asks again: nothing was remembered.
        read_until_count(&mut terminal, &mut seen, "asks for more rights", 2).await;
        type_line(&mut stdin, "n not b").await;
        read_until_count(&mut terminal, &mut seen, "All done.", 1).await;
        ends(&mut child, &seen).await;
        assert_eq!(w.rc(), "# rc\nalias a=1\n", "{flags:?}: {seen}");
        let results = results(&server);
        assert!(results[0].contains("exited with code 0"), "{}", results[0]);
        assert!(
            results[1].contains("not granted") && results[1].contains("not b"),
            "{}",
            results[1]
        );
    }
}

/// A simulated kernel without Landlock: `unconfinable = "refuse"` (the default) refuses the
/// command, `"ask"` refuses it without a terminal and, on one, asks before every command
/// (each time), the granted one running unconfined.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn on_a_kernel_that_cannot_confine_commands_each_one_is_refused_or_asked_about() {
    use common::pty::{has_script, read_until_count};
    const NO_LANDLOCK: (&str, &str) = ("QORE_SANDBOX_SIMULATE_NO_LANDLOCK", "1");
    let ask = format!("{CONFIG}[sandbox]\nunconfinable = \"ask\"\n");
    let plain = |w: &World| {
        vec![
            turn(
                "",
                &[(
                    "call_1",
                    "run_command",
                    append(&w.home, "alias a=1", json!({})),
                )],
            ),
            answer("done"),
        ]
    };
    // Without a terminal: (config, what stderr says once, what the result says)
    let cases = [
        (
            CONFIG.to_owned(),
            "refuses every command",
            "could not be set up",
        ),
        (
            ask.clone(),
            "asks before every command",
            "only a person can grant",
        ),
    ];
    for (config, said, result) in cases {
        let w = World::new();
        let flags = ["--tools", "auto"];
        let (run, results) =
            run_without_terminal(&w, &config, plain(&w), &flags, &[NO_LANDLOCK]).await;
        assert_eq!(w.rc(), "# rc\n", "{config}: written");
        let notes: Vec<&str> = (run.stderr.lines())
            .filter(|l| l.starts_with("qore: this kernel cannot confine commands"))
            .collect();
        assert_eq!(notes.len(), 1, "said once: {}", run.stderr);
        assert!(notes[0].contains(said), "{config}: {}", notes[0]);
        assert!(results[0].contains(result), "{config}: {}", results[0]);
    }
    if !has_script() {
        return;
    }
    let w = World::new();
    let config = ConfigDir::new(&[("config.toml", &ask)]);
    let server = ReplayServer::start(vec![
        turn(
            "",
            &[(
                "call_1",
                "run_command",
                append(&w.home, "alias a=1", json!({})),
            )],
        ),
        turn(
            "",
            &[(
                "call_2",
                "run_command",
                append(&w.home, "alias b=2", json!({})),
            )],
        ),
        answer("All done."),
    ])
    .await
    .unwrap();
    let mut child = on_a_terminal(&w, &server, &config, &["--yes"], true);
    let mut terminal = child.stdout.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = String::new();
    read_until_count(&mut terminal, &mut seen, ONCE, 1).await;
    assert!(
        seen.contains("this kernel cannot confine commands"),
        "{seen}"
    );
    assert!(seen.contains("runs with all of your rights"), "{seen}");
    type_line(&mut stdin, "y").await;
    read_until_count(&mut terminal, &mut seen, ONCE, 2).await;
    type_line(&mut stdin, "n").await;
    read_until_count(&mut terminal, &mut seen, "All done.", 1).await;
    ends(&mut child, &seen).await;
    assert_eq!(w.rc(), "# rc\nalias a=1\n", "{seen}");
}
