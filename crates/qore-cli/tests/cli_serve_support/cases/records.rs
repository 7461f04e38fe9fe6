//! What the server leaves in its data dir: usage per key and model (`qore serve usage`
//! after SIGTERM) and stored Responses conversations (`qore sessions list`,
//! `previous_response_id`, another key's id, `store: false`).

use serde_json::{json, Value};

use qore_testkit::chat::{chat_answer, role_pairs, sent_messages};
use qore_testkit::ReplayServer;

use crate::cli_serve_support::upstream::{answer_with_usage, text_of};
use crate::cli_serve_support::{error_of, World};

#[tokio::test]
async fn usage_counts_requests_and_tokens_per_key_and_model() {
    let w = World::new();
    let upstream = ReplayServer::start_repeating(answer_with_usage("ok", 11, 3))
        .await
        .unwrap();
    w.chat_provider("p", &upstream).agent("ag", "p", "");
    let alice = w.key("alice", &[]).await;
    let bob = w.key("bob", &[]).await;
    let mut server = w.serve(&[]).await;
    // (key, path, model, stream)
    let requests = [
        (&alice, "/v1/chat/completions", "p/m", false),
        (&alice, "/v1/messages", "p/m", true),
        (&alice, "/v1/chat/completions", "ag", true),
        (&bob, "/v1/responses", "p/m", false),
    ];
    for (key, path, model, stream) in requests {
        let body = crate::cli_serve_support::dialects()
            .into_iter()
            .find(|(p, _)| *p == path)
            .unwrap()
            .1;
        let answer = (server.post(path, &body(model, "Hi.", stream), &[("x-api-key", key)])).await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.text);
        assert_eq!(text_of(path, &answer.text), "ok", "{path}: {}", answer.text);
    }
    assert_eq!(server.stop().await, Some(0), "{}", server.stderr());

    let run = w.qore(&["serve", "usage", "--json"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let rows: Value = serde_json::from_str(&run.stdout).unwrap();
    let mut got: Vec<(String, String, u64, u64, u64, u64)> = (rows.as_array().unwrap().iter())
        .map(|r| {
            let n = |f: &str| r[f].as_u64().unwrap_or_else(|| panic!("{f}: {r}"));
            let s = |f: &str| r[f].as_str().unwrap_or_default().to_owned();
            (
                s("key"),
                s("model"),
                n("requests"),
                n("errors"),
                n("tokens_in"),
                n("tokens_out"),
            )
        })
        .collect();
    got.sort();
    let row = |key: &str, model: &str, n: u64| (key.into(), model.into(), n, 0, 11 * n, 3 * n);
    let want = vec![
        row("alice", "ag", 1),
        row("alice", "p/m", 2),
        row("bob", "p/m", 1),
    ];
    assert_eq!(got, want, "{}", run.stdout);
}

/// The sessions the data dir holds (`qore sessions list --json --all-projects`).
async fn sessions(w: &World) -> Vec<Value> {
    let run = w
        .qore(&["sessions", "list", "--json", "--all-projects"])
        .await;
    assert_eq!(run.code, Some(0), "{run:?}");
    serde_json::from_str::<Value>(&run.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn responses_are_stored_continued_private_and_not_kept_when_asked() {
    let w = World::new();
    let replies = ["Noted.", "It was 42.", "Gone."].map(chat_answer).to_vec();
    let upstream = ReplayServer::start(replies).await.unwrap();
    w.chat_provider("p", &upstream);
    let one = w.key("one", &[]).await;
    let two = w.key("two", &[]).await;
    let mut server = w.serve(&[]).await;
    let as_one = [("x-api-key", one.as_str())];
    let as_two = [("x-api-key", two.as_str())];
    let path = "/v1/responses";

    let answer = server
        .post(
            path,
            &json!({"model": "p/m", "input": "Remember 42."}),
            &as_one,
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(text_of(path, &answer.text), "Noted.");
    let first = answer.json()["id"].as_str().unwrap().to_owned();
    let listed = sessions(&w).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    let session = listed[0]["id"].clone();

    let next = json!({"model": "p/m", "input": "Which number?", "previous_response_id": first});
    let answer = server.post(path, &next, &as_one).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(text_of(path, &answer.text), "It was 42.");
    let sent = upstream.requests();
    let conversation = role_pairs(&[
        ("user", "Remember 42."),
        ("assistant", "Noted."),
        ("user", "Which number?"),
    ]);
    assert_eq!(sent_messages(&sent[1]), conversation);
    let listed = sessions(&w).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["id"], session, "{listed:?}");

    // Another key's response does not exist for it (a 400 `previous_response_not_found`, as
    // api.openai.com answers); nothing is sent upstream.
    let answer = server.post(path, &next, &as_two).await;
    assert_eq!(answer.status, 400, "{}", answer.text);
    assert_eq!(
        answer.json()["error"]["code"],
        "previous_response_not_found"
    );
    error_of(path, &answer);
    let answer = server.get(&format!("{path}/{first}"), &as_two).await;
    assert_eq!(answer.status, 404, "{}", answer.text);
    let answer = server.get(&format!("{path}/{first}"), &as_one).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(answer.json()["id"], first.as_str());
    assert_eq!(upstream.requests().len(), 2);

    // store: false keeps nothing.
    let unkept = json!({"model": "p/m", "input": "Forget this.", "store": false});
    let answer = server.post(path, &unkept, &as_one).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let third = answer.json()["id"].as_str().unwrap().to_owned();
    assert_eq!(sessions(&w).await.len(), 1);
    let answer = server.get(&format!("{path}/{third}"), &as_one).await;
    assert_eq!(answer.status, 404, "{}", answer.text);
    let after = json!({"model": "p/m", "input": "And?", "previous_response_id": third});
    let answer = server.post(path, &after, &as_one).await;
    assert_eq!(answer.status, 400, "{}", answer.text);
    assert_eq!(upstream.requests().len(), 3);
    assert_eq!(server.stop().await, Some(0));
}
