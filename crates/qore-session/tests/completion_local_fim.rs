//! Real wire: the bundled `local-completion` agent against llama.cpp's own `/infill`, served
//! by `scripts/fim-model.sh` (SmolLM2 with FIM token ids added to its GGUF, started here
//! when needed; the first run installs it) behind a recording proxy, which the local
//! provider reaches through `QORE_LOCAL_PORT`. The model was not trained for FIM: only the
//! structure of the answer is checked, never its words. This file holds one test: it sets
//! the process's `QORE_LOCAL_PORT`.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;

use futures_util::StreamExt as _;
use qore_agents::config::Config;
use qore_client::{CancellationToken, FimFile, FimRequest};
use qore_core::{ResponseEvent, StreamOutcome, Usage};
use qore_session::completion::clean::Mode;
use qore_session::completion::context::{CompletionContext, Cursor, OpenFile, Window};
use qore_session::completion::request::complete;
use qore_session::{SessionManager, Target, TargetSpec};
use qore_testkit::RecordingProxy;

const FILE: &str = "def add(a, b):\n    return \n\nprint(add(1, 2))\n";

/// Start the FIM server (installing it if needed); its port.
async fn fim_server() -> u16 {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/fim-model.sh");
    let status = tokio::process::Command::new("bash")
        .arg(&script)
        .arg("start")
        .stdin(Stdio::null())
        .status()
        .await
        .expect("bash runs");
    assert!(status.success(), "fim-model.sh start: {status}");
    std::env::var("QORE_FIM_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(18082)
}

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
    let port = fim_server().await;
    let upstream = SocketAddr::from(([127, 0, 0, 1], port));
    let proxy = RecordingProxy::start(upstream)
        .await
        .expect("the proxy starts");
    let proxy_port = proxy
        .url()
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_owned();
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
    let cursor = Cursor {
        line: 1,
        character: 11,
    };
    let ctx = CompletionContext::new(FILE, cursor, &Window::default());
    let files = [OpenFile {
        path: "util.py".into(),
        text: "def sub(a, b):\n    return a - b\n".into(),
    }];
    let cancel = CancellationToken::new();
    let got = complete(
        &target,
        &ctx,
        Path::new("add.py"),
        Mode::Multi,
        &files,
        cancel,
    )
    .await;
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
