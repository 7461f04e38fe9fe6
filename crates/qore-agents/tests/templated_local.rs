//! A templated agent against the real local model server (SmolLM2-135M under llama.cpp,
//! started by `scripts/local-model.sh` when needed): the bundled `local-chat` profile with a
//! two-line user delta renders the request, the server accepts it and streams an answer.
//! The model is tiny: only the structure of the answer is checked.

use std::path::Path;
use std::sync::Arc;

use futures_util::StreamExt as _;
use qore_agents::profile::ProfileFile;
use qore_agents::providers::Providers;
use qore_agents::render::AgentRenderer;
use qore_agents::{Catalog, Partials};
use qore_client::{CancellationToken, ChatRequest, Client, RequestOptions};
use qore_core::{History, Message, StopReason, StreamOutcome};
use serde_json::Value;

#[tokio::test]
async fn the_local_chat_profile_talks_to_the_local_model() {
    qore_client::local::ensure_running()
        .await
        .expect("the local model server starts");
    let delta =
        "name = \"brief\"\nextends = \"local-chat\"\n[body]\nmax_tokens = 16\ntemperature = 0\n";
    let catalog =
        Catalog::with_user_files(vec![
            ProfileFile::parse(Path::new("brief.toml"), delta).unwrap()
        ]);
    let agent = catalog.get("brief").unwrap();
    let instance = Providers::load(None).get("local").unwrap().clone();
    let protocol = qore_client::protocols::by_name(&instance.protocol).unwrap();
    let model = agent.model.clone().unwrap();
    let renderer = Arc::new(
        AgentRenderer::new(agent, protocol.clone(), model.clone(), Partials::default()).unwrap(),
    );
    let client = Client::new(protocol, instance.client_config(None).unwrap())
        .unwrap()
        .with_renderer(renderer.clone());

    let history = History::from(vec![
        Message::system("Answer in one word."),
        Message::user("Name a colour."),
    ]);
    let options = RequestOptions::default();
    let request = ChatRequest {
        model: &model,
        history: &history,
        tools: &[],
        options: &options,
    };
    // What is sent is the profile's body: its literals and the conversation.
    let body: Value = serde_json::from_slice(&client.encode(&request).unwrap()).unwrap();
    assert_eq!(body["max_tokens"], 16);
    assert_eq!(body["stream"], true);
    assert_eq!(body["messages"][1]["content"], "Name a colour.");

    let mut stream = client.stream(&request, CancellationToken::new());
    let mut deltas = 0;
    while let Some(event) = stream.next().await {
        if matches!(event, qore_core::ResponseEvent::TextDelta { .. }) {
            deltas += 1;
        }
    }
    match stream.finish().await {
        StreamOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => {
            assert!(deltas > 0);
            assert!(!message.text().trim().is_empty());
            assert!(
                matches!(
                    stop_reason,
                    Some(StopReason::EndTurn | StopReason::MaxTokens)
                ),
                "{stop_reason:?}"
            );
            assert!(usage.output_tokens.unwrap_or(0) > 0, "{usage:?}");
        }
        other => panic!("{other:?}"),
    }
}
