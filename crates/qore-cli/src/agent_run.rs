//! What `qore run --agent NAME` runs with: the agent resolved (its provider, model, system
//! prompt and body) with the run's flags on top.
//!
//! Promises: any concrete chat agent of the catalog runs (the rosters of `pipelines.toml`
//! choose defaults, they do not forbid); `--model` wins over the persisted override and the
//! profile; `--system` replaces the agent's system prompt; `--max-tokens`, `--temperature`
//! and `--no-stream` are written into the request ([`qore_agents::request_overrides::apply`]) or refused;
//! `--idle-timeout`/`--connect-timeout` win over the provider file; the unknown keys
//! (typos) of the agent's profile files are warned about once, on stderr.

use std::path::Path;
use std::sync::Arc;

use qore_agents::profile::ToolProtocolSetting;
use qore_agents::request_overrides::{self, RequestOverrides};
use qore_client::{local, Client};
use qore_core::ErrorInfo;

use crate::agents::load;
use crate::connect::{doing, timeouts};
use crate::console::note;
use crate::RunArgs;

/// What `qore run --agent NAME` runs with.
pub struct AgentRun {
    pub client: Client,
    pub model: String,
    pub system: Option<String>,
    pub enable_tools: bool,
    pub text_tools: bool,
    pub stream: bool,
    /// The agent's provider is the local model server.
    pub local: bool,
}

/// Resolve `name` for a run in `project` (system prompt building blocks) with `args`.
pub async fn agent_run(
    name: &str,
    args: &RunArgs,
    project: Option<&Path>,
) -> Result<AgentRun, ErrorInfo> {
    let config = load();
    let resolved = config.resolve(name, args.model.as_deref())?;
    let agent = &resolved.renderer.agent;
    // The profile's typos, once: those of the files this agent is made of.
    for warning in (config.catalog.warnings.iter()).filter(|w| agent.sources.contains(&w.file)) {
        note!("qore: warning: {warning}");
    }
    if agent.tags.iter().any(|t| t == "completion") {
        return Err(ErrorInfo::config(format!(
            "agent {name:?} is a code-completion agent (fill-in-the-middle), not a chat agent; \
             `qore agents list` shows the chat ones"
        )));
    }
    let local = resolved.provider.name == "local";
    if local {
        (local::ensure_running().await).map_err(|e| doing("starting the local model server", e))?;
    }
    let system = match &args.system {
        Some(system) => Some(system.clone()),
        None => config.system_prompt(agent, project)?,
    };
    let overrides = RequestOverrides {
        max_tokens: local::max_tokens(args.max_tokens, local),
        temperature: args.temperature,
        stream: args.no_stream.then_some(false),
    };
    let renderer = match request_overrides::apply(&resolved.renderer, &overrides, &config.partials)?
    {
        Some(changed) => Arc::new(changed),
        None => resolved.renderer.clone(),
    };
    let mut client_config = resolved.provider.client_config(renderer.endpoint.clone())?;
    client_config.timeouts = timeouts(&args.endpoint, client_config.timeouts);
    let mut client = Client::new(renderer.protocol.clone(), client_config)?;
    if renderer.is_templated() {
        client = client.with_renderer(renderer.clone());
    }
    Ok(AgentRun {
        client,
        model: renderer.model.clone(),
        system,
        enable_tools: renderer.agent.enable_tools,
        text_tools: renderer.agent.tool_protocol == ToolProtocolSetting::Text,
        stream: overrides.stream.unwrap_or(renderer.streams()),
        local,
    })
}
