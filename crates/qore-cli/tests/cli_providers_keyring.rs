//! `qore providers set-key` and `rm-key` against real keyrings. The Secret Service case runs
//! the real binary on a private session bus (`dbus-run-session`) with a real
//! `gnome-keyring-daemon` (installed by scripts/keyring-env.sh): a key piped to `set-key` is
//! read back by a second process, `providers test`, which sends it to a loopback server;
//! after `rm-key` it is gone. Skipped, saying why, only where those programs are missing.

mod common;

use std::path::Path;
use std::process::Stdio;

use common::{command, run_cmd, QORE};
use qore_testkit::{ReplayServer, Reply};

const KEY: &str = "sk-keyring-canary-4d2e8b";

/// A config dir with one provider, `vendor`, on `url` whose key source is `key_line`.
fn config_dir(url: &str, key_line: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let providers = dir.path().join("providers");
    std::fs::create_dir_all(&providers).expect("providers/");
    let text =
        format!("name = \"vendor\"\nprotocol = \"openai-chat\"\nurl = \"{url}\"\n{key_line}\n");
    std::fs::write(providers.join("vendor.toml"), text).expect("vendor.toml");
    dir
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

#[tokio::test]
async fn a_key_set_in_the_secret_service_is_read_by_another_process_and_removed() {
    // The project's script installs them; the test is skipped only where that cannot be done.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/keyring-env.sh");
    let install = std::process::Command::new("bash")
        .arg(&script)
        .arg("install")
        .output();
    let missing: Vec<&str> = ["dbus-run-session", "gnome-keyring-daemon"]
        .into_iter()
        .filter(|p| !on_path(p))
        .collect();
    if !missing.is_empty() {
        let why = match &install {
            Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            Err(e) => e.to_string(),
        };
        eprintln!(
            "skipped: {} not installed, and keyring-env.sh install could not: {why}",
            missing.join(" and ")
        );
        return;
    }
    let listing = r#"{"object":"list","data":[{"id":"m1"},{"id":"m2"}]}"#;
    let server = ReplayServer::start_repeating(Reply::json(200, listing))
        .await
        .expect("server starts");
    let config = config_dir(
        &format!("{}/v1", server.url()),
        "api_key_ref = \"qore-test-vendor\"",
    );
    let home = tempfile::tempdir().expect("a home for the keyring's files");
    // One session bus for the daemon and the three `qore` processes; a line per step.
    let script = format!(
        "printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null\n\
         printf ' {KEY}\\n' | \"$QORE\" providers set-key vendor; echo \"set-key $?\"\n\
         \"$QORE\" providers test vendor; echo \"test $?\"\n\
         \"$QORE\" providers rm-key vendor; echo \"rm-key $?\"\n\
         \"$QORE\" providers test vendor; echo \"test-after $?\"\n"
    );
    let output = tokio::process::Command::new("dbus-run-session")
        .args(["--", "bash", "-c", &script])
        .env("QORE", QORE)
        .env("QORE_CONFIG_DIR", config.path())
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .expect("dbus-run-session runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let steps: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with("vendor:"))
        .collect();
    assert_eq!(
        steps,
        ["set-key 0", "test 0", "rm-key 0", "test-after 1"],
        "{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains(
            "stored the key of \"vendor\" in the Secret Service (entry qore/qore-test-vendor)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("removed the key of \"vendor\""), "{stderr}");
    assert!(
        stderr.contains("qore/qore-test-vendor does not exist"),
        "{stderr}"
    );
    assert!(
        !stdout.contains(KEY) && !stderr.contains(KEY),
        "{stdout}\n{stderr}"
    );
    // The second process read the key, trimmed, and sent it; the last one had none to send.
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{stderr}");
    let sent = requests[0].header("authorization").unwrap_or_default();
    assert_eq!(sent, format!("Bearer {KEY}"));
}

#[tokio::test]
async fn a_provider_whose_key_is_not_in_the_keyring_stores_nothing() {
    // (the provider's key line, what the error says)
    let cases = [
        (
            "api_key_env = \"VENDOR_KEY\"",
            "the environment variable VENDOR_KEY, not the keyring",
        ),
        (
            "api_key_ref = \"file:/run/k\"",
            "the file /run/k, not the keyring",
        ),
        ("", "nowhere: it needs none"),
    ];
    for (key_line, says) in cases {
        let config = config_dir("http://127.0.0.1:9/v1", key_line);
        for verb in ["set-key", "rm-key"] {
            let mut cmd = command(&["providers", verb, "vendor"]);
            cmd.env("QORE_CONFIG_DIR", config.path());
            let run = run_cmd(cmd).await;
            assert_eq!(run.code, Some(1), "{key_line} {verb}: {run:?}");
            let line = run.one_stderr_line();
            assert!(
                line.contains(says) && line.contains("api_key_ref"),
                "{line}"
            );
        }
    }
    let run = run_cmd(command(&["providers", "set-key", "nosuch"])).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.one_stderr_line().contains("no provider \"nosuch\""),
        "{run:?}"
    );
}
