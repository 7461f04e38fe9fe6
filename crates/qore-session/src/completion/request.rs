//! One completion at a cursor, asked of a reached model: a code-completion agent (tagged
//! `completion`) gets the prefix and suffix as a fill-in-the-middle request; any other agent
//! gets [`CompletionContext::chat_prompt`] as one user message. Either reply goes through
//! [`clean_completion`]; `Ok(None)` when nothing is left to insert. Failures (a chat-only
//! endpoint behind a completion agent, the wire, cancellation) come back as one
//! [`ErrorInfo`], never a panic.

use std::path::Path;

use qore_client::{CancellationToken, ChatRequest, FimFile, FimRequest};
use qore_core::{ErrorInfo, History, Message, StreamOutcome};

use super::clean::{clean_completion, Completion, CursorText, Mode};
use super::context::{language_of, CompletionContext, OpenFile};
use crate::target::Target;

/// Whether `target` fills in the middle (a code-completion agent) rather than chats.
pub fn is_fim(target: &Target) -> bool {
    target.agent.as_ref().is_some_and(|a| a.completion)
}

/// Ask `target` for the completion at `ctx`'s cursor in the file at `path`, with `extra`
/// open documents as context.
pub async fn complete(
    target: &Target,
    ctx: &CompletionContext,
    path: &Path,
    mode: Mode,
    extra: &[OpenFile],
    cancel: CancellationToken,
) -> Result<Option<Completion>, ErrorInfo> {
    let stream = if is_fim(target) {
        let (prefix, suffix) = ctx.fim_parts();
        let files: Vec<FimFile<'_>> = (extra.iter())
            .map(|f| FimFile {
                filename: &f.path,
                text: &f.text,
            })
            .collect();
        let request = FimRequest {
            model: &target.model,
            prefix,
            suffix,
            extra: &files,
            options: &target.options,
        };
        target.client.complete_fim(&request, cancel)
    } else {
        let history = History::from(vec![Message::user(
            ctx.chat_prompt(path, language_of(path)),
        )]);
        let request = ChatRequest {
            model: &target.model,
            history: &history,
            tools: &[],
            options: &target.options,
        };
        target.client.stream(&request, cancel)
    };
    let reply = match stream.finish().await {
        StreamOutcome::Finished { message, .. } => message.text(),
        StreamOutcome::Failed { error, .. } => return Err(error),
        StreamOutcome::Cancelled { .. } => {
            return Err(ErrorInfo::new(
                qore_core::ErrorCategory::Limit,
                "the completion was cancelled",
            ))
        }
    };
    let cursor = CursorText {
        before: &ctx.prefix,
        after: &ctx.suffix,
    };
    Ok(clean_completion(&reply, &cursor, mode))
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
