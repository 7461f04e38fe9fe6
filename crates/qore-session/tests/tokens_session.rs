//! A session's token estimate is calibrated by what its provider reports: after one turn
//! the estimate of that request is the report (plus the answer, now part of the history),
//! and a session opened from the store is calibrated by its stored turns alike.

mod session_compress_common;

use qore_agents::config::Config;
use qore_session::{SessionManager, SessionSetup, TargetSpec};
use qore_store::SqliteStore;
use qore_testkit::{ReplayServer, Reply};
use session_compress_common::{fixture, say};

/// A streamed answer of `text` whose usage reports `prompt` input tokens.
fn answer_with_usage(text: &str, prompt: u64) -> Reply {
    let chunk = |delta: serde_json::Value, finish: serde_json::Value, usage: serde_json::Value| {
        let chunk = serde_json::json!({"id": "c", "object": "chat.completion.chunk", "created": 0,
            "model": "tiny", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            "usage": usage});
        format!("data: {chunk}\n\n")
    };
    let usage = serde_json::json!({"prompt_tokens": prompt, "completion_tokens": 3, "total_tokens": prompt + 3});
    let body = chunk(
        serde_json::json!({"role": "assistant", "content": text}),
        serde_json::Value::Null,
        serde_json::Value::Null,
    ) + &chunk(serde_json::json!({}), serde_json::json!("stop"), usage)
        + "data: [DONE]\n\n";
    Reply::sse(body)
}

#[tokio::test]
async fn the_estimate_tracks_the_reported_input_after_one_turn_and_after_reopening() {
    let chat = ReplayServer::start(vec![answer_with_usage("Fine.", 700)])
        .await
        .unwrap();
    let squeeze = ReplayServer::start(vec![]).await.unwrap();
    let fx = fixture(&chat, &squeeze, Some(10_000), Some(None)).await;
    let uncalibrated = fx.session.token_use().await;
    assert!(uncalibrated.used < 100, "{uncalibrated:?}");
    say(&fx.session, "How are you?").await;
    let calibrated = fx.session.token_use().await;
    // The request's 700 plus the answer "Fine." (a message: a few tokens).
    assert!((700..720).contains(&calibrated.used), "{calibrated:?}");
    assert_eq!(calibrated.window, Some(10_000));

    let manager = SessionManager::new(
        Some(std::sync::Arc::new(
            SqliteStore::open(fx.dir.path().join("qore.db")).unwrap(),
        )),
        Config::load(Some(fx.dir.path())),
        qore_session::traced_notes(),
    );
    let spec = TargetSpec {
        agent: Some("talker".into()),
        project: Some(fx.dir.path().to_owned()),
        ..TargetSpec::default()
    };
    let target = manager.reach(&spec).await.unwrap();
    let reopened = manager
        .open(&fx.original, SessionSetup::new(target))
        .await
        .unwrap();
    assert_eq!(reopened.token_use().await, calibrated);
}
