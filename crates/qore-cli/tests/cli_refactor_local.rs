//! `qore refactor` on the real wire: the local model server (SmolLM2-135M on llama.cpp,
//! started on demand) behind a recording proxy, with the bundled `local-refactor` agent. The
//! model is tiny: the test asserts what is sent and the shape of what comes back, never the
//! words.

mod common;

use std::time::Duration;

use common::config::ConfigDir;
use common::local::{proxied_local_server, proxy_port};
use common::{command, run_with_limit};
use serde_json::Value;

const SOURCE: &str = "def add(a, b):\n    return a+b\n\nprint(add(1, 2))\n";

#[tokio::test]
async fn the_local_refactor_agent_sends_its_role_and_the_selection() {
    let proxy = proxied_local_server().await;
    let config = ConfigDir::new(&[("add.py", SOURCE)]);
    let file = config.0.join("add.py").display().to_string();
    let mut cmd = command(&[
        "refactor",
        &file,
        "--range",
        "2:5-2:15",
        "--instruction",
        "Add spaces around +",
        "--agent",
        "local-refactor",
        "--json",
    ]);
    cmd.env("QORE_CONFIG_DIR", &config.0)
        .env("QORE_LOCAL_PORT", proxy_port(&proxy));
    let run = run_with_limit(cmd, Duration::from_secs(300)).await;
    // One JSON line, or (the model is tiny) one error line saying it wrote no code.
    if run.code == Some(0) {
        let line: Value = serde_json::from_str(run.stdout.trim()).expect("one JSON line");
        assert_eq!(line["range"], "2:1-2:15", "{line}");
        assert_eq!(line["agent"], "local-refactor", "{line}");
        let text = line["text"].as_str().unwrap_or_default();
        assert!(
            text.starts_with("    "),
            "indented as the selection: {line}"
        );
    } else {
        assert_eq!(run.code, Some(1), "{run:?}");
        assert!(run.stderr.contains("no code"), "{run:?}");
    }
    let chats: Vec<Value> = (proxy.requests().iter())
        .filter(|r| r.path.ends_with("/chat/completions"))
        .filter_map(|r| r.json())
        .collect();
    assert_eq!(chats.len(), 1, "{chats:?}");
    let body = &chats[0];
    assert_eq!(body.get("tools"), None, "{body}");
    assert_eq!(body["messages"][0]["role"], "system", "{body}");
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(system.starts_with("You refactor code."), "{body}");
    let user = body["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(user.contains("Add spaces around +"), "{body}");
    assert!(
        user.contains("<selection_start>return a+b<selection_end>"),
        "{body}"
    );
}
