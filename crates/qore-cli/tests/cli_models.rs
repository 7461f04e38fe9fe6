//! `qore models` against recorded model listings, and `qore run` without `--model`
//! (which asks the server for its only model). Expectations are read from the recordings.

mod common;

use common::{base_url, exchange, qore, replay, text_stdout, wire, IRREGULAR};
use qore_testkit::{reply_from_exchange, Exchange, ReplayServer, Slicing};
use serde_json::Value;

/// A recorded streamed text answer, for the chat request after the listing.
const CHAT: &str = "openai/regression/chat_compat_finish_reason_natural.yaml";

/// The model ids of a recorded `/v1/models` listing, in order.
fn listed_ids(ex: &Exchange) -> Vec<String> {
    let body = ex.response_json().expect("the listing is JSON");
    body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|m| m["id"].as_str().expect("id").to_owned())
        .collect()
}

#[tokio::test]
async fn models_lists_the_wire_ids_in_order() {
    for rel in [
        "openai/models/list_models_smoke.yaml",
        "mistral/models/list_models_smoke.yaml",
        "llamacpp/models/list_models_smoke.yaml",
    ] {
        let Some(ex) = exchange(rel) else { return };
        let ids = listed_ids(&ex);
        let server = ReplayServer::start_repeating(reply_from_exchange(&ex, IRREGULAR))
            .await
            .expect("server");
        let url = base_url(&server, &ex, "/models");

        let run = qore(&["models", "--url", &url]).await;
        assert_eq!(run.code, Some(0), "{rel}: {run:?}");
        let printed: Vec<&str> = run
            .stdout
            .lines()
            .map(|line| line.split('\t').next().unwrap_or_default())
            .collect();
        assert_eq!(printed, ids, "{rel}");

        let run = qore(&["models", "--url", &url, "--json"]).await;
        assert_eq!(run.code, Some(0), "{rel}: {run:?}");
        let printed: Vec<String> = run
            .stdout
            .lines()
            .map(|line| {
                let value: Value = serde_json::from_str(line).expect("JSON line");
                value["id"].as_str().expect("id").to_owned()
            })
            .collect();
        assert_eq!(printed, ids, "{rel}");

        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        for request in requests {
            assert_eq!(
                (request.method.as_str(), request.path.as_str()),
                ("GET", ex.path.as_str())
            );
        }
    }
}

#[tokio::test]
async fn run_without_model_uses_the_servers_only_model() {
    let (Some(models), Some(chat)) = (
        exchange("llamacpp/models/list_models_smoke.yaml"),
        exchange(CHAT),
    ) else {
        return;
    };
    let only = listed_ids(&models);
    assert_eq!(only.len(), 1);
    let server = ReplayServer::start(vec![
        reply_from_exchange(&models, Slicing::Whole),
        reply_from_exchange(&chat, IRREGULAR),
    ])
    .await
    .expect("server");
    let url = format!("{}/v1", server.url());
    let run = qore(&["run", "--url", &url, "hi"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, text_stdout(&wire(&chat.response_body).text));
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert_eq!(requests[0].path, "/v1/models");
    assert_eq!(requests[1].path, "/v1/chat/completions");
    assert_eq!(requests[1].json().expect("JSON")["model"], only[0].as_str());
}

#[tokio::test]
async fn run_without_model_refuses_a_server_with_many_models() {
    let Some(models) = exchange("openai/models/list_models_smoke.yaml") else {
        return;
    };
    let server = replay(&models).await;
    let url = format!("{}/v1", server.url());
    let run = qore(&["run", "--url", &url, "hi"]).await;
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.one_stderr_line().contains("--model"), "{run:?}");
    assert_eq!(server.requests().len(), 1, "no chat request is sent");
}
