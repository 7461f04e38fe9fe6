//! The console's usage numbers equal `qore serve usage --json` for the same filter, as an
//! operator meets both: the real `qore serve` binary on a temporary SQLite store, real
//! requests through it (answered and failed, two keys, token counts from a loopback
//! upstream, one agent with `[pricing]`), then the real `qore serve usage --json` (all rows,
//! and one key since today; the agent's cost priced by hand here) and the console page in Debian's Chromium (`tests/console/cli_usage_check.py`, Playwright
//! from `scripts/console-env.sh`) given the CLI's output to compare with what it shows.

mod cli_serve_support;
mod common;

use std::time::Duration;

use cli_serve_support::World;
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

/// A streamed answer "fine" that reports 1200 tokens in and 300 out.
fn answer_with_usage() -> Reply {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let usage = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [], "usage": {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500}});
    Reply::sse(format!(
        "data: {}\n\ndata: {}\n\ndata: {usage}\n\ndata: [DONE]\n\n",
        chunk(json!({"role": "assistant", "content": "fine"}), Value::Null),
        chunk(json!({}), json!("stop")),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_shows_the_usage_qore_serve_usage_reports() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = qore_testkit::console_env::console_python().unwrap_or_else(|e| panic!("{e}"));

    let upstream = ReplayServer::start_repeating(answer_with_usage())
        .await
        .unwrap();
    let w = World::new();
    w.chat_provider("up", &upstream);
    // $2 per million in, $8 per million out.
    w.agent("priced", "up", "[pricing]\ninput = 2.0\noutput = 8.0");
    let admin = w.qore(&["serve", "admin", "create", "ops"]).await;
    assert_eq!(admin.code, Some(0), "{admin:?}");
    let admin = admin.stdout.trim().to_owned();
    let (team, other) = (w.key("team", &[]).await, w.key("other", &[]).await);
    let mut server = w.serve(&[]).await;
    let body =
        |model: &str| json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
    for (key, model, status) in [
        (&team, "up/m", 200),
        (&team, "up/m", 200),
        (&team, "priced", 200),
        (&team, "nobody/x", 404),
        (&other, "up/m", 200),
        (&other, "up/m", 200),
    ] {
        let auth = format!("Bearer {key}");
        let answer = (server.post(
            "/v1/chat/completions",
            &body(model),
            &[("authorization", &auth)],
        ))
        .await;
        assert_eq!(answer.status, status, "{model}: {}", answer.text);
    }
    // The usage writer's batch lands within a second or so.
    let bearer = format!("Bearer {admin}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let total = server
            .get("/admin/v1/usage", &[("authorization", &bearer)])
            .await;
        if total.json()["rows"][0]["requests"] == 6 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{}", total.text);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let keys = server
        .get("/admin/v1/keys?search=team", &[("authorization", &bearer)])
        .await;
    let team_id = keys.json()["keys"][0]["id"].as_str().unwrap().to_owned();
    let today = qore_store::utc_day(std::time::SystemTime::now());
    let mut reports = Vec::new();
    for filter in [&[][..], &["--key", "team", "--since", &today][..]] {
        let run = (w.qore(&[&["serve", "usage", "--json"][..], filter].concat())).await;
        assert_eq!(run.code, Some(0), "{run:?}");
        let rows: Value = serde_json::from_str(&run.stdout).unwrap();
        let rows = rows.as_array().unwrap();
        assert!(!rows.is_empty(), "{}", run.stdout);
        // The priced agent's one request: 1200 in at $2/M and 300 out at $8/M; unpriced
        // rows have no cost.
        for row in rows {
            match row["agent"] == "priced" {
                true => {
                    let cost = row["cost_usd"].as_f64().unwrap_or(f64::NAN);
                    assert!((cost - 0.0048).abs() < 1e-12, "{row}");
                }
                false => assert_eq!(row["cost_usd"], Value::Null, "{row}"),
            }
        }
        assert!(
            rows.iter().any(|r| r["agent"] == "priced"),
            "{}",
            run.stdout
        );
        reports.push(run.stdout);
    }
    let (all, team_today) = (reports[0].clone(), reports[1].clone());

    let shots = repo.join("target/console-shots/cli");
    std::fs::create_dir_all(&shots).unwrap();
    let url = server.url.clone();
    let run = tokio::task::spawn_blocking(move || {
        std::process::Command::new(python)
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(repo.join("tests/console/cli_usage_check.py"))
            .env("QORE_URL", url)
            .env("QORE_ADMIN", admin)
            .env("QORE_SHOTS", &shots)
            .env("QORE_CLI_USAGE", all)
            .env("QORE_CLI_USAGE_KEY", team_today)
            .env("QORE_KEY_ID", team_id)
            .env("QORE_SINCE", today)
            .output()
            .unwrap()
    });
    let out = tokio::time::timeout(Duration::from_secs(180), run)
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("2 passed"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    server.stop().await;
}
