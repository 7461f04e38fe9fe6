//! `qore chat` approvals, scripted through stdin (`--json`, `--tools confirm`): the real
//! binary, a real store, a loopback server replaying tool calls. An "always" answer holds
//! for the session's later turns across `/model` and `/undo` (which rebuild its tools), and
//! across `/agent` and `/compress` (which goes on in a new, summarised session); `/approvals`
//! lists it and revokes it, after which the tool is asked about again.

mod common;

use common::chat::{of_type, Dirs};
use common::config::ConfigDir;
use common::live::run_with_stdin;
use common::turns::{answer, turn};
use qore_testkit::{ReplayServer, Reply};
use serde_json::json;

/// The model's two replies of a turn that writes `file` by the call `id`: the call, then
/// `then`.
fn writes(id: &str, file: &str, then: &str) -> [Reply; 2] {
    let args = json!({"path": file, "content": "x"});
    [turn("", &[(id, "write_file", args)]), answer(then)]
}

#[tokio::test]
async fn an_always_approval_lasts_for_the_session_until_revoked() {
    let replies = [
        writes("call_a", "a.txt", "Wrote a."),
        writes("call_b", "b.txt", "Wrote b."),
        writes("call_c", "c.txt", "Wrote c."),
        writes("call_d", "d.txt", "Did not write d."),
    ];
    let server = ReplayServer::start(replies.concat()).await.expect("server");
    let dirs = Dirs::new();
    let url = format!("{}/v1", server.url());
    let input = [
        "Write a.",
        r#"{"id": "call_a", "decision": "allow_session"}"#,
        "/model other-model",
        "Write b.",
        "/undo",
        "Write c.",
        "/approvals",
        "/approvals revoke write_file",
        "/approvals revoke write_file",
        "Write d.",
        r#"{"id": "call_d", "decision": "deny"}"#,
        "/approvals",
    ]
    .join("\n")
        + "\n";
    let run = run_with_stdin(dirs.chat(&url, &["--json", "--tools", "confirm"]), &input).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = run.json_lines();
    // Asked about a, then not about b (after /model) nor c (after /undo), then about d.
    let asked: Vec<&str> = (of_type(&lines, "approval_request").iter())
        .filter_map(|l| l["id"].as_str())
        .collect();
    assert_eq!(asked, ["call_a", "call_d"], "{run:?}");
    let listed: Vec<_> = (of_type(&lines, "approvals").iter())
        .map(|l| l["tools"].clone())
        .collect();
    assert_eq!(listed, [json!(["write_file"]), json!([])], "{run:?}");
    assert_eq!(of_type(&lines, "revoked").len(), 1, "{run:?}");
    assert!(
        run.stderr.contains("write_file is not allowed always"),
        "the second revoke: {}",
        run.stderr
    );
    let exists = |file: &str| dirs.project.path().join(file).exists();
    // b was written, then undone; d was denied.
    let files = [
        ("a.txt", true),
        ("b.txt", false),
        ("c.txt", true),
        ("d.txt", false),
    ];
    for (file, there) in files {
        assert_eq!(exists(file), there, "{file}: {run:?}");
    }
}

#[tokio::test]
async fn an_always_approval_lasts_across_agent_and_compress() {
    let replies = [
        &writes("call_a", "a.txt", "Wrote a.")[..],
        &writes("call_b", "b.txt", "Wrote b.")[..],
        &[answer("A3."), answer("Summary.")],
        &writes("call_c", "c.txt", "Wrote c.")[..],
    ];
    let server = ReplayServer::start(replies.concat()).await.expect("server");
    let url = format!("{}/v1", server.url());
    let provider = format!("name = \"loop\"\nprotocol = \"openai-chat\"\nurl = \"{url}\"\n");
    let agent = |name: &str, model: &str| {
        format!("name = \"{name}\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"{model}\"\n")
    };
    let (brief, squeeze) = (agent("brief", "tiny"), agent("squeeze", "small"));
    let config = ConfigDir::new(&[
        ("providers/loop.toml", provider.as_str()),
        ("agents/brief.toml", brief.as_str()),
        ("agents/squeeze.toml", squeeze.as_str()),
        ("pipelines.toml", "compression = [\"squeeze\"]\n"),
    ]);
    let dirs = Dirs::new();
    let input = [
        "Write a.",
        r#"{"id": "call_a", "decision": "allow_session"}"#,
        "/agent brief",
        "Write b.",
        "Three.",
        "/compress",
        "Write c.",
    ]
    .join("\n")
        + "\n";
    let mut cmd = dirs.chat(&url, &["--json", "--tools", "confirm"]);
    cmd.env("QORE_CONFIG_DIR", &config.0);
    let run = run_with_stdin(cmd, &input).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines = run.json_lines();
    // The compression went on in a new session, and neither it nor /agent asked again.
    assert_eq!(of_type(&lines, "compressed").len(), 1, "{run:?}");
    let asked: Vec<&str> = (of_type(&lines, "approval_request").iter())
        .filter_map(|l| l["id"].as_str())
        .collect();
    assert_eq!(asked, ["call_a"], "{run:?}");
    let models: Vec<serde_json::Value> = (server.requests().iter())
        .map(|r| r.json().expect("JSON body")["model"].clone())
        .collect();
    assert_eq!(models[2], "tiny", "/agent took effect: {run:?}");
    assert_eq!(
        models[5], "small",
        "the compression agent summarised: {run:?}"
    );
    for file in ["a.txt", "b.txt", "c.txt"] {
        assert!(dirs.project.path().join(file).exists(), "{file}: {run:?}");
    }
}
