//! Bundled agent profiles against recorded multi-exchange tool sessions: the same replay
//! and checks as `qore-client`'s `tool_loop_recorded.rs` (shared source, see
//! `crates/qore-client/tests/tool_loop/recorded.rs`), but every request, the first and each
//! continuation, is rendered by the wire's bundled `[body]` profile. Each continuation must
//! carry every call of the previous turn with its result, in the recorded order, with the
//! recorded ids and signatures, no orphans, and the previous request's bytes as its prefix.

#[path = "../../qore-client/tests/tool_loop/recorded.rs"]
mod recorded;
#[path = "../../qore-client/tests/tool_loop/support.rs"]
mod support;

use std::sync::Arc;

use qore_agents::providers::Providers;
use qore_agents::render::AgentRenderer;
use qore_agents::{Catalog, Partials};
use qore_client::{Client, ClientConfig};
use qore_testkit::ReplayServer;
use recorded::replay_session;
use support::Wire;

/// The bundled agent that speaks `wire`.
fn agent_for(wire: Wire) -> &'static str {
    match wire {
        Wire::OpenAiChat => "openai-chat",
        Wire::Responses => "openai-responses-chat",
        Wire::Anthropic => "claude-chat",
        Wire::Gemini => "gemini-chat",
        Wire::Ollama => "ollama-chat",
        Wire::LlamaCpp => "llamacpp-chat",
        Wire::Mistral => "mistral-chat",
    }
}

/// A client whose bodies the bundled profile renders, with the recorded model.
fn templated(wire: Wire, server: &ReplayServer, model: &str) -> Client {
    let catalog = Catalog::load(None);
    let agent = catalog.get(agent_for(wire)).expect("bundled");
    let providers = Providers::load(None);
    let provider = providers.get(agent.provider.as_deref().unwrap()).unwrap();
    let protocol = qore_client::protocols::by_name(&provider.protocol).unwrap();
    assert_eq!(
        protocol.name(),
        wire.name(),
        "{} speaks {}",
        agent.name,
        wire.name()
    );
    let renderer = AgentRenderer::new(
        agent,
        protocol.clone(),
        model.to_owned(),
        Partials::default(),
    )
    .expect("the bundled profile compiles");
    let codec_client = wire.client(server);
    let config = ClientConfig {
        endpoint: renderer.endpoint.clone(),
        ..codec_client.config().clone()
    };
    Client::new(protocol, config)
        .unwrap()
        .with_renderer(Arc::new(renderer))
}

#[tokio::test]
async fn anthropic_sessions() {
    for name in [
        "anthropic/messages_sessions/sequential_tool_calls_streaming",
        "anthropic/reasoning_tool_roundtrip/streaming",
        "anthropic/multi_turn_streaming/multi_turn_streaming_tools",
        "anthropic/prompt_caching/conformance_agent_loop",
    ] {
        replay_session(Wire::Anthropic, name, &templated).await;
    }
}

#[tokio::test]
async fn openai_chat_sessions() {
    for name in [
        "openai/completions_api/completions_api_streams_two_tool_calls_before_final_answer",
        "openai/raw_capture_agent_matrix/chat_streamed_tool_run_records_distinct_raw",
        "openai/prompt_caching/chat_completions_agent_loop",
    ] {
        replay_session(Wire::OpenAiChat, name, &templated).await;
    }
}

#[tokio::test]
async fn openai_responses_sessions() {
    for name in [
        "openai/responses_sessions/sequential_tool_calls_streaming",
        "openai/responses_sessions/reasoning_session_two_tool_calls_streaming",
        "chatgpt/codex_sessions/sequential_tool_calls_streaming",
    ] {
        replay_session(Wire::Responses, name, &templated).await;
    }
}

#[tokio::test]
async fn gemini_sessions() {
    for name in [
        "gemini/multi_turn_streaming/manual_multi_turn_streaming_loop",
        "gemini/streaming_tools/streaming_tools_surface_two_distinct_tool_calls_before_final_answer",
    ] {
        replay_session(Wire::Gemini, name, &templated).await;
    }
}

#[tokio::test]
async fn ollama_sessions() {
    for name in [
        "ollama/streaming_tools/streaming_tools_smoke",
        "ollama/reasoning_tool_roundtrip/streaming",
    ] {
        replay_session(Wire::Ollama, name, &templated).await;
    }
}

#[tokio::test]
async fn llamacpp_and_mistral_sessions() {
    replay_session(Wire::LlamaCpp, "llamacpp/tools/tools_roundtrip", &templated).await;
    replay_session(
        Wire::Mistral,
        "mistral/agent_tool_sessions/sequential_complex_tool_calls_streaming",
        &templated,
    )
    .await;
}
