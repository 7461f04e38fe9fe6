//! The chat's conversation: the model it talks to, the session's history, and the store
//! that keeps it; one turn at a time.
//!
//! Promises: the history holds exactly what the store keeps (a cancelled or failed turn
//! without its partial answer: [`TurnRecord::checked_messages`]), so every request carries
//! the earlier turns and stays well-formed; each turn is appended to the store in one
//! transaction as it ends; the client is connected at the first turn after a start,
//! `/agent` or `/model`, so a change takes effect on the next message.

use std::path::PathBuf;
use std::time::SystemTime;

use qore_client::tool_loop::{
    ApprovalMode, ApprovalPolicy, LoopConfig, LoopOutcome, LoopStop, ToolLoopRunner, ToolProtocol,
    ToolRegistry,
};
use qore_client::{local, CancellationToken, RequestOptions};
use qore_core::{ErrorInfo, History, Message, StopReason, Usage};
use qore_store::{NewSession, SessionInfo, Store, StoreError, TurnRecord, TurnStatus};

use crate::approve::NobodyAsked;
use crate::connect::{connect_to_model, doing, Connected};
use crate::output::Output;
use crate::tools::ToolSession;
use crate::RunArgs;

/// How a turn ended.
pub enum Ended {
    Finished(Option<StopReason>),
    Failed(ErrorInfo),
    Cancelled,
}

/// A store failure as the engine's error.
pub fn stored(error: StoreError) -> ErrorInfo {
    ErrorInfo::config(format!("session store: {error}"))
}

pub struct Conversation {
    /// The flags, with `/agent` and `/model` applied.
    pub args: RunArgs,
    connected: Option<Connected>,
    tools: Option<ToolSession>,
    history: History,
    /// `None`: ephemeral.
    store: Option<Store>,
    /// The session's id (`None` when ephemeral).
    pub session: Option<String>,
    pub last_usage: Option<Usage>,
}

impl Conversation {
    pub fn new(args: RunArgs, tools: Option<ToolSession>, store: Option<Store>) -> Self {
        Conversation {
            args,
            connected: None,
            tools,
            history: History::new(),
            store,
            session: None,
            last_usage: None,
        }
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    pub fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    fn project(&self) -> Option<PathBuf> {
        (self.args.tools.project.clone()).or_else(|| std::env::current_dir().ok())
    }

    /// Start a new, empty session (named `name`); nothing is stored when ephemeral.
    pub fn start_new(&mut self, name: Option<String>) -> Result<(), ErrorInfo> {
        self.history = History::new();
        self.last_usage = None;
        let project = self.project();
        let (agent, model) = (self.args.agent.clone(), self.args.model.clone());
        let Some(store) = &mut self.store else {
            self.session = None;
            return Ok(());
        };
        let new = NewSession {
            name,
            project_dir: project,
            agent,
            model,
            parent_id: None,
        };
        self.session = Some(store.create_session(&new).map_err(stored)?);
        Ok(())
    }

    /// Continue the session `key` (id, unique id prefix or name).
    pub fn open(&mut self, key: &str) -> Result<SessionInfo, ErrorInfo> {
        let store = (self.store.as_ref())
            .ok_or_else(|| ErrorInfo::config("an ephemeral chat has no saved sessions"))?;
        let info = store.session(key).map_err(stored)?;
        self.history = store.history(&info.id).map_err(stored)?;
        self.last_usage = info.last_usage;
        self.session = Some(info.id.clone());
        Ok(info)
    }

    /// `--session KEY`: continue it, or start a session named KEY when nothing matches.
    pub fn open_or_name(&mut self, key: &str) -> Result<(), ErrorInfo> {
        match self.store.as_ref().map(|store| store.session(key)) {
            Some(Err(StoreError::NotFound(_))) => self.start_new(Some(key.to_owned())),
            _ => self.open(key).map(drop),
        }
    }

    /// Talk to another agent (`None`: none) or model from the next turn on.
    pub fn change(&mut self, agent: Option<String>, model: Option<String>) {
        if agent.is_some() {
            self.args.agent = agent;
            self.args.model = None;
        }
        if model.is_some() {
            self.args.model = model;
        }
        self.connected = None;
    }

    /// One turn: `text` sent with the history; streamed into `out`; kept and stored.
    pub async fn send(
        &mut self,
        text: String,
        out: &mut Output,
        cancel: &CancellationToken,
    ) -> Ended {
        let started_at = SystemTime::now();
        let user = Message::user(text);
        let (replies, usage, ended) = self.run_turn(user.clone(), out, cancel).await;
        self.last_usage = Some(usage);
        let record = TurnRecord {
            user,
            replies,
            usage,
            model: self.connected.as_ref().map(|c| c.model.clone()),
            agent: self.args.agent.clone(),
            started_at,
            finished_at: SystemTime::now(),
            status: match &ended {
                Ended::Finished(_) => TurnStatus::Finished,
                Ended::Failed(_) => TurnStatus::Failed,
                Ended::Cancelled => TurnStatus::Cancelled,
            },
        };
        match self.keep(&record) {
            Ok(()) => ended,
            Err(error) => Ended::Failed(error),
        }
    }

    /// Add the turn to the history and the store, as the store keeps it.
    fn keep(&mut self, record: &TurnRecord) -> Result<(), ErrorInfo> {
        let messages = record.checked_messages().map_err(stored)?;
        if let (Some(store), Some(session)) = (&mut self.store, &self.session) {
            store.append_turn(session, record).map_err(stored)?;
        }
        for message in messages {
            self.history.push(message.clone());
        }
        Ok(())
    }

    /// Connect if needed, then run the turn: the replies (assistant messages and tool
    /// results), the usage and how it ended.
    async fn run_turn(
        &mut self,
        user: Message,
        out: &mut Output,
        cancel: &CancellationToken,
    ) -> (Vec<Message>, Usage, Ended) {
        if self.connected.is_none() {
            let probe = self.tools.as_ref().is_some_and(|tools| tools.auto_protocol);
            let connected = tokio::select! {
                biased;
                connected = connect_to_model(&self.args, probe) => connected,
                () = cancel.cancelled() => return (Vec::new(), Usage::default(), Ended::Cancelled),
            };
            match connected {
                Ok(connected) => self.connected = Some(connected),
                Err(error) => return (Vec::new(), Usage::default(), Ended::Failed(error)),
            }
        }
        let Some(connected) = &self.connected else {
            return (Vec::new(), Usage::default(), Ended::Cancelled);
        };
        let agent = connected.agent.as_ref();
        let mut sent = History::new();
        let system = match agent {
            Some(agent) => agent.system.clone(),
            None => self.args.system.clone(),
        };
        if let Some(system) = system {
            sent.push(Message::system(system));
        }
        for message in self.history.iter() {
            sent.push(message.clone());
        }
        sent.push(user);
        let opened = sent.len();
        let options = RequestOptions {
            stream: agent.map_or(!self.args.no_stream, |agent| agent.stream),
            max_tokens: local::max_tokens(self.args.max_tokens, connected.local),
            temperature: self.args.temperature,
            ..RequestOptions::default()
        };
        // Without tools: the loop with none offered (one request).
        let mut no_policy = ApprovalPolicy::new(ApprovalMode::ReadOnly);
        let no_tools = ToolRegistry::new();
        let mut runner = match &mut self.tools {
            Some(tools) if agent.map_or(true, |agent| agent.enable_tools) => {
                let text =
                    agent.is_some_and(|agent| agent.text_tools) || connected.tools == Some(false);
                if tools.auto_protocol && text {
                    tools.config.tool_protocol = ToolProtocol::Text;
                }
                ToolLoopRunner {
                    client: &connected.client,
                    registry: &tools.registry,
                    policy: &mut tools.policy,
                    approver: tools.approver.as_ref(),
                    config: tools.config,
                }
            }
            _ => ToolLoopRunner {
                client: &connected.client,
                registry: &no_tools,
                policy: &mut no_policy,
                approver: &NobodyAsked,
                config: LoopConfig::default(),
            },
        };
        let model = &connected.model;
        let outcome = (runner.run(model, &mut sent, &options, cancel, |e| out.loop_event(e))).await;
        let replies = sent.messages()[opened..].to_vec();
        let url = || connected.client.chat_url(&connected.model, options.stream);
        let (usage, ended) = match outcome {
            LoopOutcome::Finished {
                usage, stop_reason, ..
            } => (usage, Ended::Finished(stop_reason)),
            LoopOutcome::Cancelled { usage, .. } => (usage, Ended::Cancelled),
            LoopOutcome::Failed { error, usage, .. } => (
                usage,
                Ended::Failed(doing(&format!("talking to {}", url()), error)),
            ),
            LoopOutcome::Stopped { reason, usage, .. } => (
                usage,
                Ended::Failed(ErrorInfo::config(stop_message(&reason))),
            ),
        };
        (replies, usage, ended)
    }
}

/// Why the tool loop stopped, as an error line.
fn stop_message(reason: &LoopStop) -> String {
    match reason {
        LoopStop::RepeatedCall { tool, times } => {
            format!(
                "stopped: the model called {tool} with the same arguments {times} times in a row"
            )
        }
        LoopStop::RoundLimit { rounds } => {
            format!("stopped: the model still called tools after {rounds} rounds (--max-rounds)")
        }
    }
}
