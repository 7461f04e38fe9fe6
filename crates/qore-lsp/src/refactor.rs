//! Quick refactor: a code action per configured instruction on a non-empty selection, and the
//! `qore.refactor` command that runs one. `workspace/executeCommand` also takes
//! `qore.completionAccepted`, the command of an inline completion item, which counts a whole
//! accept (see `feedback`) and answers `null`.
//!
//! Promises:
//! - `textDocument/codeAction` on a non-empty range of an open, not ignored document (server
//!   enabled) gives one `refactor.rewrite` action per `refactor.actions` entry, each running
//!   `qore.refactor` with `[{uri, range, instruction}]`; otherwise no actions;
//! - `workspace/executeCommand` `qore.refactor` asks the agent of `refactor.agent` (else the
//!   refactor roster routed by file) through `qore_session::completion::refactor`, then sends
//!   ONE `workspace/applyEdit` replacing the range with the new text and answers `null`;
//! - any failure (bad arguments, a document not open or ignored, the provider, the document
//!   changed meanwhile, the editor refusing the edit) sends no edit (or no second one), shows a
//!   `window/showMessage` Error with the one-line reason and answers an error response.

use std::collections::HashMap;

use qore_client::CancellationToken;
use qore_session::completion::context::Range as Selection;
use qore_session::completion::refactor::refactor;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse, Command,
    ExecuteCommandParams, MessageType, Position, Range, TextEdit, Uri, WorkspaceEdit,
};

use crate::backend::{path_of, Backend, Job, ACCEPTED_COMMAND, REFACTOR_COMMAND};
use crate::complete::{provider_error, REQUEST_FAILED};
use crate::documents::cursor;
use crate::feedback::Event;
use crate::lock::lock;

/// The argument of `qore.refactor`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RefactorArgs {
    pub uri: Uri,
    pub range: Range,
    pub instruction: String,
}

fn failed(message: String) -> Error {
    Error {
        code: ErrorCode::ServerError(REQUEST_FAILED),
        message: message.into(),
        data: None,
    }
}

impl Backend {
    /// The code actions for `params` (see the module doc).
    pub(crate) fn refactor_actions(&self, params: &CodeActionParams) -> Option<CodeActionResponse> {
        let settings = self.settings();
        let uri = &params.text_document.uri;
        let usable = lock(&self.documents)
            .get(uri.as_str())
            .is_some_and(|doc| !doc.ignored);
        if !settings.enabled || !usable || params.range.start == params.range.end {
            return None;
        }
        let actions = settings.refactor.actions.iter().map(|action| {
            let args = RefactorArgs {
                uri: uri.clone(),
                range: params.range,
                instruction: action.instruction.clone(),
            };
            let command = Command {
                title: action.title.clone(),
                command: REFACTOR_COMMAND.to_owned(),
                arguments: serde_json::to_value(args).ok().map(|a| vec![a]),
            };
            CodeActionOrCommand::CodeAction(CodeAction {
                title: action.title.clone(),
                kind: Some(CodeActionKind::REFACTOR_REWRITE),
                command: Some(command),
                ..Default::default()
            })
        });
        Some(actions.collect())
    }

    /// `workspace/executeCommand`: a refactor, or an inline completion accepted whole.
    pub(crate) async fn run_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        if params.command == ACCEPTED_COMMAND {
            let uuid = params.arguments.into_iter().next().unwrap_or(Value::Null);
            self.feedback_on(Event::Accepted, &json!({ "uuid": uuid }))
                .await;
            return Ok(None);
        }
        if params.command != REFACTOR_COMMAND {
            return Err(Error::invalid_params(format!(
                "unknown command {:?}; this server runs {REFACTOR_COMMAND:?} and \
                 {ACCEPTED_COMMAND:?}",
                params.command
            )));
        }
        let args = params.arguments.into_iter().next();
        let args = args.and_then(|a| serde_json::from_value::<RefactorArgs>(a).ok());
        let Some(args) = args else {
            return Err(Error::invalid_params(
                "qore.refactor takes one argument: {\"uri\", \"range\", \"instruction\"}",
            ));
        };
        match self.refactor_once(&args).await {
            Ok(()) => Ok(None),
            Err(error) => {
                let message = format!("qore: refactor failed: {}", error.message);
                self.client.show_message(MessageType::ERROR, &message).await;
                Err(error)
            }
        }
    }

    /// Ask for the new text of `args.range` and apply it as one edit.
    async fn refactor_once(&self, args: &RefactorArgs) -> Result<()> {
        let uri = args.uri.as_str();
        let (text, version) = {
            let documents = lock(&self.documents);
            let Some(doc) = documents.get(uri) else {
                return Err(Error::invalid_params(format!("{uri} is not open")));
            };
            if doc.ignored {
                return Err(failed(format!(
                    "{uri} is excluded by .qoreignore or .gitignore; its text is not sent"
                )));
            }
            (doc.text.clone(), doc.version)
        };
        let path = path_of(&args.uri);
        let agent = self.settings().refactor.agent;
        let target =
            (self.target(Job::Refactor, agent, &path).await).map_err(|e| provider_error(&e))?;
        let selection = Selection {
            start: cursor(args.range.start),
            end: cursor(args.range.end),
        };
        let done = refactor(
            &target,
            &text,
            &path,
            selection,
            &args.instruction,
            CancellationToken::new(),
        )
        .await;
        let refactored = done.map_err(|e| provider_error(&e))?;
        let still = lock(&self.documents).get(uri).map(|doc| doc.version);
        if still != Some(version) {
            return Err(failed(format!(
                "{uri} changed while the refactor ran; try again"
            )));
        }
        let position =
            |c: qore_session::completion::context::Cursor| Position::new(c.line, c.character);
        let edit = TextEdit {
            range: Range::new(
                position(refactored.range.start),
                position(refactored.range.end),
            ),
            new_text: refactored.text,
        };
        let edit = WorkspaceEdit {
            changes: Some(HashMap::from([(args.uri.clone(), vec![edit])])),
            ..Default::default()
        };
        let reply = self.client.apply_edit(edit).await.map_err(|err| {
            failed(format!(
                "the editor did not answer the edit: {}",
                err.message
            ))
        })?;
        match reply.applied {
            true => Ok(()),
            false => Err(failed(format!(
                "the editor did not apply the edit{}",
                reply
                    .failure_reason
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            ))),
        }
    }
}
