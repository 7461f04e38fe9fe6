//! The `agent_body` example run against a loopback Chat Completions server: the request it
//! sends is its profile's `[body]` rendered from the conversation, and a broken profile is
//! refused when it loads.

#[path = "../examples/agent_body.rs"]
#[allow(dead_code)]
mod agent_body;

use std::path::Path;

use qore_testkit::chat::{chat_answer, role_pairs, sent_messages};
use qore_testkit::ReplayServer;
use serde_json::json;

#[tokio::test]
async fn the_profiles_body_is_what_goes_on_the_wire() {
    let server = ReplayServer::start(vec![chat_answer("Rayleigh scattering.")])
        .await
        .unwrap();
    let agent = agent_body::load_agent(Path::new("terse.toml"), agent_body::PROFILE, "terse")
        .expect("the example profile loads");
    let url = format!("{}/v1", server.url());

    let answer = agent_body::ask_agent(&agent, &url, "small-model", "Why is the sky blue?")
        .await
        .expect("the agent answers");

    assert_eq!(answer, "Rayleigh scattering.");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    let body = requests[0].json().unwrap();
    // The literal fields, the rendered Jinja field, and the parent's conversation fields.
    assert_eq!(body["temperature"], json!(0.2));
    assert_eq!(body["max_tokens"], json!(200));
    assert_eq!(body["user"], json!("qore-example"));
    assert_eq!(body["model"], json!("small-model"));
    assert_eq!(body["stream"], json!(true));
    assert_eq!(
        sent_messages(&requests[0]),
        role_pairs(&[
            ("system", "Answer in one sentence."),
            ("user", "Why is the sky blue?")
        ])
    );
}

#[test]
fn a_profile_whose_body_does_not_compile_is_refused_at_load() {
    let broken = "schema_version = 1\nname = \"broken\"\nextends = \"base-openai-chat\"\nprovider = \"openai\"\n\
                  [body]\nuser = \"{% include 'no_such_partial.jinja' %}\"\n";
    let error = agent_body::load_agent(Path::new("broken.toml"), broken, "broken")
        .expect_err("the broken profile is refused");
    assert!(error.contains("broken.toml"), "{error}");
    assert!(error.contains("no_such_partial"), "{error}");
}
