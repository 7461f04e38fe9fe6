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
    /// The upstreams of the providers beyond `up` ([`Served::start_configured`]).
    _more: Vec<ReplayServer>,
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
        Served::start_configured(location, reply, Vec::new(), &[], change).await
    }

    /// A server whose provider `up` answers with `reply`, with more openai-chat providers
    /// (each a name and the replies its loopback upstream cycles through) and agent
    /// profiles (`agents/NAME.toml`, a name and the file's text).
    pub async fn start_configured(
        location: Option<String>,
        reply: qore_testkit::Reply,
        providers: Vec<(&str, Vec<qore_testkit::Reply>)>,
        agents: &[(&str, &str)],
        change: impl FnOnce(&mut ServeSettings),
    ) -> Served {
        let upstream = ReplayServer::start_repeating(reply).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("providers")).unwrap();
        std::fs::create_dir_all(dir.path().join("agents")).unwrap();
        let provider = |name: &str, url: &str| {
            let text =
                format!("name = \"{name}\"\nprotocol = \"openai-chat\"\nurl = \"{url}/v1\"\n");
            std::fs::write(dir.path().join(format!("providers/{name}.toml")), text).unwrap();
        };
        provider("up", &upstream.url());
        let mut more = Vec::new();
        for (name, replies) in providers {
            let server = ReplayServer::start_cycling(replies).await.unwrap();
            provider(name, &server.url());
            more.push(server);
        }
        for (name, text) in agents {
            std::fs::write(dir.path().join(format!("agents/{name}.toml")), text).unwrap();
        }
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
            _more: more,
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
        self.chat_with(key, model, &[]).await
    }

    /// POST `body` to `path` (`/v1/...`) with `key` and more headers: the status and the
    /// answer's text.
    pub async fn post_as(
        &self,
        key: &str,
        path: &str,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> (u16, String) {
        let mut request = self.http.post(format!("{}{path}", self.server.url()));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = (request.bearer_auth(key))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }

    /// A chat request with more headers (`x-qore-session`): the status.
    pub async fn chat_with(&self, key: &str, model: &str, headers: &[(&str, &str)]) -> u16 {
        let body = json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
        let url = format!("{}/v1/chat/completions", self.server.url());
        let mut request = self.http.post(url);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request
            .bearer_auth(key)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        response.status().as_u16()
    }
}
