//! The `run` command: the prompt, the tools and their approver, the session it runs in
//! (qore-session runs the turn), and what is printed.
//!
//! Promises: a closed stdout cancels the run and exits with [`CLOSED_STDOUT`], printing
//! nothing more; a network failure says whether qore was connecting or reading the answer;
//! the run is saved as a session in the store (`--store`, else the data dir's file) unless
//! `--ephemeral` (a store that cannot be opened is a warning for a new session, an error for
//! `--session` and `--continue`);
//! with `--json` a saved run prints `{"type": "session", "id"}` first; `@path` mentions in
//! the prompt's arguments attach their files as in chat, and a refused one sends nothing.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;

use qore_client::tool_loop::ApprovalMode;
use qore_client::CancellationToken;
use qore_core::{ErrorInfo, History, Message, StopReason, Usage};
use qore_session::compress::Compressed;
use qore_session::target::project_dir;
use qore_session::tokens::whole_prompt;
use qore_session::{
    Opening, Session, SessionError, SessionManager, SessionSetup, ToolSet, TurnOutcome,
};
use qore_store::NewSession;
use serde_json::json;

use crate::chat::attach_words;
use crate::chat::status::{self, Status};
use crate::chat::timing::Clock;
use crate::connect::{notes, target_spec};
use crate::console::{self, note, CLOSED_STDOUT};
use crate::output::{json_line, Output};
use crate::prompt::{self, Sources};
use crate::tools::{approval_mode, mcp_tools, tool_set};
use crate::RunArgs;

const FAILURE: u8 = 1;
const CANCELLED: u8 = 130;

enum Ended {
    Finished,
    Stopped,
    Cancelled,
}

pub async fn run(args: RunArgs, store: Option<&str>) -> ExitCode {
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
    let project = crate::tools::project_dir(&args.tools).ok();
    let prompt = match attach_words(prompt, &args.prompt, project.as_deref()) {
        Ok(prompt) => prompt,
        Err(error) => {
            Output::new(json).error(&error);
            return ExitCode::from(FAILURE);
        }
    };
    // After the prompt is read: until then, Ctrl-C ends the process as usual.
    let cancel = cancel_on_ctrl_c();
    console::cancel_on_closed_stdout(&cancel);
    let mcp = tokio::select! {
        mcp = mcp_tools(&args.tools, mode, interactive) => mcp,
        () = cancel.cancelled() => return ExitCode::from(CANCELLED),
    };
    let agent = args.target.agent.as_deref();
    let tools = match tool_set(&args.tools, agent, mode, json, mcp.as_ref()) {
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
    let ended = run_turn(&args, store, prompt, tools, &mut out, &cancel).await;
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
pub(crate) fn cancel_on_ctrl_c() -> CancellationToken {
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

/// The session manager: the store at `location` (else the data dir's), or none
/// (`--ephemeral`; or a store that cannot be opened, for a new session: a warning).
async fn manager(args: &RunArgs, location: Option<&str>) -> Result<SessionManager, ErrorInfo> {
    let store = match args.ephemeral {
        true => None,
        false => match crate::store::open(location).await {
            Ok(store) => Some(store),
            Err(error) if args.session.is_none() && !args.continue_session => {
                note!("qore: warning: this run is not saved as a session: {error}");
                None
            }
            Err(error) => return Err(ErrorInfo::config(error)),
        },
    };
    Ok(SessionManager::new(store, crate::agents::load(), notes()))
}

/// The session of this run: continued (`--session`, `--continue`) or new.
async fn session(
    manager: &SessionManager,
    args: &RunArgs,
    setup: SessionSetup,
    project: Option<PathBuf>,
) -> Result<Session, SessionError> {
    let new = NewSession {
        project_dir: project.clone(),
        agent: args.target.agent.clone(),
        model: Some(setup.target.model.clone()),
        ..NewSession::default()
    };
    let opening = match (&args.session, args.continue_session) {
        (Some(key), _) => Opening::Named(key),
        (None, true) => Opening::Latest,
        (None, false) => Opening::New,
    };
    manager.start(opening, &new, setup).await
}

async fn run_turn(
    args: &RunArgs,
    store: Option<&str>,
    prompt: String,
    tools: Option<ToolSet>,
    out: &mut Output,
    cancel: &CancellationToken,
) -> Result<Ended, ErrorInfo> {
    let manager = manager(args, store).await?;
    let probe_tools = tools.as_ref().is_some_and(|tools| tools.auto_protocol);
    let project = args.tools.project.clone();
    let spec = target_spec(&args.endpoint, &args.target, project, probe_tools);
    // Ctrl-C before a stream exists (starting the local server, listing models); from then
    // on the stream and the tool loop end on the token themselves.
    let target = tokio::select! {
        biased;
        target = manager.reach(&spec) => target?,
        () = cancel.cancelled() => return Ok(Ended::Cancelled),
    };
    let project = project_dir(&spec);
    let (model, pricing, protocol) = (
        target.model.clone(),
        status::pricing(manager.config(), &target),
        target.client.protocol().clone(),
    );
    let mut setup = SessionSetup::new(target);
    if let Some(project) = &project {
        setup.layers = setup.layers.with_project_rules(project)?;
    }
    if let Some(tools) = &tools {
        tools.extend_layers(&mut setup.layers);
    }
    setup.tools = tools;
    let session =
        (session(&manager, args, setup, project).await).map_err(SessionError::into_info)?;
    let json = args.endpoint.json;
    if let (true, Some(id)) = (json, session.id()) {
        json_line(&json!({"type": "session", "id": id}));
    }
    session.on_compressed(move |done| announce_compressed(json, done));
    let user = Message::user(prompt);
    let mut clock = Clock::start();
    let outcome = session
        .send(user, cancel, |event| {
            clock.saw(&event);
            out.loop_event(event)
        })
        .await;
    let conversation = session.conversation().await;
    match outcome {
        TurnOutcome::Finished {
            stop_reason, usage, ..
        } => {
            finished(out, &conversation, &usage, stop_reason.as_ref());
            if status::shown_in_run(json) {
                let context = session.token_use_known().await;
                let timing = clock.stop();
                let model = model.as_str();
                status::print(&Status {
                    model,
                    usage: &whole_prompt(&usage, &*protocol),
                    timing,
                    context: &context,
                    pricing,
                });
            }
            Ok(Ended::Finished)
        }
        TurnOutcome::Failed {
            limit: Some(limit),
            usage,
            ..
        } => {
            out.stopped(&limit, &conversation, &usage);
            Ok(Ended::Stopped)
        }
        TurnOutcome::Failed { error, .. } => Err(error),
        TurnOutcome::Cancelled { .. } => Ok(Ended::Cancelled),
    }
}

/// The final answer: the last message's text.
/// A session going on in the session it was compressed into: `{"type": "session", "id",
/// "compressed_from"}` with `json`, else a note (`run` and `chat` both say it).
pub(crate) fn announce_compressed(json: bool, done: &Compressed) {
    match json {
        true => json_line(&json!({"type": "session", "id": done.session_id,
                                  "compressed_from": done.parent_id})),
        false => note!(
            "qore: session {} compressed into {} (the original stays)",
            done.parent_id,
            done.session_id
        ),
    }
}

fn finished(out: &mut Output, history: &History, usage: &Usage, stop_reason: Option<&StopReason>) {
    let text = history.last().map(Message::text).unwrap_or_default();
    out.result(&text, history, usage, stop_reason);
}
