//! The language server: its state and the LSP methods tower-lsp-server dispatches to it.
//!
//! Promises:
//! - `initialize` takes the workspace roots (`workspaceFolders`, else `rootUri`) and the
//!   settings (defaults, then `config.toml`'s refactor actions, then `initializationOptions`),
//!   and advertises incremental sync, completion, inline completion (`inlineCompletionProvider:
//!   {}`), code actions and the `qore.refactor` command; warnings about settings are shown
//!   (`window/showMessage` Warning) once the client is initialized;
//! - `workspace/didChangeConfiguration` merges its settings (see [`crate::settings`]);
//!   `workspace/didChangeWorkspaceFolders` moves the roots whose ignore rules apply (to
//!   documents opened afterwards);
//! - documents may change incrementally or by full text (a change without a range), both
//!   under the advertised incremental sync;
//! - document sync keeps [`Documents`] in step; whether a document is ignored is decided at open;
//! - handlers never panic on what the client sends; state locks are never held across an
//!   await.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use qore_client::RetryPolicy;
use qore_session::{SessionManager, Target};
use serde_json::Value;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::documents::Documents;
use crate::feedback::Feedback;
use crate::ignored::Roots;
use crate::inflight::Inflight;
use crate::lock::lock;
use crate::settings::{actions_from_config, Settings};

/// The command a quick-refactor code action runs.
pub const REFACTOR_COMMAND: &str = "qore.refactor";
/// The command an inline completion item carries, which the editor runs when the item is
/// accepted whole (copilot.vim and copilot.el run it; nothing else tells them apart).
pub const ACCEPTED_COMMAND: &str = "qore.completionAccepted";

/// What the server runs on, given by its front end.
pub struct Setup {
    /// Reaches agents (the CLI's config).
    pub manager: SessionManager,
    /// The config dir, for `config.toml`'s `[[refactor.actions]]`.
    pub config_dir: Option<PathBuf>,
}

/// Which roster a target serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Job {
    Completion,
    Refactor,
}

/// A reached target's key: the job, the agent setting and (for a routed agent) the file.
type TargetKey = (Job, Option<String>, Option<PathBuf>);

/// The server's state.
pub struct Backend {
    pub(crate) client: Client,
    pub(crate) manager: SessionManager,
    config_dir: Option<PathBuf>,
    pub(crate) documents: Mutex<Documents>,
    pub(crate) settings: Mutex<Settings>,
    roots: Mutex<Roots>,
    pending_warnings: Mutex<Vec<String>>,
    pub(crate) inflight: Inflight,
    /// What the editor said became of the completions (Copilot's protocol).
    pub(crate) feedback: Feedback,
    /// Reached targets by job, agent setting and (for a routed agent) file.
    targets: Mutex<HashMap<TargetKey, Target>>,
}

/// The file path of `uri`, or the URI's text as a path for other schemes.
pub(crate) fn path_of(uri: &Uri) -> PathBuf {
    match uri.to_file_path() {
        Some(path) => path.into_owned(),
        None => PathBuf::from(uri.as_str()),
    }
}

impl Backend {
    pub fn new(client: Client, setup: Setup) -> Backend {
        Backend {
            client,
            manager: setup.manager,
            config_dir: setup.config_dir,
            documents: Mutex::default(),
            settings: Mutex::default(),
            roots: Mutex::default(),
            pending_warnings: Mutex::default(),
            inflight: Inflight::default(),
            feedback: Feedback::default(),
            targets: Mutex::default(),
        }
    }

    /// A copy of the current settings.
    pub(crate) fn settings(&self) -> Settings {
        lock(&self.settings).clone()
    }

    async fn warn(&self, warnings: Vec<String>) {
        for warning in warnings {
            self.client
                .show_message(MessageType::WARNING, warning)
                .await;
        }
    }

    /// The target for `job` at `file`: the setting's agent, else the roster routed by file.
    /// Reached once per key, then reused until the settings change; files routed to the same
    /// agent share one target (and so one connection pool).
    pub(crate) async fn target(
        &self,
        job: Job,
        agent: Option<String>,
        file: &Path,
    ) -> std::result::Result<Target, qore_core::ErrorInfo> {
        let routed = agent.is_none().then(|| file.to_path_buf());
        let key = (job, agent.clone(), routed);
        if let Some(target) = lock(&self.targets).get(&key) {
            return Ok(target.clone());
        }
        let spec = qore_session::TargetSpec {
            agent,
            ..Default::default()
        };
        let target = match job {
            // A completion is not retried: the editor's next keystroke asks again, sooner
            // than a backoff would.
            Job::Completion => {
                let mut target = self.manager.reach_completer_for(&spec, file).await?;
                target.client = target.client.with_retry(RetryPolicy::none());
                target
            }
            Job::Refactor => self.manager.reach_refactorer_for(&spec, file).await?,
        };
        let name = target.agent.as_ref().map(|a| a.name.clone());
        let mut targets = lock(&self.targets);
        let shared = (targets.get(&(job, name.clone(), None)).cloned()).unwrap_or(target);
        targets.insert((job, name, None), shared.clone());
        targets.insert(key, shared.clone());
        Ok(shared)
    }
}

/// What the server offers.
fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        completion_provider: Some(CompletionOptions::default()),
        inline_completion_provider: Some(OneOf::Right(InlineCompletionOptions::default())),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::REFACTOR_REWRITE]),
            ..Default::default()
        })),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: vec![REFACTOR_COMMAND.to_owned(), ACCEPTED_COMMAND.to_owned()],
            ..Default::default()
        }),
        ..Default::default()
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        #[allow(deprecated)]
        let root_uri = params.root_uri.clone();
        let dirs: Vec<PathBuf> = match &params.workspace_folders {
            Some(folders) if !folders.is_empty() => {
                folders.iter().map(|f| path_of(&f.uri)).collect()
            }
            _ => root_uri.iter().map(path_of).collect(),
        };
        *lock(&self.roots) = Roots::new(dirs);
        let mut settings = Settings::default();
        let mut warnings = Vec::new();
        if let Some(dir) = &self.config_dir {
            match actions_from_config(dir) {
                Ok(Some(actions)) => settings.refactor.actions = actions,
                Ok(None) => {}
                Err(why) => {
                    warnings.push(format!("qore: refactor actions from config ignored: {why}"))
                }
            }
        }
        if let Some(options) = &params.initialization_options {
            warnings.extend(settings.apply(options));
        }
        *lock(&self.settings) = settings;
        *lock(&self.pending_warnings) = warnings;
        Ok(InitializeResult {
            capabilities: capabilities(),
            server_info: Some(ServerInfo {
                name: "qore".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let warnings = std::mem::take(&mut *lock(&self.pending_warnings));
        self.warn(warnings).await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.inflight.cancel_all();
        Ok(())
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let warnings = lock(&self.settings).apply(&params.settings);
        lock(&self.targets).clear();
        self.warn(warnings).await;
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let dirs = |folders: &[WorkspaceFolder]| folders.iter().map(|f| path_of(&f.uri)).collect();
        let (added, removed): (Vec<PathBuf>, Vec<PathBuf>) =
            (dirs(&params.event.added), dirs(&params.event.removed));
        lock(&self.roots).change(added, &removed);
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let path = doc.uri.to_file_path().map(|p| p.into_owned());
        let ignored = path
            .as_deref()
            .is_some_and(|p| lock(&self.roots).ignores(p));
        let uri = doc.uri.as_str();
        lock(&self.documents).open(uri, path, doc.text, doc.version, ignored);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let doc = params.text_document;
        let changed =
            lock(&self.documents).change(doc.uri.as_str(), doc.version, &params.content_changes);
        if !changed {
            tracing::warn!("didChange for {}, which is not open", doc.uri.as_str());
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.inflight.cancel(uri.as_str());
        lock(&self.documents).close(uri.as_str());
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        self.fallback_completion(params.text_document_position)
            .await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        Ok(self.refactor_actions(&params))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        self.run_command(params).await
    }
}
