//! The harness of the stateless tests: several `qore serve` servers on one store, as several
//! processes behind a load balancer would run. Each server opens its OWN store handle (its own
//! SQLite connection or PostgreSQL pool) on the same location; they share a config dir whose
//! provider is a loopback replay server; requests go over loopback HTTP with reqwest.
//!
//! The scenarios (`keys_*`, `rpm_*`, `conversations_*`) are written once here and run by each
//! backend's test binary.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use qore_serve::config::ServeSettings;
use qore_serve::Server;
use qore_store::{NewKey, Store};
use qore_testkit::chat::{chat_answer, sent_messages};
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

/// Every request's client timeout: hitting it fails the test (a hang).
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the tests poll for something to happen across servers, at most.
pub const WITHIN: Duration = Duration::from_secs(20);

/// Servers on one store, and what they answer with.
pub struct Fleet {
    _config: tempfile::TempDir,
    pub upstream: ReplayServer,
    pub servers: Vec<Server>,
    /// Each server's own store handle (what it was started with).
    pub stores: Vec<Arc<dyn Store>>,
    pub http: reqwest::Client,
}

/// A whole answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub retry_after: Option<String>,
    pub body: Value,
}

impl Fleet {
    /// `n` servers, each on its own handle of the store at `location`; the store gets a key
    /// named `admin` first, so every server requires keys.
    pub async fn start(location: &str, n: usize) -> Fleet {
        Fleet::start_with(location, n, chat_answer("hello there"), |_| {}).await
    }

    /// [`Fleet::start`] with `reply` as every upstream answer and the servers' settings
    /// edited by `edit`.
    pub async fn start_with(
        location: &str,
        n: usize,
        reply: Reply,
        edit: impl Fn(&mut ServeSettings),
    ) -> Fleet {
        let upstream = ReplayServer::start_repeating(reply)
            .await
            .expect("the replay server starts");
        let config = tempfile::tempdir().expect("a temp dir");
        for dir in ["providers", "agents"] {
            std::fs::create_dir_all(config.path().join(dir)).expect("config dirs");
        }
        let provider = format!(
            "name = \"up\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
            upstream.url()
        );
        std::fs::write(config.path().join("providers/up.toml"), provider).expect("provider");
        let mut stores = Vec::new();
        for _ in 0..n {
            let store = qore_store::open(location).await.expect("the store opens");
            stores.push(store);
        }
        add_key(&*stores[0], "admin", |_| {}).await;
        let mut servers = Vec::new();
        for store in &stores {
            let mut settings = ServeSettings {
                listen: "127.0.0.1:0".parse().expect("an address"),
                drain_timeout: Duration::from_secs(1),
                ..ServeSettings::default()
            };
            edit(&mut settings);
            let agents = qore_agents::config::Config::load(Some(config.path()));
            let server = Server::start(settings, agents, store.clone())
                .await
                .expect("the server starts");
            servers.push(server);
        }
        let http = reqwest::Client::builder()
            .timeout(CLIENT_TIMEOUT)
            .build()
            .expect("a client");
        Fleet {
            _config: config,
            upstream,
            servers,
            stores,
            http,
        }
    }

    /// POST `body` to server `n`'s `path` with `key`; the whole answer. A client timeout
    /// fails the test.
    pub async fn post(&self, n: usize, path: &str, key: &str, body: &Value) -> Answer {
        let url = format!("{}{path}", self.servers[n].url());
        let sent = (self.http.post(&url))
            .header("x-api-key", key)
            .header("anthropic-version", "2023-06-01")
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await;
        let response =
            sent.unwrap_or_else(|e| panic!("POST {url}: {e} (timeout: {})", e.is_timeout()));
        answer_of(response).await
    }

    /// GET server `n`'s `path` (with `key` when given).
    pub async fn get(&self, n: usize, path: &str, key: Option<&str>) -> Answer {
        let url = format!("{}{path}", self.servers[n].url());
        let mut request = self.http.get(&url);
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        let response = (request.send().await)
            .unwrap_or_else(|e| panic!("GET {url}: {e} (timeout: {})", e.is_timeout()));
        answer_of(response).await
    }

    /// Server `n`'s `/metrics`.
    pub async fn metrics(&self, n: usize) -> String {
        let url = format!("{}/metrics", self.servers[n].url());
        let response = (self.http.get(&url).send().await).expect("GET /metrics");
        response.text().await.expect("the metrics")
    }

    /// Stop every server.
    pub async fn stop(self) {
        for server in self.servers {
            let _ = server.stop().await;
        }
    }
}

async fn answer_of(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let retry_after = (response.headers().get("retry-after"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Answer {
        status,
        retry_after,
        body,
    }
}

/// Store a key named `name` (edited by `edit`) through `store`; its text.
pub async fn add_key(store: &dyn Store, name: &str, edit: impl FnOnce(&mut NewKey)) -> String {
    let key = qore_serve::gate::new_key().expect("a key");
    let mut new = NewKey {
        name: name.into(),
        hash: qore_serve::gate::hash_key(&key),
        ..NewKey::default()
    };
    edit(&mut new);
    store.create_key(&new).await.expect("the key is stored");
    key
}

/// A Chat Completions request saying `text`.
pub fn chat(text: &str) -> Value {
    json!({"model": "up/m", "messages": [{"role": "user", "content": text}]})
}

/// A Messages request saying `text`.
pub fn messages(text: &str) -> Value {
    json!({"model": "up/m", "max_tokens": 50, "messages": [{"role": "user", "content": text}]})
}

/// (a) A key created through one server's store works on the others at once; revoked
/// through another's, every server refuses it (polled: within a second by design).
pub async fn keys_are_shared_at_once_and_revocations_reach_every_server(location: &str) {
    let fleet = Fleet::start(location, 3).await;
    let key = add_key(&*fleet.stores[0], "shared", |_| {}).await;
    for n in [1, 2, 0] {
        let answer = fleet
            .post(n, "/v1/chat/completions", &key, &chat("hi"))
            .await;
        assert_eq!(answer.status, 200, "server {n}: {answer:?}");
    }
    fleet.stores[1].revoke_key("shared").await.expect("revoked");
    for n in 0..3 {
        let deadline = tokio::time::Instant::now() + WITHIN;
        loop {
            let answer = fleet
                .post(n, "/v1/chat/completions", &key, &chat("hi"))
                .await;
            if answer.status == 401 {
                let message = answer.body["error"]["message"].as_str().unwrap_or_default();
                assert!(message.contains("revoked"), "server {n}: {answer:?}");
                break;
            }
            assert_eq!(answer.status, 200, "server {n}: {answer:?}");
            assert!(
                tokio::time::Instant::now() < deadline,
                "server {n} still takes the revoked key after {WITHIN:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    fleet.stop().await;
}

/// (b) `rpm = 10` on one key, 15 requests round-robin over three servers: exactly 10
/// answered, 5 refused with 429 and `Retry-After`.
pub async fn rpm_is_one_window_across_servers(location: &str) {
    let fleet = Fleet::start(location, 3).await;
    let key = add_key(&*fleet.stores[2], "ten", |k| k.rpm = Some(10)).await;
    let (mut answered, mut refused) = (0, 0);
    for i in 0..15 {
        let answer = fleet
            .post(i % 3, "/v1/chat/completions", &key, &chat("hi"))
            .await;
        match answer.status {
            200 => answered += 1,
            429 => {
                refused += 1;
                let seconds: u64 = (answer.retry_after.as_deref())
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| panic!("request {i}: no Retry-After: {answer:?}"));
                assert!((1..=61).contains(&seconds), "request {i}: {answer:?}");
                let message = answer.body["error"]["message"].as_str().unwrap_or_default();
                assert!(message.contains("10 requests per minute"), "{answer:?}");
            }
            _ => panic!("request {i}: {answer:?}"),
        }
    }
    assert_eq!((answered, refused), (10, 5));
    fleet.stop().await;
}

/// (c) A Responses conversation stored on server 0 continues on server 1 (the upstream is
/// sent the whole conversation) and is found on server 2.
pub async fn conversations_continue_on_another_server(location: &str) {
    let fleet = Fleet::start(location, 3).await;
    let key = add_key(&*fleet.stores[0], "talker", |_| {}).await;
    let first = json!({"model": "up/m", "input": "my name is Ada", "store": true});
    let answer = fleet.post(0, "/v1/responses", &key, &first).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let id = answer.body["id"]
        .as_str()
        .expect("a response id")
        .to_owned();
    let next = json!({"model": "up/m", "input": "what is my name?", "store": true,
                      "previous_response_id": id});
    let answer = fleet.post(1, "/v1/responses", &key, &next).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let requests = fleet.upstream.requests();
    let last = requests.last().expect("the upstream was asked");
    let sent: Vec<(String, String)> = sent_messages(last);
    let expected: Vec<(String, String)> = [
        ("user", "my name is Ada"),
        ("assistant", "hello there"),
        ("user", "what is my name?"),
    ]
    .iter()
    .map(|(r, c)| (r.to_string(), c.to_string()))
    .collect();
    assert_eq!(sent, expected);
    let found = fleet
        .get(2, &format!("/v1/responses/{id}"), Some(&key))
        .await;
    assert_eq!(found.status, 200, "{found:?}");
    assert_eq!(found.body["id"], id.as_str());
    fleet.stop().await;
}
