//! The request log on a real `qore serve` (SQLite store, a loopback upstream): every
//! request leaves one row where it settles — a finished one with its status, model,
//! upstream, tokens, reply id and timings, a refused one with its status and error kind —
//! written by the usage writer (in the store once the server stops); bodies only with
//! `log_bodies`, cut to `log_body_cap`.

use std::time::Duration;

use qore_serve::config::ServeSettings;
use qore_serve::request_log::LogSettings;
use qore_serve::Server;
use qore_store::{LogQuery, RequestLogRow};
use qore_testkit::chat::chat_answer;
use qore_testkit::ReplayServer;

/// Start a server (no keys: loopback callers are served) whose provider `up` answers
/// "hello there", send `requests` (model, whether streamed), stop it, and read the log.
async fn logged(log: LogSettings, requests: &[(&str, bool)]) -> (Vec<RequestLogRow>, Vec<u16>) {
    let upstream = ReplayServer::start_repeating(chat_answer("hello there"))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("providers")).unwrap();
    let provider = format!(
        "name = \"up\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
        upstream.url()
    );
    std::fs::write(dir.path().join("providers/up.toml"), provider).unwrap();
    let location = dir.path().join("qore.db").to_string_lossy().into_owned();
    let store = qore_store::open(&location).await.unwrap();
    let settings = ServeSettings {
        listen: "127.0.0.1:0".parse().unwrap(),
        drain_timeout: Duration::from_secs(1),
        request_log: log,
        ..ServeSettings::default()
    };
    let agents = qore_agents::config::Config::load(Some(dir.path()));
    let server = Server::start(settings, agents, store.clone())
        .await
        .unwrap();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let mut statuses = Vec::new();
    for (model, stream) in requests {
        let body = serde_json::json!({"model": model, "stream": stream,
            "messages": [{"role": "user", "content": "hi"}]});
        let response = (http.post(format!("{}/v1/chat/completions", server.url())))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
        let _ = response.text().await.unwrap();
    }
    let (_, flushed) = server.stop().await;
    assert!(flushed, "the writer wrote what was queued");
    let query = LogQuery {
        limit: 100,
        ..LogQuery::default()
    };
    let mut rows = store.request_log(&query).await.unwrap();
    rows.reverse();
    let mut full = Vec::new();
    for row in rows {
        full.push(store.request_entry(&row.id).await.unwrap().unwrap());
    }
    (full, statuses)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_leaves_one_row_as_it_ended() {
    let requests = [("up/m", false), ("up/m", true), ("nobody/x", false)];
    let (rows, statuses) = logged(LogSettings::default(), &requests).await;
    assert_eq!(statuses[..2], [200, 200]);
    assert_eq!(rows.len(), 3, "{rows:#?}");
    // (model, upstream, status, error kind)
    let seen: Vec<(&str, &str, u16, &str)> = (rows.iter())
        .map(|r| (&*r.model, &*r.upstream, r.status, &*r.error_kind))
        .collect();
    assert_eq!(seen[0], ("up/m", "m", 200, ""));
    assert_eq!(seen[1], ("up/m", "m", 200, ""));
    assert_eq!(
        (seen[2].0, seen[2].1, seen[2].2),
        ("nobody/x", "", statuses[2])
    );
    assert!(statuses[2] >= 400 && !seen[2].3.is_empty(), "{:?}", rows[2]);
    for row in &rows[..2] {
        assert_eq!(row.dialect, "chat_completions");
        assert!(row.response_id.starts_with("chatcmpl-"), "{row:?}");
        assert!(
            row.ttfb_ms.is_some() && row.ttfb_ms <= Some(row.duration_ms),
            "{row:?}"
        );
        assert_eq!(
            (row.request_body.as_deref(), row.response_body.as_deref()),
            (None, None)
        );
    }
    assert!(rows[0].id < rows[1].id && rows[1].id < rows[2].id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_are_kept_only_when_asked_and_cut_to_the_cap() {
    // (settings, the answer kept)
    let cases = [
        (
            LogSettings {
                bodies: true,
                ..LogSettings::default()
            },
            Some("hello there"),
        ),
        (
            LogSettings {
                bodies: true,
                body_cap: 5,
                ..LogSettings::default()
            },
            Some("hello"),
        ),
        (
            LogSettings {
                bodies: false,
                ..LogSettings::default()
            },
            None,
        ),
    ];
    for (settings, kept) in cases {
        let (rows, _) = logged(settings, &[("up/m", false)]).await;
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].response_body.as_deref(), kept, "{settings:?}");
    }
}
