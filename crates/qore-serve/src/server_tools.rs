//! Tools the server runs itself: the read-only built-ins over `[serve] root` and the MCP
//! servers of the config dir, each only when a `[serve] tools` pattern names it. Nobody is
//! there to confirm a call, so nothing else runs: a destructive built-in stays out even when
//! named, and the agent sees only the allowed tools.
//!
//! The one exception is `run_command`, because the operating-system sandbox confines it: it
//! joins only when a pattern is exactly `run_command` (a wildcard never lets commands in),
//! the front end gave the tools' options ([`ToolOptionsFor`]: qore-cli's `[sandbox]` and
//! `[tools]`), the policy is not `full-access` and this kernel can enforce it; otherwise a
//! warning says why it stays out. Every built-in gets those options (the file tools check
//! the same policy). More rights are never offered (`[sandbox] escalation` is `never`
//! here), and a call asking for them anyway is refused: the approver is [`NobodyAsked`],
//! and rights are only ever granted by a person.
//!
//! They are offered when the caller sends no tools of its own and the agent has
//! `enable_tools`: qore's tool loop runs the rounds (an ephemeral qore-session `Session`,
//! text or native protocol as the agent's model needs) and the caller sees the answer:
//! the text of every round, never the server's own calls. A request that carries the
//! caller's tools is answered with those alone (their calls go back to the caller).

use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::Stream;
use globset::{Glob, GlobSet, GlobSetBuilder};
use qore_client::tool_loop::{ApprovalMode, LoopEvent};
use qore_client::CancellationToken;
use qore_core::{
    ErrorInfo, Message, ResponseEvent, Role, StopReason, StreamOutcome, Tool, ToolSource, Usage,
};
use qore_session::{NobodyAsked, Session, SessionSetup, Target, ToolSet};
use qore_tools::{Escalation, SandboxMode, ToolOptions};
use tokio::sync::mpsc;

use crate::config::ServeSettings;
use crate::events::EventSource;
use crate::Inbound;

/// How a front end makes the built-in tools' options for a project root: `run_command`'s
/// allow-list and operating-system sandbox (qore-cli reads config.toml's `[tools]` and
/// `[sandbox]`).
pub type ToolOptionsFor = fn(&Path) -> Result<ToolOptions, ErrorInfo>;

const RUN_COMMAND: &str = "run_command";

/// The tools the config allows the server to run.
pub struct ServerTools {
    allowed: Arc<GlobSet>,
    root: Option<std::path::PathBuf>,
    mcp: Option<Arc<Allowed>>,
    /// The built-in tools' options (allow-list, sandbox).
    options: ToolOptions,
    /// `run_command` is offered (named exactly, and confined).
    commands: bool,
}

impl ServerTools {
    /// Start the allowed tools (MCP servers in parallel); `None` when `[serve] tools` names
    /// none. The warnings say what was left out and why.
    pub async fn start(
        settings: &ServeSettings,
        config_dir: Option<&Path>,
    ) -> (Option<ServerTools>, Vec<String>) {
        let mut warnings = Vec::new();
        if settings.tools.is_empty() {
            return (None, warnings);
        }
        let mut builder = GlobSetBuilder::new();
        for pattern in &settings.tools {
            match Glob::new(pattern) {
                Ok(glob) => {
                    builder.add(glob);
                }
                Err(err) => warnings.push(format!("[serve] tools: {pattern:?}: {err}")),
            }
        }
        let allowed = match builder.build() {
            Ok(set) => Arc::new(set),
            Err(err) => {
                warnings.push(format!("[serve] tools: {err}"));
                return (None, warnings);
            }
        };
        let (mcp, mcp_warnings) = qore_session::start_mcp(config_dir, None, false).await;
        warnings.extend(mcp_warnings);
        let mcp = Arc::new(Allowed {
            inner: mcp,
            allowed: allowed.clone(),
        });
        let (options, commands, why) = command_options(settings);
        warnings.extend(why);
        let tools = ServerTools {
            allowed,
            root: settings.root.clone(),
            mcp: Some(mcp),
            options,
            commands,
        };
        match tools.toolset() {
            Ok(set) if set.registry.specs().is_empty() => {
                warnings.push("[serve] tools names no tool the server has".into());
                (None, warnings)
            }
            Ok(_) => (Some(tools), warnings),
            Err(err) => {
                warnings.push(format!("[serve] tools: {}", err.message));
                (None, warnings)
            }
        }
    }

    /// A fresh tool set for one request: the allowed read-only built-ins, the allowed MCP
    /// tools, every call approved (the config allowed them).
    pub fn toolset(&self) -> Result<ToolSet, ErrorInfo> {
        let root = match &self.root {
            Some(root) => root.clone(),
            None => std::env::temp_dir().join("qore-serve-no-root"),
        };
        if self.root.is_none() {
            std::fs::create_dir_all(&root).map_err(|e| ErrorInfo::config(e.to_string()))?;
        }
        let mut set = ToolSet::builtin_with(
            &root,
            ApprovalMode::Auto,
            Box::new(NobodyAsked),
            Default::default(),
            true,
            self.options.clone(),
        )?;
        let confined = |tool: &Arc<dyn Tool>| self.commands && tool.spec().name == RUN_COMMAND;
        let builtins: Vec<Arc<dyn Tool>> = (set.registry.specs().iter())
            .filter_map(|spec| set.registry.get(&spec.name).map(|r| r.tool.clone()))
            .filter(|tool| self.root.is_some() && (!tool.destructive() || confined(tool)))
            .filter(|tool| self.allowed.is_match(&tool.spec().name))
            .collect();
        set.registry = qore_client::tool_loop::ToolRegistry::new();
        set.registry.extend(builtins)?;
        set.recorder = None;
        if let Some(mcp) = &self.mcp {
            for err in set.registry.add_source(mcp.clone()) {
                tracing::warn!("server tool left out: {}", err.message);
            }
        }
        Ok(set)
    }
}

/// The built-in tools' options for `settings.root`, whether `run_command` joins, and the
/// warning when it was named but stays out (see the module docs).
fn command_options(settings: &ServeSettings) -> (ToolOptions, bool, Option<String>) {
    let named = settings.tools.iter().any(|p| p == RUN_COMMAND);
    let left_out = |why: &str| named.then(|| format!("{RUN_COMMAND} left out: {why}"));
    let (Some(root), Some(make)) = (&settings.root, settings.tool_options) else {
        let why = "no [serve] root, or no sandbox policy to confine it";
        return (ToolOptions::default(), false, left_out(why));
    };
    let options = match make(root) {
        Ok(mut options) => {
            // Nobody is there to grant more rights: the model is not even offered to ask.
            if let Some(sandbox) = options.sandbox.as_mut() {
                sandbox.escalation = Escalation::Never;
            }
            options
        }
        Err(err) => {
            let why = format!("the tools' settings: {}", err.message);
            return (ToolOptions::default(), false, Some(why));
        }
    };
    if !named {
        return (options, false, None);
    }
    let refused = match &options.sandbox {
        None => Some("no sandbox policy confines it".to_owned()),
        Some(s) if s.mode == SandboxMode::FullAccess => Some(
            "[sandbox] mode is full-access, and nobody is there to approve unconfined commands"
                .to_owned(),
        ),
        Some(_) => unconfinable(),
    };
    match refused {
        None => (options, true, None),
        Some(why) => (options, false, left_out(&why)),
    }
}

/// Why this kernel cannot confine commands, if it cannot.
#[cfg(target_os = "linux")]
fn unconfinable() -> Option<String> {
    let support = qore_sandbox::probe();
    (!support.confines()).then(|| {
        format!(
            "this kernel cannot confine commands ({})",
            support.gaps().join("; ")
        )
    })
}

#[cfg(not(target_os = "linux"))]
fn unconfinable() -> Option<String> {
    Some("commands are confined on Linux only".to_owned())
}

/// An MCP tool source showing only the allowed tools.
struct Allowed {
    inner: Arc<qore_mcp::servers::McpTools>,
    allowed: Arc<GlobSet>,
}

impl ToolSource for Allowed {
    fn snapshot(&self) -> (u64, Vec<Arc<dyn Tool>>) {
        let (version, tools) = self.inner.snapshot();
        let tools = (tools.into_iter())
            .filter(|t| self.allowed.is_match(&t.spec().name))
            .collect();
        (version, tools)
    }

    fn version(&self) -> u64 {
        self.inner.version()
    }

    fn refetch(&self) -> Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        self.inner.refetch()
    }
}

/// Whether `inbound` to `target` is answered by the server's tool loop.
pub fn applies(tools: Option<&ServerTools>, target: &Target, inbound: &Inbound) -> bool {
    let last_is_prompt = (inbound.history.last()).is_some_and(|m| {
        m.role == Role::User
            && !(m.blocks.iter()).any(|b| matches!(b, qore_core::ContentBlock::ToolResult { .. }))
    });
    tools.is_some()
        && inbound.tools.is_empty()
        && last_is_prompt
        && target.agent.as_ref().is_some_and(|a| a.enable_tools)
}

enum Step {
    Event(ResponseEvent),
    End(StreamOutcome),
}

/// A turn run by the tool loop, read as events: the text and thinking of every round, one
/// start, the usage of all rounds, and the last answer's stop.
pub struct LoopTurn {
    steps: mpsc::UnboundedReceiver<Step>,
    outcome: Option<StreamOutcome>,
    _cancel: tokio_util::sync::DropGuard,
}

/// Run `inbound` through the tool loop on `target` with the server's tools.
pub fn run(
    tools: &ServerTools,
    target: &Target,
    inbound: &Inbound,
    cancel: &CancellationToken,
) -> Result<LoopTurn, ErrorInfo> {
    let mut setup = SessionSetup::new(target.clone());
    let mut history = Vec::new();
    for message in inbound.history.iter() {
        match message.role {
            Role::System => setup.layers.add(message.text()),
            _ => history.push(message.clone()),
        }
    }
    let Some(user) = history.pop() else {
        return Err(ErrorInfo::validation("no user message to answer"));
    };
    setup.tools = Some(tools.toolset()?);
    let notes = qore_session::traced_notes();
    let session = Session::new(None, None, history.into(), setup, &notes);
    let (send, steps) = mpsc::unbounded_channel();
    let token = cancel.clone();
    tokio::spawn(async move {
        let mut started = false;
        let events = send.clone();
        let outcome = session
            .send(user, &token, |event| {
                let LoopEvent::Response(event) = event else {
                    return;
                };
                let shown = match event {
                    ResponseEvent::MessageStart { .. } => !std::mem::replace(&mut started, true),
                    ResponseEvent::TextDelta { .. }
                    | ResponseEvent::ThinkingDelta { .. }
                    | ResponseEvent::ThinkingSignature { .. }
                    | ResponseEvent::RedactedThinking { .. } => true,
                    _ => false,
                };
                if shown {
                    let _ = events.send(Step::Event(event.clone()));
                }
            })
            .await;
        let answer = session.history().await.last().cloned();
        let _ = send.send(Step::End(outcome_of(outcome, answer)));
    });
    Ok(LoopTurn {
        steps,
        outcome: None,
        _cancel: cancel.clone().drop_guard(),
    })
}

fn outcome_of(outcome: qore_session::TurnOutcome, answer: Option<Message>) -> StreamOutcome {
    use qore_session::TurnOutcome as T;
    match outcome {
        T::Finished {
            stop_reason, usage, ..
        } => match answer.filter(|m| m.role == Role::Assistant) {
            Some(message) => StreamOutcome::Finished {
                message,
                stop_reason: stop_reason.or(Some(StopReason::EndTurn)),
                usage,
            },
            None => StreamOutcome::Failed {
                error: ErrorInfo::provider("the tool loop ended without an answer"),
                usage,
            },
        },
        T::Failed { error, usage, .. } => StreamOutcome::Failed { error, usage },
        T::Cancelled { usage, .. } => StreamOutcome::Cancelled { usage },
    }
}

impl Stream for LoopTurn {
    type Item = ResponseEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ResponseEvent>> {
        if self.outcome.is_some() {
            return Poll::Ready(None);
        }
        match self.steps.poll_recv(cx) {
            Poll::Ready(Some(Step::Event(event))) => Poll::Ready(Some(event)),
            Poll::Ready(Some(Step::End(outcome))) => {
                let usage = match &outcome {
                    StreamOutcome::Finished { usage, .. } => *usage,
                    _ => Usage::default(),
                };
                self.outcome = Some(outcome);
                match usage.is_empty() {
                    true => Poll::Ready(None),
                    false => Poll::Ready(Some(ResponseEvent::Usage { usage })),
                }
            }
            Poll::Ready(None) => {
                self.outcome = Some(StreamOutcome::Cancelled {
                    usage: Usage::default(),
                });
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl EventSource for LoopTurn {
    fn outcome(&self) -> Option<&StreamOutcome> {
        self.outcome.as_ref()
    }
}

/// [`run`], awaited to its first event like [`crate::upstream::open`].
pub async fn open(
    tools: &ServerTools,
    candidate: &crate::route::Candidate,
    inbound: &Inbound,
    cancel: &CancellationToken,
) -> Result<crate::upstream::Opened, crate::ServeError> {
    use futures_util::StreamExt as _;
    let started = std::time::Instant::now();
    let turn = run(tools, &candidate.target, inbound, cancel)
        .map_err(|err| crate::ServeError::from_upstream(&err))?;
    let wire = candidate.target.client.protocol().clone();
    let mut stream = crate::usage::Normalized::new(turn, wire);
    let first = stream.next().await;
    Ok(crate::upstream::Opened {
        stream: Box::new(stream),
        first,
        candidate: candidate.clone(),
        waited: started.elapsed(),
    })
}
