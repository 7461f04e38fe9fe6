//! The chat's conversation: one qore-session [`Session`] at a time, and what the chat's
//! commands change about it (a new session, another stored one, another agent or model).
//!
//! Promises: the session does the turn work (history, one request in flight, sanitizing,
//! saving each turn); a session started here records the project, agent and model; `/agent`
//! and `/model` reach the new model first and keep the old one when that fails, then go on
//! with the same session (its id, history, token calibration and automatic compression)
//! from the next message; every session gets fresh tools and the project's rules, and an
//! "always" approval lasts for the session, for that tool, whatever rebuilds its tools
//! (`/agent`, `/model`, `/compress`, `/undo`; not `/new` or `/switch`, which change the
//! session), listed and revoked through [`Conversation::approvals`]; `/tokens` and `/compress` are the session's own
//! ([`Session::token_use`], [`SessionManager::compress`]), and every session the chat is on
//! tells the chat's compression callback when it continues in a compressed session.

use std::path::PathBuf;

use qore_agents::pricing::Pricing;
use qore_client::tool_loop::SessionApprovals;
use qore_client::{CancellationToken, Protocol};
use qore_core::{ErrorInfo, History, Message, Usage};
use qore_session::auto_compress::OnCompressed;
use qore_session::compress::Compressed;
use qore_session::target::project_dir;
use qore_session::tokens::TokenUse;
use qore_session::transcript::{self, ExportFormat};
use qore_session::undo::{undo_last_turn, UndoReport};
use qore_session::{
    Compressing, Layers, Opening, Session, SessionError, SessionManager, SessionSetup, SharedStore,
    Target, TargetSpec, ToolSet, TurnOutcome,
};
use qore_store::{NewSession, SessionInfo};

use super::timing::{Clock, Timing};
use crate::output::Output;

/// Builds the tools of each new session (`None`: no tools).
pub type MakeTools = Box<dyn Fn() -> Result<Option<ToolSet>, ErrorInfo> + Send + Sync>;

fn info(error: SessionError) -> ErrorInfo {
    error.into_info()
}

pub struct Conversation {
    manager: SessionManager,
    spec: TargetSpec,
    target: Target,
    session: Session,
    tools: MakeTools,
    /// The session's "always" approvals, shared by each set of tools it is given.
    approvals: SessionApprovals,
    /// Told when the session continues in the session it was compressed into.
    on_compressed: OnCompressed,
    /// The usage the provider reported for the last turn.
    pub last_usage: Option<Usage>,
    /// When the last turn's first token came, and how long it took.
    pub last_timing: Timing,
}

impl Conversation {
    /// Reach the model `spec` names and open the session `opening` says; `on_compressed`
    /// is told whenever the session goes on in the session it was compressed into.
    pub async fn start(
        manager: SessionManager,
        spec: TargetSpec,
        tools: MakeTools,
        opening: Opening<'_>,
        on_compressed: OnCompressed,
    ) -> Result<Conversation, ErrorInfo> {
        let target = manager.reach(&spec).await?;
        let approvals = SessionApprovals::default();
        let setup = setup(&spec, &target, &tools, &approvals)?;
        let new = new_session(&spec, &target);
        let session = manager.start(opening, &new, setup).await.map_err(info)?;
        listen(&session, &on_compressed);
        let last_usage = match session.id() {
            Some(id) => (manager.find(id).await.ok()).and_then(|found| found.last_usage),
            None => None,
        };
        Ok(Conversation {
            manager,
            spec,
            target,
            session,
            tools,
            approvals,
            on_compressed,
            last_usage,
            last_timing: Timing::default(),
        })
    }

    /// The session's id (`None` when ephemeral).
    pub fn id(&self) -> Option<&str> {
        self.session.id()
    }

    pub async fn history(&self) -> History {
        self.session.history().await
    }

    /// The store (`None` when ephemeral).
    pub fn store(&self) -> Option<&SharedStore> {
        self.manager.store()
    }

    /// The project the sessions belong to.
    pub fn project(&self) -> Option<PathBuf> {
        project_dir(&self.spec)
    }

    /// The model the turns go to.
    pub fn model(&self) -> &str {
        &self.target.model
    }

    /// The wire the conversation speaks (its usage's sense, see `status`).
    pub fn protocol(&self) -> &dyn Protocol {
        &**self.target.client.protocol()
    }

    /// The agent's prices (`[pricing]` in its profile), when it has them.
    pub fn pricing(&self) -> Option<Pricing> {
        super::status::pricing(self.manager.config(), &self.target)
    }

    /// The session's "always" approvals.
    pub fn approvals(&self) -> &SessionApprovals {
        &self.approvals
    }

    /// Start a new, empty session with the current model.
    pub async fn start_new(&mut self) -> Result<(), ErrorInfo> {
        let approvals = SessionApprovals::default();
        let setup = setup(&self.spec, &self.target, &self.tools, &approvals)?;
        let new = new_session(&self.spec, &self.target);
        self.adopt(self.manager.create(&new, setup).await.map_err(info)?);
        self.approvals = approvals;
        self.last_usage = None;
        Ok(())
    }

    /// Continue the stored session `key` names (id, unique id prefix or name).
    pub async fn switch(&mut self, key: &str) -> Result<SessionInfo, ErrorInfo> {
        let found = self.manager.find(key).await.map_err(info)?;
        let approvals = SessionApprovals::default();
        let setup = setup(&self.spec, &self.target, &self.tools, &approvals)?;
        self.adopt(self.manager.open(&found.id, setup).await.map_err(info)?);
        self.approvals = approvals;
        self.last_usage = found.last_usage;
        Ok(found)
    }

    /// Undo the session's last turn that is not undone: the files its tools changed are put
    /// back, and the turn leaves the history (the session is reloaded from the store).
    pub async fn undo(&mut self) -> Result<UndoReport, ErrorInfo> {
        let (Some(id), Some(store)) = (self.session.id(), self.manager.store()) else {
            return Err(ErrorInfo::config(
                "an ephemeral chat keeps no turns to undo",
            ));
        };
        let id = id.to_owned();
        let project = (self.project())
            .ok_or_else(|| ErrorInfo::config("no project directory to restore files in"))?;
        let undone = undo_last_turn(store.as_ref(), &id, &project).await;
        let report = undone.map_err(|error| ErrorInfo::config(error.to_string()))?;
        let setup = setup(&self.spec, &self.target, &self.tools, &self.approvals)?;
        self.adopt(self.manager.open(&id, setup).await.map_err(info)?);
        Ok(report)
    }

    /// [`Conversation::token_use`] without asking the server for the window.
    pub async fn token_use_known(&self) -> TokenUse {
        self.session.token_use_known().await
    }

    /// How much of the context window the session takes ([`Session::token_use`]).
    pub async fn token_use(&self) -> TokenUse {
        self.session.token_use().await
    }

    /// The session written out (qore's JSON or Markdown), as `qore sessions export` does.
    pub async fn export(&self, format: ExportFormat) -> Result<String, ErrorInfo> {
        let (Some(id), Some(store)) = (self.session.id(), self.manager.store()) else {
            return Err(ErrorInfo::config(
                "an ephemeral chat is not saved: nothing to export",
            ));
        };
        (transcript::export(store.as_ref(), id, format).await).map_err(|error| info(error.into()))
    }

    /// Summarise the older turns with the compression roster's first agent into a new
    /// session (the original stays as it is) and go on in the new one; the chat's
    /// compression callback is told.
    pub async fn compress(&mut self, cancel: &CancellationToken) -> Result<Compressed, ErrorInfo> {
        let compressing = Compressing::Open(&self.session);
        (self.manager.compress(compressing, None, cancel).await).map_err(info)
    }

    /// Talk to `agent` (its own model unless `model`) or to `model` from the next message
    /// on, in the same session. Returns the model now used.
    pub async fn change(
        &mut self,
        agent: Option<String>,
        model: Option<String>,
    ) -> Result<String, ErrorInfo> {
        let mut spec = self.spec.clone();
        if agent.is_some() {
            spec.agent = agent;
        }
        spec.model = model;
        let target = self.manager.reach(&spec).await?;
        let setup = setup(&spec, &target, &self.tools, &self.approvals)?;
        self.session.set_setup(setup, self.manager.notes()).await;
        let model = target.model.clone();
        (self.spec, self.target) = (spec, target);
        Ok(model)
    }

    /// One turn: `text` sent with the history, its events printed by `out` as they come.
    pub async fn send(
        &mut self,
        text: String,
        out: &mut Output,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let user = Message::user(text);
        let mut clock = Clock::start();
        let outcome = (self.session)
            .send(user, cancel, |event| {
                clock.saw(&event);
                out.loop_event(event)
            })
            .await;
        self.last_usage = Some(outcome.usage());
        self.last_timing = clock.stop();
        outcome
    }

    /// Go on in `session` (the one before is released), its compressions told to the chat.
    fn adopt(&mut self, session: Session) {
        listen(&session, &self.on_compressed);
        let before = std::mem::replace(&mut self.session, session);
        self.manager.release(before);
    }
}

/// Tell `on_compressed` when `session` goes on in the session it was compressed into.
fn listen(session: &Session, on_compressed: &OnCompressed) {
    let on_compressed = on_compressed.clone();
    session.on_compressed(move |done| on_compressed(done));
}

/// A session's setup: the target, the agent's prompt and the project's rules, fresh tools
/// remembering their "always" approvals in `approvals`.
fn setup(
    spec: &TargetSpec,
    target: &Target,
    tools: &MakeTools,
    approvals: &SessionApprovals,
) -> Result<SessionSetup, ErrorInfo> {
    let mut setup = SessionSetup::new(target.clone());
    if let Some(project) = project_dir(spec) {
        setup.layers = Layers::with_project_rules(setup.layers, &project)?;
    }
    setup.tools = tools()?;
    if let Some(tools) = &mut setup.tools {
        tools.policy = std::mem::take(&mut tools.policy).remembering(approvals.clone());
        tools.extend_layers(&mut setup.layers);
    }
    Ok(setup)
}

fn new_session(spec: &TargetSpec, target: &Target) -> NewSession {
    NewSession {
        name: None,
        project_dir: project_dir(spec),
        agent: spec.agent.clone(),
        model: Some(target.model.clone()),
        parent_id: None,
    }
}
