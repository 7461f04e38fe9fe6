//! The `run`, `models` and `local` commands: wiring arguments to the engine.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use futures_util::StreamExt as _;
use qore_client::tool_loop::{
    ApprovalMode, ApprovalPolicy, Approver, LoopConfig, LoopOutcome, ToolLoopRunner,
    ToolProtocol as LoopProtocol, ToolRegistry,
};
use qore_client::{
    local, protocols, CancellationToken, ChatRequest, Client, ClientConfig, ModelCapabilities,
    ModelInfo, RequestOptions,
};
use qore_core::{ErrorInfo, History, Message, TurnOutcome, Usage};
use qore_tools::{builtin_tools, Sandbox, ToolOptions};

use crate::agents::{agent_run, AgentRun};
use crate::approve::{JsonApprover, NobodyAsked, TerminalApprover};
use crate::output::Output;
use crate::{EndpointArgs, LocalAction, RunArgs, ToolArgs, ToolProtocol, ToolsMode};

const FAILURE: u8 = 1;
const CANCELLED: u8 = 130;

enum Ended {
    Finished,
    Stopped,
    Cancelled,
}

/// The tools of a run, their policy and whoever approves them.
struct ToolSession {
    registry: ToolRegistry,
    policy: ApprovalPolicy,
    approver: Box<dyn Approver>,
    config: LoopConfig,
    /// `--tool-protocol auto`: the model's listed capabilities may choose text.
    auto_protocol: bool,
}

pub async fn run(args: RunArgs) -> ExitCode {
    let json = args.endpoint.json;
    let cancel = cancel_on_ctrl_c();
    // Someone can be asked: stdin to answer, stderr to show the question.
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let tools = match tool_session(&args.tools, json, interactive) {
        Ok(tools) => tools,
        Err(error) => {
            Output::new(json).error(&error);
            return ExitCode::from(FAILURE);
        }
    };
    let mut out = match tools {
        Some(_) => Output::new(json).with_tools(),
        None => Output::new(json),
    };
    let ended = run_turns(&args, tools, &mut out, &cancel).await;
    match ended {
        Ok(Ended::Finished) => ExitCode::SUCCESS,
        Ok(Ended::Stopped) => ExitCode::from(FAILURE),
        Ok(Ended::Cancelled) => {
            out.cancelled();
            ExitCode::from(CANCELLED)
        }
        Err(error) => {
            out.error(&error);
            ExitCode::from(FAILURE)
        }
    }
}

/// The tool mode the arguments ask for, given whether stdin and stderr are a terminal (see
/// `--tools` in `qore run --help`); `None` when no tools are offered.
fn approval_mode(args: &ToolArgs, json: bool, interactive: bool) -> Option<ApprovalMode> {
    let asked = match args.tools {
        Some(mode) => mode,
        None if args.yes => ToolsMode::Auto,
        None if interactive => ToolsMode::Confirm,
        None => ToolsMode::Off,
    };
    Some(match asked {
        ToolsMode::Off => return None,
        ToolsMode::ReadOnly => ApprovalMode::ReadOnly,
        ToolsMode::Auto => ApprovalMode::Auto,
        ToolsMode::Confirm if args.yes => ApprovalMode::Auto,
        ToolsMode::Confirm if json || interactive => ApprovalMode::Confirm,
        ToolsMode::Confirm => {
            eprintln!(
                "qore: no terminal to ask on, so tool calls cannot be confirmed: tools are \
                 read-only (--yes runs every call, --json answers approval requests on stdin)"
            );
            ApprovalMode::ReadOnly
        }
    })
}

/// The built-in tools over the project, or `None` for `--tools off`.
fn tool_session(
    args: &ToolArgs,
    json: bool,
    interactive: bool,
) -> Result<Option<ToolSession>, ErrorInfo> {
    let Some(mode) = approval_mode(args, json, interactive) else {
        return Ok(None);
    };
    let project = match &args.project {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|err| {
            ErrorInfo::config(format!(
                "the current directory cannot be used as the project: {err}; pass --project"
            ))
        })?,
    };
    let sandbox = Sandbox::new(&project)
        .map_err(|err| ErrorInfo::config(format!("--project {}: {err}", project.display())))?;
    let mut registry = ToolRegistry::new();
    registry.extend(builtin_tools(sandbox, &ToolOptions::default()))?;
    let approver: Box<dyn Approver> = match mode {
        ApprovalMode::Confirm if json => Box::<JsonApprover>::default(),
        ApprovalMode::Confirm => Box::<TerminalApprover>::default(),
        ApprovalMode::Auto | ApprovalMode::ReadOnly => Box::new(NobodyAsked),
    };
    Ok(Some(ToolSession {
        registry,
        policy: ApprovalPolicy::new(mode),
        approver,
        config: LoopConfig {
            max_rounds: args.max_rounds,
            tool_protocol: match args.tool_protocol {
                ToolProtocol::Text => LoopProtocol::Text,
                ToolProtocol::Native | ToolProtocol::Auto => LoopProtocol::Native,
            },
            ..LoopConfig::default()
        },
        auto_protocol: args.tool_protocol == ToolProtocol::Auto,
    }))
}

/// A token cancelled by Ctrl-C. The handler is registered before this returns, so no
/// Ctrl-C is missed while the stream is being set up.
fn cancel_on_ctrl_c() -> CancellationToken {
    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut interrupts) = signal(SignalKind::interrupt()) {
            tokio::spawn(async move {
                if interrupts.recv().await.is_some() {
                    on_ctrl_c.cancel();
                }
            });
            return cancel;
        }
    }
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    cancel
}

/// The client, the model to use, what its listing says it can do (when it was listed), and
/// the agent (with `--agent`).
async fn connect_to_model(args: &RunArgs) -> Result<Connected, ErrorInfo> {
    if let Some(name) = &args.agent {
        let project = match &args.tools.project {
            Some(dir) => Some(dir.clone()),
            None => std::env::current_dir().ok(),
        };
        let run = agent_run(name, args.model.as_deref(), project.as_deref()).await?;
        return Ok((run.client.clone(), run.model.clone(), None, Some(run)));
    }
    let (client, is_local) = connect(&args.endpoint).await?;
    Ok(match (&args.model, is_local) {
        (Some(model), _) => (client, model.clone(), None, None),
        (None, true) => (client, local::MODEL_ID.to_owned(), None, None),
        (None, false) => {
            let listed = only_model(&client).await?;
            (client, listed.id, Some(listed.capabilities), None)
        }
    })
}

type Connected = (Client, String, Option<ModelCapabilities>, Option<AgentRun>);

async fn run_turns(
    args: &RunArgs,
    tools: Option<ToolSession>,
    out: &mut Output,
    cancel: &CancellationToken,
) -> Result<Ended, ErrorInfo> {
    // Ctrl-C before a stream exists (starting the local server, listing models); from then
    // on the stream and the tool loop end on the token themselves.
    let (client, model, capabilities, agent) = tokio::select! {
        biased;
        connected = connect_to_model(args) => connected?,
        () = cancel.cancelled() => return Ok(Ended::Cancelled),
    };
    let mut history = History::new();
    let mut tools = tools;
    let mut stream = !args.no_stream;
    if let Some(agent) = &agent {
        if let Some(system) = &agent.system {
            history.push(Message::system(system.as_str()));
        }
        if !agent.enable_tools && tools.is_some() {
            eprintln!("qore: the agent does not use tools (enable_tools = false): none offered");
            tools = None;
        }
        if let Some(tools) = &mut tools {
            if agent.text_tools && tools.auto_protocol {
                tools.config.tool_protocol = LoopProtocol::Text;
            }
        }
        stream = agent.stream;
    }
    if let Some(system) = &args.system {
        history.push(Message::system(system.as_str()));
    }
    history.push(Message::user(args.prompt.join(" ")));
    let options = RequestOptions {
        stream,
        max_tokens: args.max_tokens,
        temperature: args.temperature,
        ..RequestOptions::default()
    };
    match tools {
        None => one_turn(&client, &model, history, &options, out, cancel).await,
        Some(mut tools) => {
            if let (true, Some(capabilities)) = (tools.auto_protocol, &capabilities) {
                tools.config.tool_protocol = LoopProtocol::for_model(capabilities);
            }
            let mut runner = ToolLoopRunner {
                client: &client,
                registry: &tools.registry,
                policy: &mut tools.policy,
                approver: tools.approver.as_ref(),
                config: tools.config,
            };
            let outcome = runner
                .run(&model, &mut history, &options, cancel, |event| {
                    out.loop_event(event)
                })
                .await;
            match outcome {
                LoopOutcome::Finished {
                    stop_reason, usage, ..
                } => {
                    finished(out, &history, &usage, stop_reason.as_ref());
                    Ok(Ended::Finished)
                }
                LoopOutcome::Stopped { reason, usage, .. } => {
                    out.stopped(&reason, &history, &usage);
                    Ok(Ended::Stopped)
                }
                LoopOutcome::Failed { error, .. } => Err(error),
                LoopOutcome::Cancelled { .. } => Ok(Ended::Cancelled),
            }
        }
    }
}

/// The final answer: the last message's text.
fn finished(
    out: &mut Output,
    history: &History,
    usage: &Usage,
    stop_reason: Option<&qore_core::StopReason>,
) {
    let text = history.last().map(Message::text).unwrap_or_default();
    out.result(&text, history, usage, stop_reason);
}

/// One turn, no tools offered.
async fn one_turn(
    client: &Client,
    model: &str,
    mut history: History,
    options: &RequestOptions,
    out: &mut Output,
    cancel: &CancellationToken,
) -> Result<Ended, ErrorInfo> {
    let request = ChatRequest {
        model,
        history: &history,
        tools: &[],
        options,
    };
    let mut stream = client.stream(&request, cancel.clone());
    while let Some(event) = stream.next().await {
        out.event(&event);
    }
    match stream.finish().await {
        TurnOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => {
            history.push(message);
            finished(out, &history, &usage, stop_reason.as_ref());
            Ok(Ended::Finished)
        }
        TurnOutcome::Failed { error, .. } => Err(error),
        TurnOutcome::Cancelled { .. } => Ok(Ended::Cancelled),
    }
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
            ExitCode::SUCCESS
        }
        Err(error) => {
            out.error(&error);
            ExitCode::from(FAILURE)
        }
    }
}

pub async fn local(action: LocalAction) -> ExitCode {
    let result = match action {
        LocalAction::Start => local::ensure_running().await.map(|url| println!("{url}")),
        LocalAction::Stop => local::stop().await,
        LocalAction::Status => {
            if local::is_running().await {
                println!("running at {}", local::base_url());
                Ok(())
            } else {
                println!("not running");
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
            eprintln!(
                "qore: no --url given: using the local model server at {base} ({}), starting it if needed",
                local::MODEL_ID
            );
            local::ensure_running().await?;
            (base, true)
        }
    };
    let config = ClientConfig {
        base_url,
        endpoint: args.endpoint.clone(),
        api_key,
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
mod tests {
    use super::*;

    fn mode(
        tools: Option<ToolsMode>,
        yes: bool,
        json: bool,
        interactive: bool,
    ) -> Option<ApprovalMode> {
        let args = ToolArgs {
            tools,
            tool_protocol: ToolProtocol::Native,
            max_rounds: 25,
            project: None,
            yes,
        };
        approval_mode(&args, json, interactive)
    }

    #[test]
    fn the_tool_mode_follows_the_flags_and_the_terminal() {
        use ApprovalMode::{Auto, Confirm, ReadOnly};
        use ToolsMode as T;
        // Defaults: confirm on a terminal, off for scripts; --yes alone is auto.
        assert_eq!(mode(None, false, false, true), Some(Confirm));
        assert_eq!(mode(None, false, true, true), Some(Confirm));
        assert_eq!(mode(None, false, false, false), None);
        assert_eq!(mode(None, false, true, false), None);
        assert_eq!(mode(None, true, false, false), Some(Auto));
        // Explicit modes.
        assert_eq!(mode(Some(T::Off), false, false, true), None);
        assert_eq!(mode(Some(T::ReadOnly), false, false, true), Some(ReadOnly));
        assert_eq!(mode(Some(T::Auto), false, false, false), Some(Auto));
        // Confirm needs someone to ask: the terminal or a JSON peer; else read-only, or
        // auto with --yes.
        assert_eq!(mode(Some(T::Confirm), false, false, true), Some(Confirm));
        assert_eq!(mode(Some(T::Confirm), false, true, false), Some(Confirm));
        assert_eq!(mode(Some(T::Confirm), false, false, false), Some(ReadOnly));
        assert_eq!(mode(Some(T::Confirm), true, false, false), Some(Auto));
        assert_eq!(mode(Some(T::Confirm), true, true, true), Some(Auto));
    }
}
