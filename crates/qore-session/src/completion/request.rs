//! One completion at a cursor, asked of a reached model. What the agent's `[body]` reads
//! decides how (`qore_agents::body_reads`; the `completion` tag only marks roster defaults):
//!
//! - an agent whose body reads `ctx.prefix`/`ctx.suffix` gets them as a fill-in-the-middle
//!   request, with the other open documents as `extra` (llama.cpp's `input_extra`; the body
//!   is the agent's `[body]`, see `qore_client::Client::encode_fim`);
//! - any other agent, and a target without one, chats: a system message (the agent's own
//!   system prompt, else [`CHAT_SYSTEM`]) and [`CompletionContext::chat_prompt`] (path,
//!   language, the open documents, the code with `<cursor>`) as the user message.
//!
//! Either reply goes through [`clean_completion`]; `Ok(None)` when nothing is left to insert.
//! A mismatch is an error naming the agent, with nothing sent: a completion agent whose
//! protocol has no fill-in-the-middle endpoint, or whose endpoint is a chat one; a provider's
//! "cannot infill" answer (llama.cpp's 501 for a model without FIM tokens, a chat-only model
//! behind a Completions endpoint) names the agent and model too. Other failures (the wire,
//! cancellation) come back as one [`ErrorInfo`], never a panic.

use std::path::Path;

use qore_client::{CancellationToken, ChatRequest, FimFile, FimRequest};
use qore_core::{ErrorInfo, History, Message};

use super::clean::{clean_completion, Completion, CursorText, Mode};
use super::context::{language_of, CompletionContext, OpenFile};
use crate::target::Target;

/// The system prompt of a chat agent asked to complete code, when it has none of its own.
pub const CHAT_SYSTEM: &str = "You are a code completion engine. Answer with the code to \
     insert at the <cursor> marker only: no prose, no explanation, no Markdown code fences, \
     and none of the surrounding code repeated.";

/// Whether a completion is asked of `target` by fill-in-the-middle (its agent's body reads
/// the prefix/suffix) rather than by chat.
pub fn is_fim(target: &Target) -> bool {
    target.agent.as_ref().is_some_and(|a| a.reads.fills())
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
    let fim = is_fim(target);
    let stream = if fim {
        fim_endpoint(target)?;
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
        let system = super::system_prompt(target, CHAT_SYSTEM);
        let history = History::from(vec![
            Message::system(system),
            Message::user(ctx.chat_prompt(path, language_of(path), extra)),
        ]);
        let request = ChatRequest {
            model: &target.model,
            history: &history,
            tools: &[],
            options: &target.options,
        };
        target.client.stream(&request, cancel)
    };
    let reply = super::answer_text(stream, "the completion")
        .await
        .map_err(|error| match fim {
            true => cannot_infill(target, error),
            false => error,
        })?;
    let cursor = CursorText {
        before: &ctx.prefix,
        after: &ctx.suffix,
    };
    Ok(clean_completion(&reply, &cursor, mode))
}

/// The agent's name as errors quote it.
fn agent_name(target: &Target) -> String {
    target
        .agent
        .as_ref()
        .map_or(String::new(), |a| a.name.clone())
}

/// Paths (as URLs end or contain them) of chat endpoints, never fill-in-the-middle ones.
const CHAT_ENDPOINTS: &[&str] = &[
    "/chat/completions",
    "/api/chat",
    "/messages",
    "/responses",
    ":generateContent",
    ":streamGenerateContent",
];

/// The URL a completion agent's requests go to, refused when there is none or it is a
/// chat endpoint.
fn fim_endpoint(target: &Target) -> Result<String, ErrorInfo> {
    let name = agent_name(target);
    let protocol = target.client.protocol().name();
    let url = (target.client.fim_url(&target.model, target.options.stream)).map_err(|_| {
        ErrorInfo::config(format!(
            "agent {name:?} is a code-completion (fill-in-the-middle) agent, but its provider \
             speaks {protocol}, which has no fill-in-the-middle endpoint: give it an \
             `endpoint`, or complete with a chat agent"
        ))
    })?;
    let path = url.split(['?', '#']).next().unwrap_or(&url);
    if CHAT_ENDPOINTS.iter().any(|chat| path.contains(chat)) {
        return Err(ErrorInfo::config(format!(
            "agent {name:?} is a code-completion (fill-in-the-middle) agent, but its endpoint \
             {url} is a chat endpoint: complete with a chat agent, or point it at a \
             fill-in-the-middle endpoint"
        )));
    }
    Ok(url)
}

/// What providers answer when the model behind a fill-in-the-middle endpoint cannot fill in
/// the middle: llama.cpp's 501 `not_supported_error`, OpenAI's "This is a chat model and
/// not supported in the v1/completions endpoint", Ollama's "does not support insert".
fn says_cannot_infill(error: &ErrorInfo) -> bool {
    let detail = error.provider.as_ref();
    let status = detail.and_then(|d| d.status);
    let kind = detail.and_then(|d| d.error_type.as_deref());
    let message = error.message.to_lowercase();
    status == Some(501)
        || kind == Some("not_supported_error")
        || [
            "infill is not supported",
            "chat model",
            "does not support insert",
        ]
        .iter()
        .any(|words| message.contains(words))
}

/// `error`, naming the agent and model when it says the model cannot fill in the middle.
fn cannot_infill(target: &Target, mut error: ErrorInfo) -> ErrorInfo {
    if says_cannot_infill(&error) {
        error.message = format!(
            "agent {:?} is a code-completion (fill-in-the-middle) agent, but its model {:?} \
             cannot fill in the middle (a chat model?): {}; complete with a chat agent",
            agent_name(target),
            target.model,
            error.message
        );
    }
    error
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
