//! Reaching a model: from a [`TargetSpec`] (an agent of the catalog, or an endpoint) to a
//! ready [`Target`]: the client, the model, what the server says about tool calling, and
//! the agent's settings.
//!
//! Promises:
//! - any concrete agent of the catalog that can chat is reached (the rosters of
//!   `pipelines.toml` choose defaults, they do not forbid); one whose `[body]` reads the
//!   prefix/suffix and not the history (a fill-in-the-middle body) is refused for chat by
//!   name. What the body reads decides ([`BodyReads`]), never the `completion` tag;
//! - [`reach_completer`] reaches any concrete agent a completion can be asked of: one whose
//!   body reads the prefix/suffix (asked by fill-in-the-middle) or the history (asked by
//!   chat); one that reads neither is refused by name;
//! - `model` wins over the persisted override and the profile; `system` replaces the
//!   agent's system prompt; `max_tokens`, `temperature` and `no_stream` are written into the
//!   agent's request ([`request_overrides::apply`]) or refused; the spec's timeouts win over
//!   the provider file's;
//! - without an agent: the endpoint's URL, else the local model server (started when needed),
//!   and the model named, else the local model, else the server's only model; a request to
//!   the local server gets its sampling (`qore_client::local::sampling`);
//! - what the server's `/props` says ([`ServerRules`]: asked of the local server, and of a
//!   llama.cpp one with `probe_tools`) sets the output cap (unless the spec or the agent's
//!   `[body]` sets one), the tool calling and, when the profile says none, the context
//!   window; the local server is started when the provider is at its address;
//! - notes for the user (the profile's typos, the local server being used) go to the
//!   [`Notes`] sink, never to a terminal directly; a failure says what was being done.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use qore_agents::body_reads::BodyReads;
use qore_agents::config::Config;
use qore_agents::profile::ToolProtocolSetting;
use qore_agents::request_overrides::{self, RequestOverrides};
use qore_client::protocols;
use qore_client::{local, Client, ClientConfig, ModelInfo, RequestOptions, Timeouts};
use qore_core::ErrorInfo;

pub use crate::project::{project_dir, resolve_project};
use crate::server_rules::ServerRules;

/// Where notes for the user go (the CLI prints them on stderr).
pub type Notes = Arc<dyn Fn(&str) + Send + Sync>;

/// Notes to `tracing` at info level.
pub fn traced_notes() -> Notes {
    Arc::new(|note: &str| tracing::info!("{note}"))
}

/// An endpoint: where the provider is, without an agent.
#[derive(Debug, Clone, Default)]
pub struct EndpointSpec {
    /// Wire protocol name (`openai-chat`, `anthropic`, …).
    pub protocol: String,
    /// Base URL; `None`: the local model server.
    pub url: Option<String>,
    /// Request path override.
    pub endpoint: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// The connect timeout (`None`: the default).
    pub connect_timeout: Option<Duration>,
    /// The longest silence allowed while the answer streams (`None`: the default).
    pub idle_timeout: Option<Duration>,
}

/// What to reach: an agent, or an endpoint, with overrides on top.
#[derive(Debug, Clone, Default)]
pub struct TargetSpec {
    /// An agent of the catalog; when set, `endpoint` gives only the timeouts.
    pub agent: Option<String>,
    /// Where to send requests when no agent is named (and the timeouts when one is).
    pub endpoint: EndpointSpec,
    /// The model (`None`: the agent's, else the server's only one).
    pub model: Option<String>,
    /// Instead of the agent's system prompt.
    pub system: Option<String>,
    /// `--max-tokens`.
    pub max_tokens: Option<u32>,
    /// `--temperature`.
    pub temperature: Option<f64>,
    /// `--no-stream`: ask for the answer in one body.
    pub no_stream: bool,
    /// The project (system prompt building blocks, rules); `None`: the current directory.
    pub project: Option<PathBuf>,
    /// Ask a llama.cpp server whether its chat template takes tool definitions.
    pub probe_tools: bool,
}

/// An agent's settings that shape a session.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSettings {
    /// The agent's name.
    pub name: String,
    /// The rendered system prompt (or the spec's `system`).
    pub system: Option<String>,
    /// Whether the agent offers tools.
    pub enable_tools: bool,
    /// Whether tools go in the prompt as text (`tool_protocol = "text"`).
    pub text_tools: bool,
    /// Whether the agent streams its answers.
    pub stream: bool,
    /// What the agent's `[body]` reads: a completion is asked of it by fill-in-the-middle
    /// when it reads `ctx.prefix`/`ctx.suffix` ([`BodyReads::fills`]), else by chat.
    pub reads: BodyReads,
}

/// A model, reached.
#[derive(Clone)]
pub struct Target {
    /// The client, bound to the agent's renderer when there is one.
    pub client: Client,
    /// The model asked.
    pub model: String,
    /// The model's tool calling as the server tells (its listing, or the local server's
    /// chat template); `None`: not said or not asked.
    pub tool_calling: Option<bool>,
    /// The agent's settings, when the target is an agent.
    pub agent: Option<AgentSettings>,
    /// The local model server.
    pub local: bool,
    /// The request options a turn uses (streaming, the output cap, temperature).
    pub options: RequestOptions,
    /// The system prompt given without an agent (`TargetSpec::system`).
    pub system: Option<String>,
    /// The model's context window as the agent's profile sets it (`context_window`), else
    /// as the server says it (`/props`, when asked); `None`: only the model listing can say.
    pub context_window: Option<u64>,
}

impl Target {
    /// A target over a client built by the caller (tests, embedders): no agent.
    pub fn new(client: Client, model: impl Into<String>) -> Target {
        Target {
            client,
            model: model.into(),
            tool_calling: None,
            agent: None,
            local: false,
            options: RequestOptions {
                stream: true,
                ..RequestOptions::default()
            },
            system: None,
            context_window: None,
        }
    }
}

/// `error` with what qore was doing in front of its message.
pub fn doing(what: &str, mut error: ErrorInfo) -> ErrorInfo {
    error.message = format!("{what}: {}", error.message);
    error
}

/// `base` with the spec's timeouts on top.
pub fn timeouts(spec: &EndpointSpec, base: Timeouts) -> Timeouts {
    Timeouts {
        connect: spec.connect_timeout.unwrap_or(base.connect),
        idle: spec.idle_timeout.unwrap_or(base.idle),
    }
}

/// Reach the model `spec` names, with `config` (the agent catalog and providers).
pub async fn reach(config: &Config, spec: &TargetSpec, notes: &Notes) -> Result<Target, ErrorInfo> {
    reach_as(config, spec, notes, false).await
}

/// [`reach`], where the agent may also be a code-completion one (`qore complete`).
pub async fn reach_completer(
    config: &Config,
    spec: &TargetSpec,
    notes: &Notes,
) -> Result<Target, ErrorInfo> {
    reach_as(config, spec, notes, true).await
}

async fn reach_as(
    config: &Config,
    spec: &TargetSpec,
    notes: &Notes,
    completer: bool,
) -> Result<Target, ErrorInfo> {
    let options = |stream: bool, rules: &ServerRules| RequestOptions {
        stream,
        max_tokens: rules.max_tokens(spec.max_tokens),
        temperature: spec.temperature,
        ..RequestOptions::default()
    };
    if let Some(name) = &spec.agent {
        let project = project_dir(spec);
        let (client, settings, model, rules, local) =
            reach_agent(config, name, spec, project.as_deref(), notes, completer).await?;
        return Ok(Target {
            client,
            model,
            tool_calling: rules.tools.filter(|_| spec.probe_tools),
            local,
            options: options(settings.stream, &rules),
            agent: Some(settings),
            system: None,
            context_window: rules.context_window,
        });
    }
    let (client, local) = endpoint_client(&spec.endpoint, notes).await?;
    let (model, mut tool_calling) = match (&spec.model, local) {
        (Some(model), _) => (model.clone(), None),
        (None, true) => (local::MODEL_ID.to_owned(), None),
        (None, false) => {
            let listed = only_model(&client).await?;
            (listed.id, listed.capabilities.tools)
        }
    };
    let rules = ServerRules::of(&client, local, spec.probe_tools).await;
    if spec.probe_tools {
        tool_calling = tool_calling.or(rules.tools);
    }
    let mut options = options(!spec.no_stream, &rules);
    if local {
        options.merge_extra(local::sampling());
    }
    Ok(Target {
        client,
        model,
        tool_calling,
        agent: None,
        local,
        options,
        system: spec.system.clone(),
        context_window: rules.context_window,
    })
}

async fn reach_agent(
    config: &Config,
    name: &str,
    spec: &TargetSpec,
    project: Option<&Path>,
    notes: &Notes,
    completer: bool,
) -> Result<(Client, AgentSettings, String, ServerRules, bool), ErrorInfo> {
    let resolved = config.resolve(name, spec.model.as_deref())?;
    let agent = &resolved.renderer.agent;
    // The profile's typos, once: those of the files this agent is made of.
    for warning in (config.catalog.warnings.iter()).filter(|w| agent.sources.contains(&w.file)) {
        notes(&format!("qore: warning: {warning}"));
    }
    let reads = agent.reads;
    if !completer && !reads.chats() {
        return Err(ErrorInfo::config(format!(
            "agent {name:?} is a code-completion agent (its [body] fills in the middle from \
             ctx.prefix/ctx.suffix and reads no ctx.history), not a chat agent; \
             `qore agents list` shows the chat ones"
        )));
    }
    if completer && reads.completion_style().is_none() {
        return Err(ErrorInfo::config(format!(
            "agent {name:?} cannot complete code: its [body] reads neither ctx.prefix/ctx.suffix \
             (fill in the middle) nor ctx.history (chat)"
        )));
    }
    // The local server is started when the provider is at its address; what it allows is
    // what it says, as for any server.
    let local = resolved.provider.url == local::base_url();
    if local {
        (local::ensure_running().await).map_err(|e| doing("starting the local model server", e))?;
    }
    // Only a server that will be asked needs a client now: building one resolves the API key,
    // and a request the agent cannot carry is refused below before any key is wanted.
    let asked_too = local || spec.probe_tools && resolved.renderer.protocol.server_props();
    let mut rules = match asked_too {
        true => {
            let asked = Client::new(
                resolved.renderer.protocol.clone(),
                resolved.provider.client_config(None)?,
            )?;
            ServerRules::of(&asked, local, spec.probe_tools).await
        }
        false => ServerRules::default(),
    };
    // The window the target goes by: the profile's `context_window` over the server's.
    rules.context_window = agent.context_window.or(rules.context_window);
    let system = match &spec.system {
        Some(system) => Some(system.clone()),
        None => config.system_prompt(agent, project)?,
    };
    // A server's default cap is for a request with none: a profile's own wins.
    let caps = (agent.body.as_ref()).is_some_and(request_overrides::caps_tokens);
    let overrides = RequestOverrides {
        max_tokens: match caps {
            true => spec.max_tokens,
            false => rules.max_tokens(spec.max_tokens),
        },
        temperature: spec.temperature,
        stream: spec.no_stream.then_some(false),
    };
    let renderer = match request_overrides::apply(&resolved.renderer, &overrides, &config.partials)?
    {
        Some(changed) => Arc::new(changed),
        None => resolved.renderer.clone(),
    };
    let mut client_config = resolved.provider.client_config(renderer.endpoint.clone())?;
    client_config.timeouts = timeouts(&spec.endpoint, client_config.timeouts);
    let mut client = Client::new(renderer.protocol.clone(), client_config)?;
    if renderer.is_templated() {
        client = client.with_renderer(renderer.clone());
    }
    let settings = AgentSettings {
        name: name.to_owned(),
        system,
        enable_tools: renderer.agent.enable_tools,
        text_tools: renderer.agent.tool_protocol == ToolProtocolSetting::Text,
        stream: overrides.stream.unwrap_or(renderer.streams()),
        reads,
    };
    Ok((client, settings, renderer.model.clone(), rules, local))
}

/// A client for the endpoint `spec` names; `true` when it is the local model server.
pub async fn endpoint_client(
    spec: &EndpointSpec,
    notes: &Notes,
) -> Result<(Client, bool), ErrorInfo> {
    let protocol = protocols::by_name(&spec.protocol).ok_or_else(|| {
        ErrorInfo::config(format!(
            "unknown protocol {:?} (known: {})",
            spec.protocol,
            protocols::NAMES.join(", ")
        ))
    })?;
    let api_key = match &spec.api_key_env {
        Some(var) => Some(std::env::var(var).map_err(|_| {
            ErrorInfo::config(format!(
                "environment variable {var} (from --api-key-env) is not set"
            ))
        })?),
        None => None,
    };
    let (base_url, is_local) = match &spec.url {
        Some(url) => (url.clone(), false),
        None => {
            let base = local::base_url_for(protocol.name()).ok_or_else(|| {
                ErrorInfo::config(format!(
                    "--url is required with --protocol {}: the local model server does not speak it",
                    spec.protocol
                ))
            })?;
            notes(&format!(
                "qore: no --url given: using the local model server at {base} ({}), starting it if needed",
                local::MODEL_ID
            ));
            (local::ensure_running().await)
                .map_err(|e| doing("starting the local model server", e))?;
            (base, true)
        }
    };
    let config = ClientConfig {
        base_url,
        endpoint: spec.endpoint.clone(),
        api_key,
        timeouts: timeouts(spec, Timeouts::default()),
        ..ClientConfig::default()
    };
    Ok((Client::new(protocol, config)?, is_local))
}

/// The model to use when none was named: the server's only one.
async fn only_model(client: &Client) -> Result<ModelInfo, ErrorInfo> {
    let mut models = client.list_models().await?;
    match models.as_mut_slice() {
        [one] => Ok(std::mem::take(one)),
        [] => Err(ErrorInfo::config(
            "the server lists no models; pass --model",
        )),
        many => Err(ErrorInfo::config(format!(
            "the server lists {} models ({}...); pass --model",
            many.len(),
            many.iter()
                .take(3)
                .map(|m| m.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

#[cfg(test)]
#[path = "target_tests.rs"]
mod tests;
