//! The `models` and `local` commands, and the command line's endpoint, target and notes in
//! qore-session's terms (reaching a model is [`qore_session::target`]'s).
//!
//! Promises: `--idle-timeout`/`--connect-timeout` (and `QORE_IDLE_TIMEOUT`) win over a
//! provider file's; notes from the session layer are printed on stderr unless `--quiet`; a
//! failure says what qore was doing when it happened.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use qore_client::local;
use qore_session::target::endpoint_client;
use qore_session::{EndpointSpec, Notes, TargetSpec};

use crate::console::{note, outln, stdout_closed, CLOSED_STDOUT};
use crate::output::Output;
use crate::{EndpointArgs, LocalAction, TargetArgs};

const FAILURE: u8 = 1;

/// Notes of the session layer, on stderr unless `--quiet`.
pub fn notes() -> Notes {
    Arc::new(|text: &str| {
        note!("{text}");
    })
}

/// The endpoint the arguments name.
pub fn endpoint_spec(args: &EndpointArgs) -> EndpointSpec {
    EndpointSpec {
        protocol: args.protocol.clone(),
        url: args.url.clone(),
        endpoint: args.endpoint.clone(),
        api_key_env: args.api_key_env.clone(),
        connect_timeout: args.connect_timeout,
        idle_timeout: args.idle_timeout,
    }
}

/// What the flags ask to reach: `target` on `endpoint`, for `project`. `probe_tools`: ask a
/// llama.cpp server whether its chat template takes tool definitions.
pub fn target_spec(
    endpoint: &EndpointArgs,
    target: &TargetArgs,
    project: Option<PathBuf>,
    probe_tools: bool,
) -> TargetSpec {
    TargetSpec {
        agent: target.agent.clone(),
        endpoint: endpoint_spec(endpoint),
        model: target.model.clone(),
        system: target.system.clone(),
        max_tokens: target.max_tokens,
        temperature: target.temperature,
        no_stream: target.no_stream,
        project,
        probe_tools,
    }
}

pub async fn models(args: EndpointArgs) -> ExitCode {
    let mut out = Output::new(args.json);
    let listed = async {
        let (client, _) = endpoint_client(&endpoint_spec(&args), &notes()).await?;
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
