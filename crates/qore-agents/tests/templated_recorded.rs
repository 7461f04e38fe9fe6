//! Bundled agent profiles against recorded multi-exchange tool sessions: the same replay
//! and checks as `qore-client`'s `tool_loop_recorded.rs` (shared source and session list,
//! see `crates/qore-client/tests/tool_loop/recorded.rs`), but every request, the first and each
//! continuation, is rendered by the wire's bundled `[body]` profile. Each continuation must
//! carry every call of the previous turn with its result, in the recorded order, with the
//! recorded ids and signatures, no orphans, and the previous request's bytes as its prefix.
//!
//! Every request is rendered twice ([`Compared`]): with the native writers of the bundled
//! partials (what is sent) and by the templates alone, each through its own cache; the
//! bodies and the cached fragments must be the same bytes.

#[path = "../../qore-client/tests/tool_loop/recorded.rs"]
mod recorded;
#[path = "../../qore-client/tests/tool_loop/support.rs"]
mod support;

use std::sync::{Arc, Mutex};

use qore_agents::providers::Providers;
use qore_agents::render::AgentRenderer;
use qore_agents::{Catalog, Partials};
use qore_client::{BodyRenderer, ChatRequest, Client, ClientConfig, EncodeCache};
use qore_core::ErrorInfo;
use qore_testkit::ReplayServer;
use recorded::{replay_session, sessions};
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
    let renderer = || {
        AgentRenderer::new(
            agent,
            protocol.clone(),
            model.to_owned(),
            Partials::default(),
        )
        .expect("the bundled profile compiles")
    };
    let renderer = Compared {
        native: renderer(),
        templates: renderer().without_native_fragments(),
        cache: Mutex::default(),
    };
    let native = renderer.native.body().and_then(|b| b.native_dialect());
    assert!(native.is_some(), "{} renders natively", agent.name);
    let codec_client = wire.client(server);
    let config = ClientConfig {
        endpoint: renderer.native.endpoint.clone(),
        ..codec_client.config().clone()
    };
    Client::new(protocol, config)
        .unwrap()
        .with_renderer(Arc::new(renderer))
}

#[tokio::test]
async fn anthropic_sessions() {
    for name in sessions(Wire::Anthropic) {
        replay_session(Wire::Anthropic, name, &templated).await;
    }
}

#[tokio::test]
async fn openai_chat_sessions() {
    for name in sessions(Wire::OpenAiChat) {
        replay_session(Wire::OpenAiChat, name, &templated).await;
    }
}

#[tokio::test]
async fn openai_responses_sessions() {
    for name in sessions(Wire::Responses) {
        replay_session(Wire::Responses, name, &templated).await;
    }
}

#[tokio::test]
async fn gemini_sessions() {
    for name in sessions(Wire::Gemini) {
        replay_session(Wire::Gemini, name, &templated).await;
    }
}

#[tokio::test]
async fn ollama_sessions() {
    for name in sessions(Wire::Ollama) {
        replay_session(Wire::Ollama, name, &templated).await;
    }
}

#[tokio::test]
async fn llamacpp_sessions() {
    for name in sessions(Wire::LlamaCpp) {
        replay_session(Wire::LlamaCpp, name, &templated).await;
    }
}

#[tokio::test]
async fn mistral_sessions() {
    for name in sessions(Wire::Mistral) {
        replay_session(Wire::Mistral, name, &templated).await;
    }
}

/// Renders natively (what is sent) and by the templates alone, and insists on the same
/// bytes: the bodies, and the fragments each cache holds.
struct Compared {
    native: AgentRenderer,
    templates: AgentRenderer,
    /// The templates' own cache, across the requests of a session.
    cache: Mutex<EncodeCache>,
}

impl BodyRenderer for Compared {
    fn render(&self, request: &ChatRequest<'_>) -> Result<Vec<u8>, ErrorInfo> {
        let ours = BodyRenderer::render(&self.native, request);
        let theirs = BodyRenderer::render(&self.templates, request);
        assert_eq!(ours.as_ref().ok(), theirs.as_ref().ok());
        ours
    }

    fn render_cached(
        &self,
        request: &ChatRequest<'_>,
        cache: &mut EncodeCache,
    ) -> Result<Vec<u8>, ErrorInfo> {
        let ours = self.native.render_cached(request, cache);
        let mut reference = self.cache.lock().unwrap();
        let theirs = self.templates.render_cached(request, &mut reference);
        let text = |r: &Result<Vec<u8>, ErrorInfo>| {
            (r.as_ref().ok()).map(|b| String::from_utf8_lossy(b).into_owned())
        };
        assert_eq!(text(&ours), text(&theirs), "native and templates differ");
        assert!(ours.is_ok(), "{ours:?}");
        assert_eq!(cache.len(), reference.len());
        for i in 0..cache.len() {
            assert_eq!(cache.get(i), reference.get(i), "fragment {i}");
        }
        ours
    }
}
