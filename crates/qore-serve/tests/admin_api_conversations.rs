//! The admin API's conversations, costs, agents and models on a real `qore serve` (a
//! loopback upstream, real HTTP): a stored conversation with a tool call (seeded through the
//! chat API with `x-qore-session`, the upstream answering a tool call, then the answer) is
//! named by its request log row's `session_id` and shown in full by `/conversations/{id}`;
//! a stored response names its session too; costs come from the agent's `[pricing]` on log
//! and usage rows; agents and models are what the server was configured with. The
//! conversation case runs on SQLite and on PostgreSQL.

mod admin_more;

use admin_more::{priced_answer, Gateway};
use qore_testkit::chat::chat_tool_call;
use serde_json::{json, Value};

/// The chat of the conversation case: the question, then (with `answered`) the model's call
/// of `weather` and its result.
fn weather_chat(answered: bool) -> String {
    let mut messages = vec![json!({"role": "user", "content": "weather in Oslo?"})];
    if answered {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
            "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": "call_1",
            "content": "<script>rain</script>"}));
    }
    let tools = json!([{"type": "function", "function": {"name": "weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
    json!({"model": "helper", "messages": messages, "tools": tools}).to_string()
}

async fn a_conversation_with_a_tool_call_is_logged_priced_and_shown(location: Option<String>) {
    let replies = vec![
        chat_tool_call("call_1", "weather", "{\"city\":\"Oslo\"}"),
        priced_answer("It rains in Oslo."),
    ];
    let gateway = Gateway::start(location, replies).await;
    let (_, created) = (gateway.admin("POST", "/keys", Some(json!({"name": "app"})))).await;
    let key = created["key"].as_str().unwrap().to_owned();
    let session = [("x-qore-session", "oslo-trip")];
    for answered in [false, true] {
        let body = Some(weather_chat(answered));
        let path = "/v1/chat/completions";
        let (status, answer) = gateway.call(Some(&key), "POST", path, body, &session).await;
        assert_eq!(status, 200, "{answer}");
    }
    let conversation = gateway.store.session("oslo-trip").await.unwrap().id;

    // The log: the call kept nothing yet (no session, no usage); the answer wrote the turn.
    let rows = gateway.logged(2).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    // (session_id, cost_usd) of each row, oldest first
    let seen: Vec<(Value, Value)> = (rows.iter())
        .map(|r| (r["session_id"].clone(), r["cost_usd"].clone()))
        .collect();
    let cost = (1000.0 * 3.0 + 200.0 * 15.0) / 1e6;
    assert_eq!(
        seen,
        [(json!(""), Value::Null), (json!(conversation), json!(cost))]
    );
    assert!(rows[1]["response_id"]
        .as_str()
        .unwrap()
        .starts_with("chatcmpl-"));
    let (_, full) = gateway
        .admin(
            "GET",
            &format!("/requests/{}", rows[1]["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(full["session_id"], json!(conversation), "{full}");

    // The conversation, listed and in full.
    let (status, listed) = gateway
        .admin("GET", "/conversations?search=OSLO", None)
        .await;
    assert_eq!(status, 200, "{listed}");
    let found = &listed["conversations"];
    assert_eq!(found.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(
        (
            &found[0]["id"],
            &found[0]["name"],
            &found[0]["messages"],
            &listed["next"]
        ),
        (
            &json!(conversation),
            &json!("oslo-trip"),
            &json!(4),
            &Value::Null
        )
    );
    let (_, none) = gateway
        .admin("GET", "/conversations?search=paris", None)
        .await;
    assert_eq!(none["conversations"], json!([]));
    let (status, one) = gateway
        .admin("GET", &format!("/conversations/{conversation}"), None)
        .await;
    assert_eq!(status, 200, "{one}");
    // (role, text, tool calls, tool call id, is_error)
    let messages: Vec<(Value, Value, Value, Value, Value)> = (one["messages"].as_array())
        .unwrap()
        .iter()
        .map(|m| {
            let f = |name: &str| m[name].clone();
            (
                f("role"),
                f("text"),
                f("tool_calls"),
                f("tool_call_id"),
                f("is_error"),
            )
        })
        .collect();
    let call = json!([{"id": "call_1", "name": "weather", "arguments": "{\"city\":\"Oslo\"}"}]);
    let m = |role: &str, text: &str, calls: Value, id: Value| {
        (json!(role), json!(text), calls, id, json!(false))
    };
    assert_eq!(
        messages,
        [
            m("user", "weather in Oslo?", json!([]), Value::Null),
            m("assistant", "", call, Value::Null),
            m("tool", "<script>rain</script>", json!([]), json!("call_1")),
            m("assistant", "It rains in Oslo.", json!([]), Value::Null),
        ]
    );
    assert_eq!(one["title"], json!("weather in Oslo?"));

    // Usage rows are priced like the CLI: the agent's prices on summed tokens.
    for by in ["total", "agent", "day"] {
        let (_, usage) = gateway.admin("GET", &format!("/usage?by={by}"), None).await;
        let row = &usage["rows"][0];
        assert_eq!(
            (&row["tokens_in"], &row["cost_usd"]),
            (&json!(1000), &json!(cost)),
            "{by}"
        );
    }

    // What the server was configured with.
    let (_, agents) = gateway.admin("GET", "/agents", None).await;
    let helper = (agents["agents"].as_array().unwrap().iter())
        .find(|a| a["name"] == "helper")
        .cloned();
    let want = json!({"name": "helper", "description": "Answers with tools", "model": "up/tiny",
        "tools": []});
    assert_eq!(helper, Some(want), "{agents}");
    let (_, models) = gateway.admin("GET", "/models", None).await;
    let models = models["models"].as_array().unwrap().clone();
    let named = |name: &str| models.iter().find(|m| m["name"] == name).cloned();
    let url = format!("{}/v1", gateway.upstream.url());
    // (name, what /models says of it)
    let cases = [
        (
            "up/tiny",
            json!({"name": "up/tiny", "upstream": url, "protocol": "openai-chat",
            "context_window": 8192}),
        ),
        (
            "up/extra",
            json!({"name": "up/extra", "upstream": url, "protocol": "openai-chat",
            "context_window": null}),
        ),
    ];
    for (name, want) in cases {
        assert_eq!(named(name), Some(want), "{models:?}");
    }
    assert!(named("local/default").is_some(), "{models:?}");

    // Refused: (path, status, field named)
    let cases = [
        ("/conversations?limit=501", 400, Some("limit")),
        ("/conversations?page=2", 400, Some("page")),
        ("/conversations/nothing-like-it", 404, None),
        ("/agents?all=1", 400, Some("all")),
        ("/models?x=1", 400, Some("x")),
    ];
    for (path, status, field) in cases {
        let (got, answer) = gateway.admin("GET", path, None).await;
        assert_eq!(
            (got, answer["error"]["field"].as_str()),
            (status, field),
            "{path}"
        );
    }
    let (status, _) = gateway
        .call(Some(&key), "GET", "/admin/v1/conversations", None, &[])
        .await;
    assert_eq!(status, 403, "an API key cannot read conversations");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_with_a_tool_call_on_sqlite() {
    a_conversation_with_a_tool_call_is_logged_priced_and_shown(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_with_a_tool_call_on_postgresql() {
    let pg = tokio::task::spawn_blocking(qore_testkit::postgres::TestPostgres::start)
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("PostgreSQL: {e}"));
    let url = pg.fresh_database().expect("a fresh database");
    a_conversation_with_a_tool_call_is_logged_priced_and_shown(Some(url)).await;
    drop(pg);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_response_names_its_session_in_the_log() {
    let gateway = Gateway::start(None, vec![priced_answer("Hello.")]).await;
    let (_, created) = (gateway.admin("POST", "/keys", Some(json!({"name": "app"})))).await;
    let key = created["key"].as_str().unwrap().to_owned();
    let body = json!({"model": "helper", "input": "say hello"}).to_string();
    let (status, answer) = gateway
        .call(Some(&key), "POST", "/v1/responses", Some(body), &[])
        .await;
    assert_eq!(status, 200, "{answer}");
    let response_id = answer["id"].as_str().unwrap().to_owned();
    let stored = gateway.store.response(&response_id).await.unwrap().unwrap();
    let session = stored.session_id.expect("the response names its session");
    let rows = gateway.logged(1).await;
    assert_eq!(
        (&rows[0]["session_id"], &rows[0]["response_id"]),
        (&json!(session), &json!(response_id)),
        "{rows:?}"
    );
    let (_, listed) = gateway.admin("GET", "/conversations", None).await;
    assert_eq!(listed["conversations"][0]["id"], json!(session), "{listed}");
    assert_eq!(listed["conversations"][0]["messages"], json!(2), "{listed}");
}
