//! The harness of the admin API and console tests: one `qore serve` on a fresh SQLite store
//! (or a given one)
//! whose provider `up` is a loopback replay server answering "hi back", and an HTTP client.
#![allow(dead_code)]

use std::time::Duration;

use qore_serve::config::ServeSettings;
use qore_serve::Server;
use qore_store::Store;
use qore_testkit::chat::chat_answer;
use qore_testkit::ReplayServer;
use serde_json::{json, Value};

pub struct Served {
    pub dir: tempfile::TempDir,
    _upstream: ReplayServer,
    pub server: Server,
    pub store: std::sync::Arc<dyn Store>,
    pub http: reqwest::Client,
}

impl Served {
    pub async fn start() -> Served {
        Served::start_with(|_| {}).await
    }

    /// A server with its settings changed by `change`.
    pub async fn start_with(change: impl FnOnce(&mut ServeSettings)) -> Served {
        Served::start_on(None, change).await
    }

    /// A server on the store at `location` (`None`: a new SQLite file).
    pub async fn start_on(
        location: Option<String>,
        change: impl FnOnce(&mut ServeSettings),
    ) -> Served {
        Served::start_replying(location, chat_answer("hi back"), change).await
    }

    /// A server on the store at `location` whose upstream answers every request with `reply`.
    pub async fn start_replying(
        location: Option<String>,
        reply: qore_testkit::Reply,
        change: impl FnOnce(&mut ServeSettings),
    ) -> Served {
        let upstream = ReplayServer::start_repeating(reply).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("providers")).unwrap();
        let provider = format!(
            "name = \"up\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
            upstream.url()
        );
        std::fs::write(dir.path().join("providers/up.toml"), provider).unwrap();
        let location =
            location.unwrap_or_else(|| dir.path().join("qore.db").to_string_lossy().into_owned());
        let store = qore_store::open(&location).await.unwrap();
        let mut settings = ServeSettings {
            listen: "127.0.0.1:0".parse().unwrap(),
            drain_timeout: Duration::from_secs(1),
            ..ServeSettings::default()
        };
        change(&mut settings);
        let agents = qore_agents::config::Config::load(Some(dir.path()));
        let server = Server::start(settings, agents, store.clone())
            .await
            .unwrap();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap();
        Served {
            dir,
            _upstream: upstream,
            server,
            store,
            http,
        }
    }

    /// An admin API call with `credential`: the status and the JSON body.
    pub async fn admin(
        &self,
        credential: Option<&str>,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let url = format!("{}/admin/v1{path}", self.server.url());
        let mut request = self.http.request(method.parse().unwrap(), url);
        if let Some(credential) = credential {
            request = request.bearer_auth(credential);
        }
        if let Some(body) = body {
            request = (request.header("content-type", "application/json")).body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub async fn chat(&self, key: &str, model: &str) -> u16 {
        let body = json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
        let url = format!("{}/v1/chat/completions", self.server.url());
        let response = self
            .http
            .post(url)
            .bearer_auth(key)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        response.status().as_u16()
    }
}
