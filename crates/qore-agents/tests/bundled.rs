//! Every bundled profile loads, resolves and validates; and the bundled bodies say what the
//! codecs' own encoders say for the same conversation (the codecs are proven on recorded
//! provider traffic, so this ties the templates to the real wire).

use qore_agents::providers::Providers;
use qore_agents::render::AgentRenderer;
use qore_agents::validate::{hostile_history_for, hostile_tools, validate_catalog};
use qore_agents::{Catalog, Partials};
use qore_client::{ChatRequest, RequestOptions};
use serde_json::Value;

fn loaded() -> (Catalog, Providers) {
    let catalog = Catalog::load(None);
    assert!(catalog.errors.is_empty(), "{:#?}", catalog.errors);
    assert!(catalog.warnings.is_empty(), "{:#?}", catalog.warnings);
    (catalog, Providers::load(None))
}

#[test]
fn every_bundled_profile_loads_resolves_and_validates() {
    let (catalog, providers) = loaded();
    let errors = validate_catalog(&catalog, &providers, &Partials::default());
    assert!(
        errors.is_empty(),
        "{:#?}",
        errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
    );
    let concrete: Vec<_> = catalog.all().filter(|a| !a.is_abstract).collect();
    assert!(concrete.len() >= 40, "{}", concrete.len());
    // Each vendor has chat, compression and refactor agents.
    for vendor in [
        "openai",
        "openai-responses",
        "claude",
        "gemini",
        "mistral",
        "deepseek",
        "openrouter",
        "ollama",
        "llamacpp",
        "lmstudio",
        "lmstudio-responses",
        "local",
    ] {
        for kind in ["chat", "compression", "refactor"] {
            let name = format!("{vendor}-{kind}");
            let agent = catalog
                .get(&name)
                .unwrap_or_else(|| panic!("{name} is bundled"));
            assert!(
                agent.tags.contains(&kind.to_owned()),
                "{name}: {:?}",
                agent.tags
            );
            assert!(
                providers.get(agent.provider.as_deref().unwrap()).is_some(),
                "{name}"
            );
        }
    }
    for name in [
        "codestral-completion",
        "mistral-completion",
        "llamacpp-completion",
        "deepseek-completion",
        "ollama-completion",
    ] {
        assert!(catalog.get(name).is_some(), "{name}");
    }
}

/// The conversation a templated body carries, and the one the codec encodes.
fn both(agent_name: &str, key: &str) -> (Value, Value) {
    let (catalog, providers) = loaded();
    let agent = catalog.get(agent_name).unwrap();
    let instance = providers.get(agent.provider.as_deref().unwrap()).unwrap();
    let protocol = qore_client::protocols::by_name(&instance.protocol).unwrap();
    let renderer =
        AgentRenderer::new(agent, protocol.clone(), "m".into(), Partials::default()).unwrap();
    let history = hostile_history_for(protocol.name());
    let tools = hostile_tools();
    let options = RequestOptions::default();
    let templated: Value =
        serde_json::from_slice(&renderer.chat_body(&history, &tools, &options).unwrap()).unwrap();
    let request = ChatRequest {
        model: "m",
        history: &history,
        tools: &tools,
        options: &options,
    };
    let encoded = protocol.encode(&request).unwrap();
    (templated[key].clone(), encoded[key].clone())
}

#[test]
fn bundled_bodies_match_the_codecs() {
    for (agent, keys) in [
        (
            "openai-chat",
            &[
                "messages",
                "tools",
                "tool_choice",
                "model",
                "stream",
                "stream_options",
            ][..],
        ),
        ("ollama-chat", &["messages", "tools", "model", "stream"][..]),
        (
            "claude-chat",
            &["messages", "system", "tools", "model", "stream"][..],
        ),
        (
            "gemini-chat",
            &["contents", "systemInstruction", "tools"][..],
        ),
        (
            "openai-responses-chat",
            &[
                "input",
                "instructions",
                "include",
                "tools",
                "model",
                "stream",
                "store",
            ][..],
        ),
    ] {
        for key in keys {
            let (templated, encoded) = both(agent, key);
            assert_eq!(
                templated, encoded,
                "{agent}: {key} differs\ntemplated: {templated:#}\nencoded: {encoded:#}"
            );
        }
    }
}

#[test]
fn only_a_wire_with_cache_marks_gets_them() {
    // The marks are the wire's capability: Anthropic Messages has them, no other wire.
    for name in qore_client::protocols::NAMES {
        let protocol = qore_client::protocols::by_name(name).unwrap();
        let marking = protocol.with_cache_marks();
        assert_eq!(marking.is_some(), *name == "anthropic", "{name}");
    }
}

#[test]
fn anthropic_cache_breakpoints_mark_what_the_codec_marks() {
    use qore_agents::profile::ProfileFile;
    use std::path::Path;

    let profile = "name = \"cached\"\nextends = \"claude-chat\"\ncache_breakpoints = [\"system\", \"tools\", \"last_user_message\"]\n";
    let catalog = Catalog::with_user_files(vec![
        ProfileFile::parse(Path::new("c.toml"), profile).unwrap()
    ]);
    let agent = catalog.get("cached").unwrap();
    let codec = qore_client::protocols::by_name("anthropic")
        .and_then(|p| p.with_cache_marks())
        .unwrap();
    let renderer =
        AgentRenderer::new(agent, codec.clone(), "m".into(), Partials::default()).unwrap();
    let history = hostile_history_for("anthropic");
    let tools = hostile_tools();
    let options = RequestOptions::default();
    let templated: Value =
        serde_json::from_slice(&renderer.chat_body(&history, &tools, &options).unwrap()).unwrap();
    let request = ChatRequest {
        model: "m",
        history: &history,
        tools: &tools,
        options: &options,
    };
    let encoded = qore_client::Protocol::encode(&*codec, &request).unwrap();
    for key in ["system", "tools", "messages"] {
        assert_eq!(templated[key], encoded[key], "{key}");
    }
    assert_eq!(templated["system"][0]["cache_control"]["type"], "ephemeral");
    // With a TTL, the marks carry it.
    let profile = "name = \"ttl\"\nextends = \"cached\"\ncache_ttl = \"1h\"\n";
    let catalog = Catalog::with_user_files(vec![ProfileFile::parse(
        Path::new("c.toml"),
        &profile.replace(
            "extends = \"cached\"",
            "extends = \"claude-chat\"\ncache_breakpoints = [\"system\"]",
        ),
    )
    .unwrap()]);
    let renderer = AgentRenderer::new(
        catalog.get("ttl").unwrap(),
        codec,
        "m".into(),
        Partials::default(),
    )
    .unwrap();
    let body: Value =
        serde_json::from_slice(&renderer.chat_body(&history, &[], &options).unwrap()).unwrap();
    assert_eq!(
        body["system"][0]["cache_control"],
        serde_json::json!({"type": "ephemeral", "ttl": "1h"})
    );
}
