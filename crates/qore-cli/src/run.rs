//! The `run` command: the prompt, the tools and their approver, one turn or the tool loop,
//! and what is printed; connecting is [`crate::connect`]'s.
//!
//! Promises: a closed stdout cancels the run and exits with [`CLOSED_STDOUT`], printing
//! nothing more; a network failure says whether qore was connecting or reading the answer.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use futures_util::StreamExt as _;
use qore_client::tool_loop::{
    ApprovalMode, LoopEvent, ToolLoopRunner, ToolProtocol as LoopProtocol, TurnOutcome,
};
use qore_client::{local, CancellationToken, ChatRequest, Client, RequestOptions};
use qore_core::{ErrorCategory, ErrorInfo, History, Message, ResponseEvent, StreamOutcome, Usage};

use crate::connect::{connect_to_model, doing, Connected};
use crate::console::{self, note, CLOSED_STDOUT};
use crate::output::Output;
use crate::prompt::{self, Sources};
use crate::tools::{approval_mode, tool_session, ToolSession};
use crate::RunArgs;

const FAILURE: u8 = 1;
const CANCELLED: u8 = 130;

enum Ended {
    Finished,
    Stopped,
    Cancelled,
}

pub async fn run(args: RunArgs) -> ExitCode {
    let json = args.endpoint.json;
    // Someone can be asked: stdin to answer, stderr to show the question.
    let stdin_terminal = std::io::stdin().is_terminal();
    let interactive = stdin_terminal && std::io::stderr().is_terminal();
    let mode = approval_mode(&args.tools, json, interactive);
    let sources = Sources {
        words: &args.prompt,
        file: args.file.as_deref(),
        piped: !stdin_terminal,
        for_answers: json && mode == Some(ApprovalMode::Confirm),
    };
    let prompt = match prompt::assemble(&sources, prompt::read_stdin) {
        Ok(prompt) => prompt,
        Err(message) => crate::usage_error(message),
    };
    // After the prompt is read: until then, Ctrl-C ends the process as usual.
    let cancel = cancel_on_ctrl_c();
    console::cancel_on_closed_stdout(&cancel);
    let tools = match tool_session(&args.tools, mode, json) {
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
    let ended = run_turns(&args, prompt, tools, &mut out, &cancel).await;
    if console::stdout_closed() {
        return ExitCode::from(CLOSED_STDOUT);
    }
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

async fn run_turns(
    args: &RunArgs,
    prompt: String,
    tools: Option<ToolSession>,
    out: &mut Output,
    cancel: &CancellationToken,
) -> Result<Ended, ErrorInfo> {
    // Ctrl-C before a stream exists (starting the local server, listing models); from then
    // on the stream and the tool loop end on the token themselves.
    let probe_tools = tools.as_ref().is_some_and(|tools| tools.auto_protocol);
    let Connected {
        client,
        model,
        tools: tool_calling,
        agent,
        local,
    } = tokio::select! {
        biased;
        connected = connect_to_model(args, probe_tools) => connected?,
        () = cancel.cancelled() => return Ok(Ended::Cancelled),
    };
    let mut history = History::new();
    let mut tools = tools;
    let mut stream = !args.no_stream;
    let mut system = args.system.clone();
    if let Some(agent) = &agent {
        system = agent.system.clone();
        if !agent.enable_tools && tools.is_some() {
            note!("qore: the agent does not use tools (enable_tools = false): none offered");
            tools = None;
        }
        if let Some(tools) = &mut tools {
            if agent.text_tools && tools.auto_protocol {
                tools.config.tool_protocol = LoopProtocol::Text;
                tools.auto_protocol = false;
            }
        }
        stream = agent.stream;
    }
    if let Some(system) = system {
        history.push(Message::system(system));
    }
    history.push(Message::user(prompt));
    let options = RequestOptions {
        stream,
        max_tokens: local::max_tokens(args.max_tokens, local),
        temperature: args.temperature,
        ..RequestOptions::default()
    };
    let mut heard = false;
    let ended = match tools {
        None => one_turn(&client, &model, history, &options, out, cancel, &mut heard).await,
        Some(mut tools) => {
            if tools.auto_protocol && tool_calling == Some(false) {
                note!(
                    "qore: the server says {model} has no tool calling: tools are described in \
                     the prompt (--tool-protocol text)"
                );
                tools.config.tool_protocol = LoopProtocol::Text;
            }
            tool_loop(
                &client, &model, history, &options, tools, out, cancel, &mut heard,
            )
            .await
        }
    };
    ended.map_err(|error| match error.category {
        ErrorCategory::Network => {
            let url = client.chat_url(&model, stream);
            match heard {
                true => doing(&format!("reading the answer from {url}"), error),
                false => doing(&format!("connecting to {url}"), error),
            }
        }
        _ => error,
    })
}

/// Turns with tools until the model answers without calling any.
#[allow(clippy::too_many_arguments)]
async fn tool_loop(
    client: &Client,
    model: &str,
    mut history: History,
    options: &RequestOptions,
    mut tools: ToolSession,
    out: &mut Output,
    cancel: &CancellationToken,
    heard: &mut bool,
) -> Result<Ended, ErrorInfo> {
    let mut runner = ToolLoopRunner {
        client,
        registry: &tools.registry,
        policy: &mut tools.policy,
        approver: tools.approver.as_ref(),
        config: tools.config,
    };
    let outcome = runner
        .run(model, &mut history, options, cancel, |event| {
            *heard |= !matches!(event, LoopEvent::Response(ResponseEvent::Error { .. }));
            out.loop_event(event)
        })
        .await;
    match outcome {
        TurnOutcome::Finished {
            stop_reason, usage, ..
        } => {
            finished(out, &history, &usage, stop_reason.as_ref());
            Ok(Ended::Finished)
        }
        TurnOutcome::Failed {
            limit: Some(reason),
            usage,
            ..
        } => {
            out.stopped(&reason, &history, &usage);
            Ok(Ended::Stopped)
        }
        TurnOutcome::Failed { error, .. } => Err(error),
        TurnOutcome::Cancelled { .. } => Ok(Ended::Cancelled),
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
    heard: &mut bool,
) -> Result<Ended, ErrorInfo> {
    let request = ChatRequest {
        model,
        history: &history,
        tools: &[],
        options,
    };
    let mut stream = client.stream(&request, cancel.clone());
    while let Some(event) = stream.next().await {
        *heard |= !matches!(event, ResponseEvent::Error { .. });
        out.event(&event);
    }
    match stream.finish().await {
        StreamOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => {
            history.push(message);
            finished(out, &history, &usage, stop_reason.as_ref());
            Ok(Ended::Finished)
        }
        StreamOutcome::Failed { error, .. } => Err(error),
        StreamOutcome::Cancelled { .. } => Ok(Ended::Cancelled),
    }
}
