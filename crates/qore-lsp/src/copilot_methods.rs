//! The Copilot protocol's methods on the server ([`register`] adds them to tower's router):
//! the shapes are [`crate::copilot`]'s, the completions come from the same path as
//! `textDocument/inlineCompletion` ([`Backend::completion_at`]).
//!
//! Promises:
//! - `getCompletions` and `getCompletionsCycling` (one handler) answer
//!   `{"completions": [item]}` or `{"completions": []}` when nothing (or only blanks) is left
//!   after cleaning, the server is disabled or the file is ignored; debounce, cancellation
//!   (`$/cancelRequest`, a newer completion request for the same document, closing it:
//!   RequestCancelled -32800) and provider errors are inline completion's. `docVersion` is the
//!   version the request gives, else the open document's;
//! - `checkStatus`, `signInInitiate`, `signInConfirm`, `signOut`, `getVersion` answer the
//!   account stubs; `setEditorInfo` and `notifyShown`/`notifyAccepted`/`notifyRejected`
//!   answer `"OK"`, whatever their params;
//! - shown, accepted, partially accepted and rejected completions (the `notify*` requests and
//!   the `textDocument/didShowCompletion`/`didPartiallyAcceptCompletion` notifications) are
//!   counted ([`crate::feedback`]); each is logged with its uuid and the counts, as a tracing
//!   line and as `window/logMessage` (type Log) to the editor;
//! - `textDocument/didFocus` is accepted and does nothing. Other unknown notifications are
//!   ignored and unknown requests answered MethodNotFound (-32601) by tower's router.

use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{MessageType, TextDocumentIdentifier};
use tower_lsp_server::LspServiceBuilder;

use crate::backend::Backend;
use crate::copilot::{self, CompletionRequest};
use crate::feedback::Event;
use crate::lock::lock;

/// Add the Copilot methods to `builder`.
pub fn register(builder: LspServiceBuilder<Backend>) -> LspServiceBuilder<Backend> {
    builder
        .custom_method("getCompletions", Backend::copilot_completions)
        .custom_method("getCompletionsCycling", Backend::copilot_completions)
        .custom_method("checkStatus", Backend::copilot_signed_in)
        .custom_method("signInConfirm", Backend::copilot_signed_in)
        .custom_method("signInInitiate", Backend::copilot_sign_in)
        .custom_method("signOut", Backend::copilot_sign_out)
        .custom_method("getVersion", Backend::copilot_version)
        .custom_method("setEditorInfo", Backend::copilot_ok)
        .custom_method("notifyShown", Backend::copilot_notify_shown)
        .custom_method("notifyAccepted", Backend::copilot_notify_accepted)
        .custom_method("notifyRejected", Backend::copilot_notify_rejected)
        .custom_method("textDocument/didFocus", Backend::copilot_did_focus)
        .custom_method("textDocument/didShowCompletion", Backend::copilot_did_show)
        .custom_method(
            "textDocument/didPartiallyAcceptCompletion",
            Backend::copilot_did_partially_accept,
        )
}

impl Backend {
    /// `getCompletions` and `getCompletionsCycling`.
    async fn copilot_completions(&self, params: Value) -> Result<Value> {
        let request = CompletionRequest::from_params(params).map_err(Error::invalid_params)?;
        let document = TextDocumentIdentifier {
            uri: request.uri.clone(),
        };
        let found = self.completion_at(&document, request.position).await?;
        let Some(found) = found.filter(|f| !f.text.trim().is_empty()) else {
            return Ok(json!({"completions": []}));
        };
        let open = || {
            lock(&self.documents)
                .get(request.uri.as_str())
                .map(|d| d.version)
        };
        let version = (request.version).or_else(|| open().map(i64::from));
        let item = copilot::item(
            &found.line_before,
            &found.text,
            request.position,
            found.range.end,
            version.unwrap_or(0),
        );
        Ok(json!({"completions": [item]}))
    }

    /// `checkStatus` and `signInConfirm`.
    async fn copilot_signed_in(&self, _: Value) -> Result<Value> {
        Ok(copilot::signed_in())
    }

    async fn copilot_sign_in(&self, _: Value) -> Result<Value> {
        Ok(copilot::already_signed_in())
    }

    async fn copilot_sign_out(&self, _: Value) -> Result<Value> {
        Ok(copilot::signed_out())
    }

    async fn copilot_version(&self, _: Value) -> Result<Value> {
        Ok(copilot::version())
    }

    /// `setEditorInfo`: nothing in it changes what qore does.
    async fn copilot_ok(&self, _: Value) -> Result<Value> {
        Ok(json!("OK"))
    }

    async fn copilot_notify_shown(&self, params: Value) -> Result<Value> {
        self.feedback_on(Event::Shown, &params).await;
        Ok(json!("OK"))
    }

    async fn copilot_notify_accepted(&self, params: Value) -> Result<Value> {
        self.feedback_on(Event::Accepted, &params).await;
        Ok(json!("OK"))
    }

    async fn copilot_notify_rejected(&self, params: Value) -> Result<Value> {
        self.feedback_on(Event::Rejected, &params).await;
        Ok(json!("OK"))
    }

    async fn copilot_did_focus(&self, _: Value) {}

    async fn copilot_did_show(&self, params: Value) {
        self.feedback_on(Event::Shown, &params).await;
    }

    async fn copilot_did_partially_accept(&self, params: Value) {
        self.feedback_on(Event::PartiallyAccepted, &params).await;
    }

    /// Count `event` for the uuids `params` names (a rejection counts each; any other event
    /// counts one, named or not: the editor still told us), and log it with the counts.
    pub(crate) async fn feedback_on(&self, event: Event, params: &Value) {
        let (uuids, n) = match event {
            Event::Rejected => {
                let uuids = copilot::rejected_uuids(params);
                let n = uuids.len() as u64;
                (uuids, n)
            }
            _ => (copilot::uuid_of(params).into_iter().collect(), 1),
        };
        let counts = self.feedback.record(event, n);
        let named = match uuids.is_empty() {
            true => "(no uuid)".to_owned(),
            false => uuids.join(", "),
        };
        let what = match event {
            Event::Shown => "shown",
            Event::Accepted => "accepted",
            Event::PartiallyAccepted => "partially accepted",
            Event::Rejected => "rejected",
        };
        tracing::info!(uuid = %named, %counts, "completion {what}");
        let line = format!("qore: completion {named} {what} ({counts})");
        self.client.log_message(MessageType::LOG, line).await;
    }
}
