//! Asking for more rights, through the real binary and the real tool loop: a loopback server
//! scripts a model whose write to `~/.bashrc` the default sandbox refuses; the refusal tells
//! it how to ask, and it asks again with `"sandbox": "full-access"` and a justification.
//! Without a terminal the call is refused whatever the approval mode (`auto`, `--yes`,
//! `confirm`) and the file stays as it was; on a terminal (a pseudo-terminal) the question
//! shows the rights and the justification, "always" is not an answer, `y` runs it (the file
//! is written) and the next such call is asked about again. On a kernel that cannot confine
//! commands (simulated), `[sandbox] unconfinable = "ask"` asks before every command.

mod cli_sandbox_escalation_support;
mod common;

use cli_sandbox_escalation_support::*;
use common::config::ConfigDir;
use common::turns::{answer, turn, MODEL};
use common::{command, run_cmd};
use qore_testkit::ReplayServer;
use serde_json::{json, Value};

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
        let server = ReplayServer::start(two_escalations(&w.home)).await.unwrap();
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
