//! What the `qore lsp` tests share: an editor session against the real binary, with a config
//! dir of its own (a llama.cpp `/infill` agent first in the code_completion roster, a chat
//! agent first in the refactor roster, both on one loopback [`ReplayServer`]) and a project
//! directory as the workspace root.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use qore_testkit::lsp::LspClient;
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

/// An editor session: the client, the loopback provider, the dirs.
pub struct Editor {
    pub client: LspClient,
    pub server: ReplayServer,
    pub config: tempfile::TempDir,
    pub project: tempfile::TempDir,
    /// The `initialize` response.
    pub init: Value,
}

/// An `/infill` stream as llama.cpp sends it: content chunks, then the closing summary.
pub fn infill(pieces: &[&str]) -> Reply {
    let chunk = |content: &str| json!({"index": 0, "content": content, "stop": false});
    let last = json!({"index": 0, "content": "", "stop": true, "stop_type": "eos",
                      "tokens_predicted": pieces.len()});
    let mut out: String = pieces
        .iter()
        .map(|p| format!("data: {}\n\n", chunk(p)))
        .collect();
    out.push_str(&format!("data: {last}\n\n"));
    Reply::sse(out)
}

/// Settings with no debounce (tests that time nothing need none).
pub fn quick() -> Value {
    json!({"completion": {"debounceMs": 0}})
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

impl Editor {
    /// `qore lsp` initialized with `options`, its provider replaying `replies`; `extra` are
    /// more files of the config dir.
    pub async fn start_with(replies: Vec<Reply>, options: Value, extra: &[(&str, &str)]) -> Editor {
        Editor::start_in_env(replies, options, extra, &[]).await
    }

    /// [`Editor::start_with`], with more environment variables for `qore lsp`.
    pub async fn start_in_env(
        replies: Vec<Reply>,
        options: Value,
        extra: &[(&str, &str)],
        env: &[(&str, &str)],
    ) -> Editor {
        let server = ReplayServer::start(replies).await.unwrap();
        let config = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let url = server.url();
        let files = [
            (
                "providers/infill.toml",
                format!("name = \"infill\"\nprotocol = \"llamacpp\"\nurl = \"{url}/v1\"\n"),
            ),
            (
                "providers/chat.toml",
                format!("name = \"chat\"\nprotocol = \"openai-chat\"\nurl = \"{url}/v1\"\n"),
            ),
            (
                "agents/fim.toml",
                "name = \"fim\"\nextends = \"llamacpp-completion\"\nprovider = \"infill\"\n\
                 model = \"qwen\"\n"
                    .to_owned(),
            ),
            (
                "agents/fixer.toml",
                "name = \"fixer\"\nextends = \"openai-chat\"\nprovider = \"chat\"\nmodel = \"m\"\n"
                    .to_owned(),
            ),
            (
                "pipelines.toml",
                "code_completion = [\"fim\"]\nrefactor = [\"fixer\"]\n".to_owned(),
            ),
        ];
        for (name, text) in &files {
            write(config.path(), name, text);
        }
        for (name, text) in extra {
            write(config.path(), name, text);
        }
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_qore"));
        cmd.arg("lsp")
            .env("QORE_CONFIG_DIR", config.path())
            .env("QORE_DATA_DIR", config.path().join("data"))
            .env_remove("QORE_URL")
            .env_remove("QORE_MODEL")
            .envs(env.iter().copied())
            .stderr(std::process::Stdio::null());
        let mut client = LspClient::spawn(cmd).expect("qore lsp starts");
        // A first run may install a local model: waits are bounded by minutes then.
        if !env.is_empty() {
            client.limit = Duration::from_secs(900);
        }
        let root = project.path().to_path_buf();
        let init = client.initialize(&root, options).await;
        assert!(init.get("result").is_some(), "{init}");
        Editor {
            client,
            server,
            config,
            project,
            init,
        }
    }

    pub async fn start(replies: Vec<Reply>) -> Editor {
        Editor::start_with(replies, quick(), &[]).await
    }

    /// A path in the project.
    pub fn file(&self, name: &str) -> PathBuf {
        self.project.path().join(name)
    }

    /// Write `name` into the project and open it; its URI.
    pub async fn open(&mut self, name: &str, text: &str) -> String {
        let path = self.file(name);
        write(self.project.path(), name, text);
        self.client.open(&path, text).await
    }

    /// Send `textDocument/inlineCompletion` at `line:character`; the request id.
    pub async fn ask_inline(&mut self, uri: &str, line: u32, character: u32) -> i64 {
        let params = json!({"textDocument": {"uri": uri},
                            "position": {"line": line, "character": character},
                            "context": {"triggerKind": 2}});
        self.client
            .request("textDocument/inlineCompletion", params)
            .await
    }

    /// The inline completion at `line:character`, the whole response.
    pub async fn inline(&mut self, uri: &str, line: u32, character: u32) -> Value {
        let id = self.ask_inline(uri, line, character).await;
        self.client.response(id).await
    }

    /// Wait until the provider has received `n` requests (bounded).
    pub async fn provider_received(&self, n: usize) {
        for _ in 0..2000 {
            if self.server.requests().len() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!(
            "the provider did not receive {n} requests: {:?}",
            self.server.requests()
        );
    }

    /// Wait until the provider has seen `n` clients hang up (bounded).
    pub async fn provider_disconnects(&self, n: usize) {
        for _ in 0..2000 {
            if self.server.disconnects() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!(
            "the provider saw {} hang-ups, not {n}",
            self.server.disconnects()
        );
    }
}

/// The error code of a response (`None` for a result).
pub fn error_code(response: &Value) -> Option<i64> {
    response.pointer("/error/code").and_then(Value::as_i64)
}
