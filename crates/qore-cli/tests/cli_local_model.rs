//! Without `--url`, `qore` uses the local model server (SmolLM2-135M on llama.cpp, started
//! on demand; the first run installs it into a venv under the cache dir). The model is tiny:
//! these tests assert the structure of what comes back, never the words.

mod common;

use std::time::Duration;

use common::{command, run_with_limit};

/// Room for the first install of the local server.
const FIRST_START: Duration = Duration::from_secs(900);

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
    let lines = run.json_lines();
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
