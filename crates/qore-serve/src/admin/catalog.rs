//! `/admin/v1/agents` and `/admin/v1/models`: what `qore serve` was configured with,
//! read-only.
//!
//! Promises: agents are the chat agents a request may name as its `model` (hidden and
//! abstract profiles left out), by name, each with its description, its `provider/model`
//! (null when the profile names none) and the names of the server's own tools it may call
//! (`[serve] tools`; none when the agent has tools off). Models are the `provider/model`
//! names the server reaches: those of the agents, `[serve] models` and `local/default`,
//! each once in name order, with the provider's URL as `upstream`, its protocol, and the
//! context window an agent's profile gives for it (null when none does). Nothing is asked
//! of a provider to answer.

use std::collections::BTreeMap;

use qore_session::provider_target::split_provider_model;
use serde_json::{json, Value};

use super::call::Admin;
use super::http::{ok, Answer};
use crate::route::is_chat_agent;

/// The `provider/model` an agent asks, when its profile names both.
fn upstream_of(agent: &qore_agents::Agent) -> Option<String> {
    Some(format!(
        "{}/{}",
        agent.provider.as_ref()?,
        agent.model.as_ref()?
    ))
}

pub async fn agents(call: Admin) -> Answer {
    call.params(&[])?;
    let app = &call.app;
    let tools: Vec<String> = (app.server_tools.as_ref())
        .and_then(|tools| tools.toolset().ok())
        .map(|set| {
            (set.registry.specs().iter())
                .map(|s| s.name.clone())
                .collect()
        })
        .unwrap_or_default();
    let mut agents: Vec<Value> = (app.manager.config().catalog.all())
        .filter(|a| !a.hidden && is_chat_agent(&app.manager, &a.name))
        .map(|a| {
            let tools = if a.enable_tools {
                tools.clone()
            } else {
                Vec::new()
            };
            json!({
                "name": a.name, "description": a.description, "model": upstream_of(a),
                "tools": tools,
            })
        })
        .collect();
    agents.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    ok(json!({ "agents": agents }))
}

pub async fn models(call: Admin) -> Answer {
    call.params(&[])?;
    let app = &call.app;
    let config = app.manager.config();
    // name -> context window (the first agent's that gives one)
    let mut names: BTreeMap<String, Option<u64>> = BTreeMap::new();
    for agent in (config.catalog.all()).filter(|a| is_chat_agent(&app.manager, &a.name)) {
        if let Some(name) = upstream_of(agent) {
            let window = names.entry(name).or_default();
            *window = window.or(agent.context_window);
        }
    }
    for name in app
        .settings
        .models
        .iter()
        .map(String::as_str)
        .chain(["local/default"])
    {
        names.entry(name.to_owned()).or_default();
    }
    let models: Vec<Value> = (names.iter())
        .map(|(name, window)| {
            let provider = split_provider_model(name).and_then(|(p, _)| config.providers.get(p));
            json!({
                "name": name,
                "upstream": provider.map(|p| p.url.clone()),
                "protocol": provider.map(|p| p.protocol.clone()),
                "context_window": window,
            })
        })
        .collect();
    ok(json!({ "models": models }))
}
