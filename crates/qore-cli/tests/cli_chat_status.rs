//! The status line after each answer of `qore chat` in a real terminal (tmux,
//! `tests/common/tmux.rs`): the model, the stream's token counts, the times, the context
//! share, dimmed; a cost only for an agent whose profile has `[pricing]`.
//!
//! No test here waits for the program's exit status: tmux at times marks the pane dead
//! without one (seen about once in ten chats ended by Ctrl-D, the process gone), which a
//! test cannot tell from a hang; the tmux server is killed when the test ends.
#![cfg(target_os = "linux")]

mod common;

use common::config::ConfigDir;
use common::tmux::Tmux;
use common::turns::chunk;
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

/// An answer whose stream reports 1000 input and 500 output tokens.
fn answer_with_usage(text: &str) -> Reply {
    let mut body = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    body += &chunk(json!({"content": text}), Value::Null);
    body += &chunk(json!({}), json!("stop"));
    let usage = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
        "model": "tiny", "choices": [],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}});
    body += &format!("data: {usage}\n\ndata: [DONE]\n\n");
    Reply::sse(body)
}

/// A config dir with the agent `agent` on model `tiny` (8192 tokens of context) at
/// `server`, with `pricing` (a `[pricing]` table or nothing).
fn agent_at(server: &ReplayServer, agent: &str, pricing: &str) -> ConfigDir {
    let url = format!("{}/v1", server.url());
    let provider = format!("name = \"loop\"\nprotocol = \"openai-chat\"\nurl = \"{url}\"\n");
    let profile = format!(
        "name = \"{agent}\"\nextends = \"openai-chat\"\nprovider = \"loop\"\n\
         model = \"tiny\"\ncontext_window = 8192\n{pricing}"
    );
    ConfigDir::new(&[
        ("providers/loop.toml", provider.as_str()),
        (&format!("agents/{agent}.toml"), profile.as_str()),
    ])
}

const PRICES: &str = "[pricing]\ninput = 3.0\noutput = 15.0\n";

#[tokio::test]
async fn the_status_line_follows_each_answer_with_a_cost_only_when_priced() {
    // 1000 in × $3/M + 500 out × $15/M = $0.003 + $0.0075.
    let cases = [
        (
            "priced",
            "[pricing]\ninput = 3.0\noutput = 15.0\n",
            Some("$0.0105"),
        ),
        ("unpriced", "", None),
    ];
    for (agent, pricing, cost) in cases {
        let server = ReplayServer::start(vec![answer_with_usage("Hello there.")])
            .await
            .expect("server");
        let config = agent_at(&server, agent, pricing);
        let data = tempfile::tempdir().expect("data dir");
        let project = tempfile::tempdir().expect("project dir");
        let argv = [common::QORE, "chat", "--agent", agent, "--tools", "off"];
        let env = [
            ("QORE_DATA_DIR", data.path().to_str().expect("UTF-8 path")),
            ("QORE_CONFIG_DIR", config.0.to_str().expect("UTF-8 path")),
        ];
        let Some(term) = Tmux::start(&argv, &env, project.path(), (120, 30)) else {
            return;
        };
        term.wait_for("> ").await;
        term.keys("Hi.");
        term.key("Enter");
        let text = term.wait_for("Hello there.").await;
        let text = match text.contains("context ") {
            true => text,
            false => term.wait_for("context ").await,
        };
        let status = (text.lines())
            .find(|line| line.starts_with("tiny · "))
            .unwrap_or_else(|| panic!("{agent}: no status line:\n{text}"));
        assert!(
            status.starts_with("tiny · 1,000 in · 500 out · first token "),
            "{agent}: {status}"
        );
        assert!(status.contains("% of 8,192"), "{agent}: {status}");
        match cost {
            Some(cost) => assert!(status.ends_with(&format!(" · {cost}")), "{agent}: {status}"),
            None => assert!(!status.contains('$'), "{agent}: {status}"),
        }
        assert!(term.screen().contains("\x1b[2mtiny · 1,000 in"), "dimmed");
    }
}

/// `qore run` shows the line when stderr is a terminal, and not when it is piped.
#[tokio::test]
async fn run_shows_the_status_line_only_on_a_terminal() {
    let server = ReplayServer::start(vec![answer_with_usage("Hello there.")])
        .await
        .expect("server");
    let config = agent_at(&server, "priced", PRICES);
    let data = tempfile::tempdir().expect("data dir");
    let project = tempfile::tempdir().expect("project dir");
    let argv = [
        common::QORE,
        "run",
        "--agent",
        "priced",
        "--tools",
        "off",
        "Hi.",
    ];
    let env = [
        ("QORE_DATA_DIR", data.path().to_str().expect("UTF-8 path")),
        ("QORE_CONFIG_DIR", config.0.to_str().expect("UTF-8 path")),
    ];
    let Some(term) = Tmux::start(&argv, &env, project.path(), (120, 30)) else {
        return;
    };
    let text = term.wait_for(" · $0.0105").await;
    assert!(
        text.contains("Hello there.\ntiny · 1,000 in · 500 out · first token "),
        "{text}"
    );

    let server = ReplayServer::start(vec![answer_with_usage("Hello there.")])
        .await
        .expect("server");
    let config = agent_at(&server, "priced", PRICES);
    let mut cmd = common::command(&argv[1..]);
    cmd.env("QORE_CONFIG_DIR", &config.0);
    let run = common::run_cmd(cmd).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, "Hello there.\n");
    assert!(!run.stderr.contains("tiny · "), "{}", run.stderr);
}
