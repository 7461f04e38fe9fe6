//! The harness of the admin API tests beyond the first ones: one `qore serve` on a store
//! (a fresh SQLite file, or a given location) whose provider `up` is a loopback replay
//! server cycling through given replies, with the agent `helper` (priced), an admin
//! credential, and calls over real HTTP.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use qore_serve::config::ServeSettings;
use qore_serve::Server;
use qore_store::Store;
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

/// The agent of these tests: on provider `up`, model `tiny`, with prices.
pub const HELPER: &str = "name = \"helper\"\nextends = \"openai-chat\"\nprovider = \"up\"\n\
    model = \"tiny\"\ncontext_window = 8192\ndescription = \"Answers with tools\"\n\
    [pricing]\ninput = 3.0\noutput = 15.0\n";

/// A gateway on a store, whose provider `up` cycles through `replies`, with [`HELPER`].
pub struct Gateway {
    _dir: tempfile::TempDir,
    pub upstream: ReplayServer,
    pub server: Server,
    pub store: Arc<dyn Store>,
    pub http: reqwest::Client,
    pub admin: String,
}

impl Gateway {
    pub async fn start(location: Option<String>, replies: Vec<Reply>) -> Gateway {
        let upstream = ReplayServer::start_cycling(replies).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        for sub in ["providers", "agents"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let provider = format!(
            "name = \"up\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
            upstream.url()
        );
        std::fs::write(dir.path().join("providers/up.toml"), provider).unwrap();
        std::fs::write(dir.path().join("agents/helper.toml"), HELPER).unwrap();
        let location =
            location.unwrap_or_else(|| dir.path().join("qore.db").to_string_lossy().into_owned());
        let store = qore_store::open(&location).await.unwrap();
        let settings = ServeSettings {
            listen: "127.0.0.1:0".parse().unwrap(),
            drain_timeout: Duration::from_secs(1),
            models: vec!["up/extra".into()],
            ..ServeSettings::default()
        };
        let agents = qore_agents::config::Config::load(Some(dir.path()));
        let server = Server::start(settings, agents, store.clone())
            .await
            .unwrap();
        let (admin, _) = qore_serve::admin::auth::create(&*store, "ops")
            .await
            .unwrap();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap();
        Gateway {
            _dir: dir,
            upstream,
            server,
            store,
            http,
            admin,
        }
    }

    /// A call of `path` (under the server) with `credential`: the status and JSON body.
    pub async fn call(
        &self,
        credential: Option<&str>,
        method: &str,
        path: &str,
        body: Option<String>,
        headers: &[(&str, &str)],
    ) -> (u16, Value) {
        let url = format!("{}{path}", self.server.url());
        let mut request = self.http.request(method.parse().unwrap(), url);
        if let Some(credential) = credential {
            request = request.bearer_auth(credential);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = (request.header("content-type", "application/json")).body(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// An admin API call with the admin credential.
    pub async fn admin(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let path = format!("/admin/v1{path}");
        let body = body.map(|b| b.to_string());
        self.call(Some(&self.admin), method, &path, body, &[]).await
    }

    pub async fn chat(&self, key: &str, model: &str) -> u16 {
        let body = json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
        let path = "/v1/chat/completions";
        (self
            .call(Some(key), "POST", path, Some(body.to_string()), &[])
            .await)
            .0
    }

    /// The request log once it holds `n` rows (the writer batches every 100 ms), oldest first.
    pub async fn logged(&self, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (_, page) = self.admin("GET", "/requests", None).await;
            let mut rows = page["requests"].as_array().cloned().unwrap_or_default();
            if rows.len() >= n || Instant::now() > deadline {
                rows.reverse();
                return rows;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A streamed answer of `text` with usage: 1000 tokens in, 200 out.
pub fn priced_answer(text: &str) -> Reply {
    let frame = |value: Value| format!("data: {value}\n\n");
    let chunk = |delta: Value, finish: Value| {
        frame(
            json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "tiny",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let usage = frame(
        json!({"id": "c", "object": "chat.completion.chunk", "created": 0,
        "model": "tiny", "choices": [],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}}),
    );
    Reply::sse(
        chunk(json!({"role": "assistant", "content": text}), Value::Null)
            + &chunk(json!({}), json!("stop"))
            + &usage
            + "data: [DONE]\n\n",
    )
}
