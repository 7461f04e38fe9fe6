//! The tool loop against recorded multi-exchange tool sessions (`rig-cassettes`, see
//! `/work/shared/fixtures/README.md`), at least one per protocol, with each codec's own
//! encoder writing the requests (the checks are in `tool_loop/recorded.rs`).

#[path = "tool_loop/recorded.rs"]
mod recorded;
#[path = "tool_loop/support.rs"]
mod support;

use recorded::{replay_session, sessions};
use support::Wire;

fn codec(wire: Wire, server: &qore_testkit::ReplayServer, _model: &str) -> qore_client::Client {
    wire.client(server)
}

#[tokio::test]
async fn anthropic_sessions() {
    for name in sessions(Wire::Anthropic) {
        replay_session(Wire::Anthropic, name, &codec).await;
    }
}

#[tokio::test]
async fn openai_chat_sessions() {
    for name in sessions(Wire::OpenAiChat) {
        replay_session(Wire::OpenAiChat, name, &codec).await;
    }
}

#[tokio::test]
async fn openai_responses_sessions() {
    for name in sessions(Wire::Responses) {
        replay_session(Wire::Responses, name, &codec).await;
    }
}

#[tokio::test]
async fn gemini_sessions() {
    for name in sessions(Wire::Gemini) {
        replay_session(Wire::Gemini, name, &codec).await;
    }
}

#[tokio::test]
async fn ollama_sessions() {
    for name in sessions(Wire::Ollama) {
        replay_session(Wire::Ollama, name, &codec).await;
    }
}

#[tokio::test]
async fn llamacpp_sessions() {
    for name in sessions(Wire::LlamaCpp) {
        replay_session(Wire::LlamaCpp, name, &codec).await;
    }
}

#[tokio::test]
async fn mistral_sessions() {
    for name in sessions(Wire::Mistral) {
        replay_session(Wire::Mistral, name, &codec).await;
    }
}
