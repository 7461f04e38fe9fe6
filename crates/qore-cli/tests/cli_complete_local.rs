//! Real wire: `qore complete --agent local-completion` against llama.cpp's own `/infill`,
//! served by `scripts/fim-model.sh` (SmolLM2 with FIM token ids added to its GGUF; started
//! here when needed, the first run installs it) behind a recording proxy that the local
//! provider reaches through `QORE_LOCAL_PORT`. The model was not trained for FIM: the
//! answer's structure is checked, never its words.

mod common;

use common::config::ConfigDir;
use common::local::FIRST_START;
use common::{command, run_with_limit};
use serde_json::Value;

#[tokio::test]
async fn qore_complete_infills_on_the_local_fim_server_with_open_files() {
    let (proxy, proxy_port) = qore_testkit::fim_model::proxied().await;
    let config = ConfigDir::new(&[
        (
            "add.py",
            "def add(a, b):\n    return \n\nprint(add(1, 2))\n",
        ),
        ("util.py", "def sub(a, b):\n    return a - b\n"),
    ]);
    // Paths relative to the config dir: the prompt, and so the greedy answer, is the same
    // on every run.
    let args = [
        "complete",
        "add.py:2:12",
        "--agent",
        "local-completion",
        "--open",
        "util.py",
        "--json",
    ];
    let mut cmd = command(&args);
    cmd.current_dir(&config.0)
        .env("QORE_CONFIG_DIR", &config.0)
        .env("QORE_LOCAL_PORT", &proxy_port);
    let run = run_with_limit(cmd, FIRST_START).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    eprintln!("qore complete printed {}", run.stdout.trim());
    let line: Value = serde_json::from_str(run.stdout.trim()).expect("one JSON line");
    assert_eq!(line["agent"], "local-completion", "{line}");
    assert_eq!(line["model"], "smollm2-135m-instruct", "{line}");
    assert!(
        line["text"].as_str().is_some_and(|t| !t.is_empty()),
        "{line}"
    );
    let sent: Vec<_> = (proxy.requests().into_iter())
        .filter(|r| r.path == "/infill")
        .collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    let body = sent[0].json().expect("a JSON body");
    assert_eq!(body["input_extra"][0]["filename"], "util.py", "{body}");
    assert_eq!(
        body["input_prefix"], "def add(a, b):\n    return ",
        "{body}"
    );
}
