//! `[sandbox]` and `[tools]` in an agent profile: its keys win over config.toml's, key by
//! key, for `qore run --agent` (through the real tool loop and a scripted loopback model)
//! and in `qore sandbox check --agent`, which says where each setting came from; a bad
//! value names the profile's file and line.

mod common;

use std::path::PathBuf;

use common::config::ConfigDir;
use common::turns::{answer, tool_results, turn};
use common::{command, run_cmd, Run};
use qore_testkit::ReplayServer;
use serde_json::{json, Value};

const PROVIDER: &str = "providers/loop.toml";

fn profile(extra: &str) -> String {
    format!(
        "name = \"coder\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"m\"\n{extra}"
    )
}

struct World {
    _dir: tempfile::TempDir,
    proj: PathBuf,
    home: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (proj, home) = (base.join("proj"), base.join("home"));
    for d in [&proj, &home] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(home.join(".bashrc"), "# rc\n").unwrap();
    World {
        _dir: dir,
        proj,
        home,
    }
}

async fn check(w: &World, config: &ConfigDir, agent: Option<&str>) -> Run {
    let mut args = vec!["sandbox", "check"];
    if let Some(agent) = agent {
        args.extend(["--agent", agent]);
    }
    let mut cmd = command(&args);
    cmd.env("QORE_CONFIG_DIR", &config.0)
        .env("HOME", &w.home)
        .current_dir(&w.proj);
    run_cmd(cmd).await
}

#[tokio::test]
async fn profile_keys_win_over_config_toml_and_check_says_where_each_came_from() {
    let w = world();
    let coder =
        profile("\n[sandbox]\nmode = \"read-only\"\n\n[tools]\nallowed_commands = [\"ls\"]\n");
    let config = ConfigDir::new(&[
        (
            "config.toml",
            "[sandbox]\nmode = \"full-access\"\nnetwork = true\n",
        ),
        (
            PROVIDER,
            "name = \"loop\"\nprotocol = \"openai-chat\"\nurl = \"http://127.0.0.1:9/v1\"\n",
        ),
        ("agents/coder.toml", &coder),
    ]);
    let plain = check(&w, &config, None).await;
    assert_eq!(plain.code, Some(0), "{plain:?}");
    assert!(
        plain.stdout.contains("policy: full-access"),
        "{}",
        plain.stdout
    );
    let with = check(&w, &config, Some("coder")).await;
    assert_eq!(with.code, Some(0), "{with:?}");
    let out = &with.stdout;
    // Mode from the profile, network from config.toml.
    assert!(out.contains("policy: read-only (network on"), "{out}");
    assert!(out.contains("allowed commands: ls\n"), "{out}");
    let profile_file = config.0.join("agents/coder.toml");
    let config_file = config.0.join("config.toml");
    for line in [
        format!("mode set in {} line 6", profile_file.display()),
        format!("allowed_commands set in {} line 9", profile_file.display()),
        format!("network set in {}", config_file.display()),
    ] {
        assert!(out.contains(&line), "{line}: {out}");
    }
    let missing = check(&w, &config, Some("nobody")).await;
    assert_eq!(missing.code, Some(1), "{missing:?}");
    assert!(missing.stderr.contains("nobody"), "{}", missing.stderr);
}

#[tokio::test]
async fn a_bad_value_in_a_profile_names_its_file_and_line() {
    // (the profile's tables, the line and a word of the error)
    let cases = [
        ("\n[sandbox]\nmode = \"wide-open\"\n", 7, "wide-open"),
        ("\n[sandbox]\nnetwork = \"yes\"\n", 7, "boolean"),
        ("\n[sandbox]\nescalation = \"always\"\n", 7, "always"),
        ("\n[sandbox]\nunconfinable = \"run\"\n", 7, "run"),
        (
            "\n[sandbox]\nmode = \"read-only\"\nnetwrk = true\n",
            8,
            "netwrk",
        ),
        ("\n[tools]\nallowed_commands = \"git\"\n", 7, "sequence"),
    ];
    for (tables, line, word) in cases {
        let w = world();
        let coder = profile(tables);
        let config = ConfigDir::new(&[("agents/coder.toml", coder.as_str())]);
        let run = check(&w, &config, Some("coder")).await;
        assert_eq!(run.code, Some(1), "{tables}: {run:?}");
        let at = format!("coder.toml:{line}:");
        assert!(run.stderr.contains(&at), "{tables}: {at}: {}", run.stderr);
        assert!(
            run.stderr.contains(word),
            "{tables}: {word}: {}",
            run.stderr
        );
    }
}

/// `qore run --agent coder`: the profile lets python3 run and gives full access, where
/// config.toml's defaults (and the run without the agent's sandbox) refuse.
#[tokio::test]
async fn qore_run_with_an_agent_uses_its_sandbox_and_allowed_commands() {
    let w = world();
    let code = format!(
        "open('{}','a').write('alias a=1\\n')",
        w.home.join(".bashrc").display()
    );
    let call = json!({"argv": ["python3", "-c", code]});
    // (the profile's tables, whether the write gets through, a word of the result)
    let cases = [
        (
            "\n[sandbox]\nmode = \"full-access\"\n[tools]\nallowed_commands = [\"python3\"]\n",
            true,
            "exited with code 0",
        ),
        (
            "\n[tools]\nallowed_commands = [\"python3\"]\n",
            false,
            "may come from the sandbox",
        ),
        (
            "\n[sandbox]\nmode = \"full-access\"\n",
            false,
            "not an allowed program",
        ),
    ];
    for (tables, written, word) in cases {
        std::fs::write(w.home.join(".bashrc"), "# rc\n").unwrap();
        let server = ReplayServer::start(vec![
            turn("", &[("call_1", "run_command", call.clone())]),
            answer("done"),
        ])
        .await
        .unwrap();
        let provider = format!(
            "name = \"loop\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
            server.url()
        );
        let coder = profile(tables);
        let config = ConfigDir::new(&[
            (PROVIDER, provider.as_str()),
            ("agents/coder.toml", coder.as_str()),
        ]);
        let project = w.proj.to_str().unwrap();
        let mut cmd = command(&[
            "run",
            "--agent",
            "coder",
            "--tools",
            "auto",
            "--project",
            project,
            "Go.",
        ]);
        cmd.env("QORE_CONFIG_DIR", &config.0).env("HOME", &w.home);
        let run = run_cmd(cmd).await;
        assert_eq!(run.code, Some(0), "{tables}: {run:?}");
        let bodies: Vec<Value> = (server.requests().iter())
            .map(|r| r.json().unwrap())
            .collect();
        let result = (bodies.get(1).map(tool_results))
            .and_then(|mut r| r.pop())
            .map_or_else(String::new, |(_, t)| t);
        let rc = std::fs::read_to_string(w.home.join(".bashrc")).unwrap();
        assert_eq!(rc.contains("alias a=1"), written, "{tables}: {result}");
        assert!(result.contains(word), "{tables}: {word}: {result}");
    }
}
