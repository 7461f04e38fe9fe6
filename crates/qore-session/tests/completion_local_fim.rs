//! Real wire: the bundled `local-completion` agent against llama.cpp's own `/infill`, served
//! by `scripts/fim-model.sh` (SmolLM2 with FIM token ids added to its GGUF, started here
//! when needed; the first run installs it) behind a recording proxy, which the local
//! provider reaches through `QORE_LOCAL_PORT`. The model was not trained for FIM: only the
//! structure of the answer is checked, never its words. This file holds one test: it sets
//! the process's `QORE_LOCAL_PORT`.

mod completion_common;

use futures_util::StreamExt as _;
use qore_agents::config::Config;
use qore_client::{CancellationToken, FimFile, FimRequest};
use qore_core::{ResponseEvent, StreamOutcome, Usage};
use qore_session::{SessionManager, Target, TargetSpec};

use completion_common::{complete_add_py, util_py};

/// The streamed text deltas and usage of one fill-in-the-middle request with `extra`.
async fn infill(target: &Target, extra: &[FimFile<'_>]) -> (usize, Usage) {
    let request = FimRequest {
        model: &target.model,
        prefix: "def add(a, b):\n    return ",
        suffix: "\n\nprint(add(1, 2))\n",
        extra,
        options: &target.options,
    };
    let mut stream = target
        .client
        .complete_fim(&request, CancellationToken::new());
    let mut deltas = 0;
    while let Some(event) = stream.next().await {
        if matches!(event, ResponseEvent::TextDelta { .. }) {
            deltas += 1;
        }
    }
    match stream.finish().await {
        StreamOutcome::Finished { message, usage, .. } => {
            eprintln!("the server infilled {:?} ({usage:?})", message.text());
            (deltas, usage)
        }
        other => panic!("the infill failed: {other:?}"),
    }
}

#[tokio::test]
async fn the_local_completion_agent_infills_with_open_files() {
    let (proxy, proxy_port) = qore_testkit::fim_model::proxied().await;
    std::env::set_var("QORE_LOCAL_PORT", &proxy_port);

    let dir = tempfile::tempdir().expect("a config dir");
    let config = Config::load(Some(dir.path()));
    let manager = SessionManager::new(None, config, qore_session::traced_notes());
    let spec = TargetSpec {
        agent: Some("local-completion".into()),
        project: Some(dir.path().to_owned()),
        ..TargetSpec::default()
    };
    let target = manager.reach_completer(&spec).await.expect("reached");
    let files = util_py();
    let got = complete_add_py(&target, &files).await;
    assert!(got.is_ok(), "{got:?}");
    eprintln!("request::complete gave {got:?}");

    let sent: Vec<_> = (proxy.requests().into_iter())
        .filter(|r| r.path == "/infill")
        .collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    let body = sent[0].json().expect("a JSON body");
    eprintln!("sent {body}");
    assert_eq!(body["input_extra"][0]["filename"], "util.py", "{body}");
    assert_eq!(body["stream"], true, "{body}");
    assert_eq!(body["cache_prompt"], true, "{body}");
    // The profile's own cap, not the local server's default one.
    assert_eq!(body["n_predict"], 128, "{body}");

    // The open file reaches the model's prompt: the server evaluates more tokens with it.
    let file = [FimFile {
        filename: "util.py",
        text: "def sub(a, b):\n    return a - b\n",
    }];
    let (deltas, with_file) = infill(&target, &file).await;
    let (_, without) = infill(&target, &[]).await;
    assert!(deltas > 0, "no text streamed");
    assert!(
        with_file.input_tokens > without.input_tokens,
        "{with_file:?} vs {without:?}"
    );
}
