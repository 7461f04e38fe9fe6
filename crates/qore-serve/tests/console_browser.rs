//! The console in a real browser: a real `qore serve` (in this process, on loopback, a
//! temporary store, a loopback upstream) seeded through its HTTP API with real
//! requests (and 10,000 request log rows written to the store; a conversation kept with
//! `x-qore-session` whose upstream answers a tool call, through the agent `helper` that has
//! a `[pricing]`), then the pytest suite
//! `tests/console` drives Debian's Chromium through Playwright against it
//! (`scripts/console-env.sh`; screenshots in `target/console-shots/{sqlite,postgresql}`),
//! once on SQLite and once on PostgreSQL (`qore_testkit::postgres`). Without Chromium and
//! the venv (console-env.sh not run) the test says so and passes nothing: it fails.

mod admin;

use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use admin::Served;
use qore_store::{log_id, RequestLogRow};
use serde_json::json;

/// How many cases `tests/console/test_*.py` hold: all must pass, none skipped.
const TESTS: usize = 12;

/// How many conversations are seeded (the last one with a tool call).
const CONVERSATIONS: usize = 53;

fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_works_in_chromium() {
    browse(None, "sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_works_in_chromium_on_postgresql() {
    let pg =
        qore_testkit::postgres::TestPostgres::start().unwrap_or_else(|e| panic!("PostgreSQL: {e}"));
    let url = pg
        .fresh_database()
        .unwrap_or_else(|e| panic!("a database: {e}"));
    browse(Some(url), "postgresql").await;
    drop(pg);
}

/// Seed a server on the store at `location` and run the browser suite against it;
/// screenshots go to `target/console-shots/{name}`.
async fn browse(location: Option<String>, name: &str) {
    let python = qore_testkit::console_env::console_python().unwrap_or_else(|e| panic!("{e}"));

    // The upstream streams "one two three" in three deltas, 300 ms apart (the playground
    // test sees the text grow).
    let chunk = |text: &str, finish: serde_json::Value| {
        let c = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let body = ["one ", "two ", "three"]
        .map(|t| chunk(t, serde_json::Value::Null))
        .concat()
        + &chunk("", json!("stop"))
        + "data: [DONE]\n\n";
    let reply = qore_testkit::Reply::sse(body).with_pace(Duration::from_millis(300));
    // The provider `tools` (the agent `helper`'s) answers a tool call, then text, each
    // with its token counts (so the request has a cost at the agent's prices).
    let usage = json!({"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500});
    let with_usage = |delta: serde_json::Value, finish: &str| {
        let c = |delta: serde_json::Value, finish: serde_json::Value| {
            json!({"id": "t", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        };
        let last = json!({"id": "t", "object": "chat.completion.chunk", "created": 1,
            "model": "m", "choices": [], "usage": usage});
        qore_testkit::Reply::sse(format!(
            "data: {}\n\ndata: {}\n\ndata: {last}\n\ndata: [DONE]\n\n",
            c(delta, serde_json::Value::Null),
            c(json!({}), json!(finish))
        ))
    };
    let tool_call = with_usage(
        json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_7", "type": "function",
            "function": {"name": "lookup", "arguments": "{\"city\": \"<b>Paris</b>\"}"}}]}),
        "tool_calls",
    );
    let answer = with_usage(
        json!({"role": "assistant", "content": "It is sunny."}),
        "stop",
    );
    let helper = "name = \"helper\"\nextends = \"openai-chat\"\nprovider = \"tools\"\n\
        model = \"m\"\ndescription = \"Looks things up\"\n\
        [pricing]\ninput = 3.0\noutput = 15.0\n";
    let served = Served::start_configured(
        location,
        reply,
        vec![
            ("tools", vec![tool_call, answer]),
            ("quick", vec![qore_testkit::chat::chat_answer("noted")]),
        ],
        &[("helper", helper)],
        |_| {},
    )
    .await;
    let (admin, _) = qore_serve::admin::auth::create(&*served.store, "ops")
        .await
        .unwrap();
    let (status, made) = served
        .admin(Some(&admin), "POST", "/keys", Some(json!({"name": "team"})))
        .await;
    assert_eq!(status, 201);
    let key = made["key"].as_str().unwrap().to_owned();
    // Once the server's copy of the keys has them (a key-less request is refused), real
    // requests with the key: answered ones and a refused one.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while served.chat("", "up/m").await != 401 {
        assert!(std::time::Instant::now() < deadline, "keys never required");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for model in ["up/m", "up/m", "up/m", "nobody/x"] {
        let _ = served.chat(&key, model).await;
    }
    // More conversations than one page of the console's list (50), older than the next.
    for n in 0..CONVERSATIONS - 1 {
        let name = format!("note-{n:02}");
        let status = served
            .chat_with(&key, "quick/m", &[("x-qore-session", &name)])
            .await;
        assert_eq!(status, 200, "{name}");
    }
    // A kept conversation through the agent `helper`: the upstream answers with a tool
    // call, the caller sends its result, the upstream answers (the turn is kept whole).
    let session = [("x-qore-session", "trip-planning")];
    let tools = json!([{"type": "function", "function": {"name": "lookup",
        "parameters": {"type": "object"}}}]);
    let user = json!({"role": "user", "content": "Weather in Paris?"});
    let first = json!({"model": "helper", "tools": tools, "messages": [user]});
    let (status, text) = served
        .post_as(&key, "/v1/chat/completions", &first, &session)
        .await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("call_7"), "{text}");
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_7",
        "type": "function", "function": {"name": "lookup",
        "arguments": "{\"city\": \"<b>Paris</b>\"}"}}]});
    let result = json!({"role": "tool", "tool_call_id": "call_7", "content": "sunny, 21 C"});
    let second = json!({"model": "helper", "tools": tools, "messages": [user, call, result]});
    let (status, text) = served
        .post_as(&key, "/v1/chat/completions", &second, &session)
        .await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("It is sunny."), "{text}");
    // 10,000 older rows, and one whose stored text is markup.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let rows: Vec<RequestLogRow> = (0..10_000)
        .map(|n| {
            let at = now - 3_600_000 - n;
            RequestLogRow {
                id: log_id(UNIX_EPOCH + Duration::from_millis(at as u64)),
                at_ms: at,
                model: if n == 0 {
                    "<img src=x onerror=window.pwned=1>".into()
                } else {
                    "up/m".into()
                },
                status: if n % 7 == 0 { 502 } else { 200 },
                error_kind: if n % 7 == 0 {
                    "upstream".into()
                } else {
                    String::new()
                },
                response_body: (n == 0).then(|| "<script>window.pwned=1</script>".into()),
                dialect: "chat_completions".into(),
                ..RequestLogRow::default()
            }
        })
        .collect();
    served.store.record_requests(&rows).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await; // the usage writer's batch

    let shots = repo().join("target/console-shots").join(name);
    std::fs::create_dir_all(&shots).unwrap();
    let url = served.server.url();
    let run = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(repo().join("tests/console"))
            .env("QORE_URL", url)
            .env("QORE_ADMIN", admin)
            .env("QORE_API_KEY", key)
            .env("QORE_SHOTS", &shots)
            .env("QORE_LOG_ROWS", "10000")
            .env("QORE_CONVERSATIONS", CONVERSATIONS.to_string())
            .output()
            .unwrap()
    });
    let out = tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains(&format!("{TESTS} passed")), "{text}");
}
