//! From arguments to a ready client: the endpoint (or the local model server, started when
//! needed) or the agent, the model, the timeouts; and the `models` and `local` commands.
//!
//! Promises: `--idle-timeout`/`--connect-timeout` (and `QORE_IDLE_TIMEOUT`) win over a
//! provider file's; requests to the local model server carry an output cap
//! ([`local::DEFAULT_MAX_TOKENS`]) unless `--max-tokens` says otherwise, and its chat
//! template's tool support (`/props`) is reported for `--tool-protocol auto`; a failure says
//! what qore was doing when it happened.

use std::process::ExitCode;

use qore_client::protocols::llamacpp;
use qore_client::{local, protocols, Client, ClientConfig, ModelInfo, Timeouts};
use qore_core::ErrorInfo;

use crate::agent_run::{agent_run, AgentRun};
use crate::console::{note, outln, stdout_closed, CLOSED_STDOUT};
use crate::output::Output;
use crate::{EndpointArgs, LocalAction, RunArgs};

const FAILURE: u8 = 1;

/// A client ready for the run.
pub struct Connected {
    pub client: Client,
    pub model: String,
    /// The model's tool calling as the server tells (its listing, or the local server's
    /// chat template); `None`: not said or not asked.
    pub tools: Option<bool>,
    pub agent: Option<AgentRun>,
    /// The local model server.
    pub local: bool,
}

/// `error` with what qore was doing in front of its message.
pub fn doing(what: &str, mut error: ErrorInfo) -> ErrorInfo {
    error.message = format!("{what}: {}", error.message);
    error
}

/// The timeouts of `base` with the command line's on top.
pub fn timeouts(args: &EndpointArgs, base: Timeouts) -> Timeouts {
    Timeouts {
        connect: args.connect_timeout.unwrap_or(base.connect),
        idle: args.idle_timeout.unwrap_or(base.idle),
    }
}

/// The client, the model to use and what the server says about tools, or the agent (with
/// `--agent`). `probe_tools`: ask a llama.cpp server whether its chat template takes tool
/// definitions (only when the answer matters: tools on, `--tool-protocol auto`).
pub async fn connect_to_model(args: &RunArgs, probe_tools: bool) -> Result<Connected, ErrorInfo> {
    if let Some(name) = &args.agent {
        let project = match &args.tools.project {
            Some(dir) => Some(dir.clone()),
            None => std::env::current_dir().ok(),
        };
        let run = agent_run(name, args, project.as_deref()).await?;
        let tools = match probe_tools && run.local {
            true => llamacpp::supports_tools(&run.client).await,
            false => None,
        };
        return Ok(Connected {
            client: run.client.clone(),
            model: run.model.clone(),
            tools,
            local: run.local,
            agent: Some(run),
        });
    }
    let (client, local) = connect(&args.endpoint).await?;
    let (model, mut tools) = match (&args.model, local) {
        (Some(model), _) => (model.clone(), None),
        (None, true) => (local::MODEL_ID.to_owned(), None),
        (None, false) => {
            let listed = only_model(&client).await?;
            (listed.id, listed.capabilities.tools)
        }
    };
    if probe_tools && (local || client.protocol().name() == llamacpp::NAME) {
        tools = tools.or(llamacpp::supports_tools(&client).await);
    }
    Ok(Connected {
        client,
        model,
        tools,
        agent: None,
        local,
    })
}

pub async fn models(args: EndpointArgs) -> ExitCode {
    let mut out = Output::new(args.json);
    let listed = async {
        let (client, _) = connect(&args).await?;
        client.list_models().await
    };
    match listed.await {
        Ok(models) => {
            out.models(&models);
            match stdout_closed() {
                true => ExitCode::from(CLOSED_STDOUT),
                false => ExitCode::SUCCESS,
            }
        }
        Err(error) => {
            out.error(&error);
            ExitCode::from(FAILURE)
        }
    }
}

pub async fn local(action: LocalAction) -> ExitCode {
    let result = match action {
        LocalAction::Start => local::ensure_running().await.map(|url| {
            outln!("{url}");
        }),
        LocalAction::Stop => local::stop().await,
        LocalAction::Status => {
            if local::is_running().await {
                outln!("running at {}", local::base_url());
                Ok(())
            } else {
                outln!("not running");
                return ExitCode::from(FAILURE);
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            Output::new(false).error(&error);
            ExitCode::from(FAILURE)
        }
    }
}

/// A client for the endpoint the arguments name; `true` when it is the local model server.
async fn connect(args: &EndpointArgs) -> Result<(Client, bool), ErrorInfo> {
    let protocol = protocols::by_name(&args.protocol).ok_or_else(|| {
        ErrorInfo::config(format!(
            "unknown protocol {:?} (known: {})",
            args.protocol,
            protocols::NAMES.join(", ")
        ))
    })?;
    let api_key = match &args.api_key_env {
        Some(var) => Some(std::env::var(var).map_err(|_| {
            ErrorInfo::config(format!(
                "environment variable {var} (from --api-key-env) is not set"
            ))
        })?),
        None => None,
    };
    let (base_url, is_local) = match &args.url {
        Some(url) => (url.clone(), false),
        None => {
            let base = local::base_url_for(protocol.name()).ok_or_else(|| {
                ErrorInfo::config(format!(
                    "--url is required with --protocol {}: the local model server does not speak it",
                    args.protocol
                ))
            })?;
            note!(
                "qore: no --url given: using the local model server at {base} ({}), starting it if needed",
                local::MODEL_ID
            );
            (local::ensure_running().await)
                .map_err(|e| doing("starting the local model server", e))?;
            (base, true)
        }
    };
    let config = ClientConfig {
        base_url,
        endpoint: args.endpoint.clone(),
        api_key,
        timeouts: timeouts(args, Timeouts::default()),
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
