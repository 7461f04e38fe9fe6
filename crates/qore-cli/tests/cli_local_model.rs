//! Without `--url`, `qore` uses the local model server (SmolLM2-135M on llama.cpp, started
//! on demand; the first run installs it into a venv under the cache dir). The model is tiny:
//! these tests assert the structure of what comes back, never the words.

mod common;

use std::time::Duration;

use common::local::{proxied_local_server, proxy_port, FIRST_START};
use common::{command, run_with_limit};

#[tokio::test]
async fn run_without_url_answers_from_the_local_model() {
    let cmd = command(&[
        "run",
        "--max-tokens",
        "12",
        "--temperature",
        "0",
        "--json",
        "Say hi",
    ]);
    let run = run_with_limit(cmd, FIRST_START).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.contains("local model server"),
        "stderr should say the local model server is used: {:?}",
        run.stderr
    );
    // The saved session is named first (`{"type": "session"}`), then the stream's events.
    let mut lines = run.json_lines();
    assert_eq!(lines.remove(0)["type"], "session", "{}", run.stdout);
    assert_eq!(lines[0]["type"], "message_start", "{}", run.stdout);
    let result = lines.last().expect("a last line");
    assert_eq!(result["type"], "result", "{result}");
    let text = result["text"].as_str().expect("text");
    assert!(!text.trim().is_empty(), "{result}");
    let deltas: String = lines
        .iter()
        .filter(|l| l["type"] == "text_delta")
        .map(|l| l["text"].as_str().expect("text"))
        .collect();
    assert_eq!(deltas, text);
    let messages = result["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 2, "{result}");
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[1]["role"], "assistant");
    assert!(
        result["stop_reason"].is_string() || result["stop_reason"].is_object(),
        "{result}"
    );
    for key in ["input_tokens", "output_tokens"] {
        let n = result["usage"][key].as_u64().unwrap_or(0);
        assert!(n > 0, "usage.{key} should be positive: {result}");
    }
    // At most the 12 tokens asked for.
    assert!(
        result["usage"]["output_tokens"].as_u64() <= Some(12),
        "{result}"
    );
}

#[tokio::test]
async fn models_without_url_lists_the_local_model() {
    let run = run_with_limit(command(&["models"]), FIRST_START).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let ids: Vec<&str> = run
        .stdout
        .lines()
        .map(|l| l.split('\t').next().unwrap_or_default())
        .collect();
    assert!(ids.contains(&"smollm2-135m-instruct"), "{run:?}");
}

#[tokio::test]
async fn tools_on_the_local_model_use_the_text_protocol_and_answers_are_capped() {
    let proxy = proxied_local_server().await;
    let port = proxy_port(&proxy);
    let project = std::env::temp_dir().join(format!("qore-local-tools-{}", std::process::id()));
    std::fs::create_dir_all(&project).expect("project dir");
    let project_arg = project.to_str().expect("UTF-8 path");
    // (arguments, the cap sent): the default, then --max-tokens over the agent's body.
    let runs: [(&[&str], u32); 2] = [
        (&["run", "--tools", "read-only", "--max-rounds", "1"], 512),
        (
            &[
                "run",
                "--agent",
                "local-chat",
                "--tools",
                "read-only",
                "--max-rounds",
                "1",
                "--max-tokens",
                "16",
            ],
            16,
        ),
    ];
    for (args, cap) in runs {
        let mut args = args.to_vec();
        args.extend(["--project", project_arg, "--json", "Say hi"]);
        let seen = proxy.requests().len();
        let mut cmd = command(&args);
        cmd.env("QORE_LOCAL_PORT", &port);
        let run = run_with_limit(cmd, Duration::from_secs(300)).await;
        let last = run.last_json();
        assert!(
            last["type"] == "result" || last["type"] == "stopped",
            "{args:?}: {run:?}"
        );
        assert!(run.stderr.contains("no tool calling"), "{args:?}: {run:?}");
        let requests = proxy.requests().split_off(seen);
        assert!(
            requests.iter().any(|r| r.path == "/props"),
            "the chat template's tool support is read from /props: {requests:?}"
        );
        let chats: Vec<_> = requests
            .iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
            .filter_map(|r| r.json())
            .collect();
        assert!(!chats.is_empty(), "{args:?}");
        for body in &chats {
            assert_eq!(body.get("tools"), None, "{args:?}: no native definitions");
            assert_eq!(body["max_tokens"], cap, "{args:?}: the cap");
            let system = body["messages"][0]["content"].to_string();
            assert!(
                system.contains("tool_call"),
                "{args:?}: tools in the prompt"
            );
        }
    }
    let _ = std::fs::remove_dir_all(project);
}

#[tokio::test]
async fn models_reports_the_context_the_local_server_runs_with() {
    let proxy = proxied_local_server().await;
    let client = qore_client::Client::new(
        qore_client::protocols::by_name("llamacpp").expect("protocol"),
        qore_client::ClientConfig::new(format!("{}/v1", proxy.url())),
    )
    .expect("client");
    let props = qore_client::protocols::llamacpp::props(&client)
        .await
        .expect("/props");
    let n_ctx = props.n_ctx.expect("/props says the context size");
    let url = format!("{}/v1", proxy.url());
    let run = run_with_limit(command(&["models", "--url", &url]), FIRST_START).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.stdout,
        format!("smollm2-135m-instruct\t(context {n_ctx})\n"),
        "{run:?}"
    );
}
