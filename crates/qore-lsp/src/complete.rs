//! Completion at a cursor: `textDocument/inlineCompletion` and the `textDocument/completion`
//! fallback, on `qore_session::completion::request::complete`. [`Backend::completion_at`] is
//! the one path every completion method takes (the Copilot methods of
//! [`crate::copilot_methods`] too): what follows holds for all of them.
//!
//! Promises:
//! - inline: `{"items": [{"insertText", "range", "command"}]}`, the range starting at the
//!   cursor and covering what the completion overwrites to its right (`replace_length`, in
//!   UTF-16 units), the command [`ACCEPTED_COMMAND`] with the item's fresh uuid, which the
//!   editor runs on a whole accept (`workspace/executeCommand`, counted); fallback: one item
//!   whose `textEdit` is that same edit, labelled with the first line. Nothing left after
//!   cleaning, the server disabled, or an ignored file: no items;
//! - a request waits `debounceMs`, then asks the agent of `completion.agent` (else the
//!   `code_completion` roster routed by file) with the window of lines the settings give and,
//!   when `openDocuments` is on, the other open documents (most recently touched first, never
//!   ignored ones, cut to `openDocumentsBudget` bytes in all);
//! - a newer completion request for the same document, `$/cancelRequest` (tower-lsp drops
//!   the handler) and closing the document cancel it: the HTTP request in flight is dropped
//!   and the request is answered with RequestCancelled (-32800);
//! - a provider failure is an error response (code -32803, RequestFailed) whose message is
//!   the failure's first line; a document that is not open is InvalidParams.

use std::time::Duration;

use qore_core::ErrorInfo;
use qore_session::completion::clean::Completion;
use qore_session::completion::context::{CompletionContext, Cursor, OpenFile, Window};
use qore_session::completion::request::complete;
use serde::Deserialize;
use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::{
    CompletionItem, CompletionItemKind, CompletionResponse, CompletionTextEdit, Position, Range,
    TextDocumentIdentifier, TextDocumentPositionParams, TextEdit,
};

use crate::backend::{path_of, Backend, Job, ACCEPTED_COMMAND};
use crate::documents::{cursor, Documents};
use crate::lock::lock;

/// LSP 3.17's RequestFailed: the request was valid, the provider failed it.
pub const REQUEST_FAILED: i64 = -32803;

/// `textDocument/inlineCompletion` params (the `context` is not needed).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InlineCompletionParams {
    pub text_document: TextDocumentIdentifier,
    pub position: Position,
}

/// The error response for a provider failure: its first line.
pub(crate) fn provider_error(error: &ErrorInfo) -> Error {
    let line = error
        .message
        .lines()
        .next()
        .unwrap_or("the request failed")
        .trim();
    Error {
        code: ErrorCode::ServerError(REQUEST_FAILED),
        message: line.to_owned().into(),
        data: None,
    }
}

/// The other open documents as context, under `budget` bytes in all.
fn open_files(documents: &Documents, uri: &str, budget: usize) -> Vec<OpenFile> {
    let mut left = budget;
    let mut out = Vec::new();
    for doc in documents.others(uri) {
        if left == 0 {
            break;
        }
        let text = cut(&doc.text, left);
        if text.is_empty() {
            continue;
        }
        left -= text.len();
        let path = doc.path.as_ref().map(|p| p.display().to_string());
        out.push(OpenFile {
            path: path.unwrap_or_default(),
            text: text.to_owned(),
        });
    }
    out
}

/// `text`, or its longest head of whole lines within `max` bytes (a char boundary when its
/// first line alone is longer).
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(at) => &text[..=at],
        None => &text[..end],
    }
}

/// A completion found at a cursor: what every completion method answers from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// The cleaned completion.
    pub text: String,
    /// What it replaces: from the cursor over the characters it overwrites to its right.
    pub range: Range,
    /// The cursor's line left of the cursor (as clamped into the document).
    pub line_before: String,
}

/// The range a completion replaces, as LSP writes it.
fn edit_range(ctx: &CompletionContext, line: u32, completion: &Completion) -> Range {
    let range = ctx.replaced(line, completion.replace);
    let at = |c: Cursor| Position::new(c.line, c.character);
    Range {
        start: at(range.start),
        end: at(range.end),
    }
}

impl Backend {
    /// `textDocument/inlineCompletion`.
    pub async fn inline_completion(&self, params: InlineCompletionParams) -> Result<Value> {
        let items = match self
            .completion_at(&params.text_document, params.position)
            .await?
        {
            Some(found) => vec![json!({
                "insertText": found.text,
                "range": found.range,
                "command": {
                    "title": "Accepted",
                    "command": ACCEPTED_COMMAND,
                    "arguments": [uuid::Uuid::new_v4().to_string()],
                },
            })],
            None => Vec::new(),
        };
        Ok(json!({ "items": items }))
    }

    /// `textDocument/completion`: one item inserting the completion at the cursor.
    pub(crate) async fn fallback_completion(
        &self,
        at: TextDocumentPositionParams,
    ) -> Result<Option<CompletionResponse>> {
        let Some(Found { text, range, .. }) =
            self.completion_at(&at.text_document, at.position).await?
        else {
            return Ok(Some(CompletionResponse::Array(Vec::new())));
        };
        let label = text.lines().next().unwrap_or_default().to_owned();
        let item = CompletionItem {
            label,
            kind: Some(CompletionItemKind::TEXT),
            detail: Some("qore".into()),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit {
                range,
                new_text: text,
            })),
            ..Default::default()
        };
        Ok(Some(CompletionResponse::Array(vec![item])))
    }

    /// The completion at `position` and the range it replaces, or `None` for no item: the
    /// one path every completion method takes (debounce, cancellation, ignore rules, agent).
    pub(crate) async fn completion_at(
        &self,
        document: &TextDocumentIdentifier,
        position: Position,
    ) -> Result<Option<Found>> {
        let settings = self.settings();
        if !settings.enabled {
            return Ok(None);
        }
        let uri = document.uri.as_str();
        let ticket = self.inflight.begin(uri);
        let token = ticket.token.clone();
        let work = async {
            let debounce = settings.completion.debounce_ms;
            if debounce > 0 {
                tokio::time::sleep(Duration::from_millis(debounce)).await;
            }
            let c = &settings.completion;
            let window = Window {
                lines_before: c.prefix_lines,
                lines_after: c.suffix_lines,
            };
            let (ctx, extra) = {
                let documents = lock(&self.documents);
                let Some(doc) = documents.get(uri) else {
                    return Err(Error::invalid_params(format!("{uri} is not open")));
                };
                if doc.ignored {
                    return Ok(None);
                }
                let ctx = CompletionContext::new(&doc.text, cursor(position), &window);
                let extra = match c.open_documents {
                    true => open_files(&documents, uri, c.open_documents_budget),
                    false => Vec::new(),
                };
                (ctx, extra)
            };
            let path = path_of(&document.uri);
            let target = (self.target(Job::Completion, c.agent.clone(), &path).await)
                .map_err(|e| provider_error(&e))?;
            let done = complete(&target, &ctx, &path, c.mode, &extra, token.child_token()).await;
            match done.map_err(|e| provider_error(&e))? {
                Some(completion) => Ok(Some(Found {
                    range: edit_range(&ctx, position.line, &completion),
                    text: completion.text,
                    line_before: ctx.line_before,
                })),
                None => Ok(None),
            }
        };
        tokio::select! {
            biased;
            // Dropping `work` drops the HTTP request in flight.
            () = token.cancelled() => Err(Error::request_cancelled()),
            done = work => done,
        }
    }
}

#[cfg(test)]
#[path = "complete_tests.rs"]
mod tests;
