//! One turn of a session on the wire: the request built from the layers and the sanitized
//! history, then one stream (no tools) or the tool loop, and the error context.
//!
//! Every request is encoded through the session's [`qore_client::EncodeCache`], so a
//! continuation encodes only the messages it has not sent before; the cache is keyed by
//! each message's content and place, so history that sanitizing or compression changed is
//! encoded again, never served stale.
//!
//! Promises: the turn's new messages (finished assistant messages and tool results, never
//! half a message) come back in order with the one [`TurnOutcome`]; a network failure's
//! message starts with "connecting to URL" when nothing was heard from the server, else
//! "reading the answer from URL"; the tools on offer are refreshed before every round (by
//! the tool loop), so a tool source that changed (an MCP server's `tools/list_changed`)
//! offers its new list from the next round on, within the same turn (a new tool the
//! registry refuses is a log line).

use std::borrow::Cow;

use futures_util::StreamExt as _;
use qore_client::tool_loop::{from_stream, LoopEvent, ToolLoopRunner};
use qore_client::{CancellationToken, ChatRequest};
use qore_core::{ErrorCategory, History, Message, ResponseEvent};

use crate::outcome::TurnOutcome;
use crate::sanitize::{sanitize, Wire};
use crate::state::State;
use crate::target::doing;

/// Run `user` as the next turn of `state`; its new messages and its outcome.
pub(crate) async fn run_turn(
    state: &mut State,
    user: &Message,
    cancel: &CancellationToken,
    mut on_event: impl FnMut(LoopEvent<'_>) + Send,
) -> (Vec<Message>, TurnOutcome) {
    let State {
        history,
        target,
        layers,
        tools,
        cache,
        ..
    } = state;
    let client = &target.client;
    let mut work = History::new();
    if let Some(system) = layers.system_prompt() {
        work.push(Message::system(system));
    }
    for message in history.iter().chain([user]) {
        work.push(message.clone());
    }
    // The view is usually already clean: keep it rather than copying the whole history again.
    let mut work = match sanitize(&work, Wire::of(&**client.protocol())) {
        Cow::Owned(cleaned) => cleaned,
        Cow::Borrowed(_) => work,
    };
    let base = work.len();
    let mut heard = false;
    let mut emit = |event: LoopEvent<'_>| {
        heard |= !matches!(event, LoopEvent::Response(ResponseEvent::Error { .. }));
        on_event(event);
    };
    let outcome = match tools {
        Some(tools) => {
            let mut runner = ToolLoopRunner {
                client,
                registry: &mut tools.registry,
                policy: &mut tools.policy,
                approver: tools.approver.as_ref(),
                config: tools.config,
            };
            let model = &target.model;
            (runner.run_cached(model, &mut work, &target.options, cache, cancel, &mut emit)).await
        }
        None => {
            let request = ChatRequest {
                model: &target.model,
                history: &work,
                tools: &[],
                options: &target.options,
            };
            let mut stream = client.stream_cached(&request, cache, cancel.clone());
            while let Some(event) = stream.next().await {
                emit(LoopEvent::Response(&event));
            }
            let (message, outcome) = from_stream(stream.finish().await);
            if let Some(message) = message {
                work.push(message);
            }
            outcome
        }
    };
    let outcome = match outcome {
        TurnOutcome::Failed {
            error,
            limit,
            usage,
            rounds,
        } if error.category == ErrorCategory::Network => {
            let url = client.chat_url(&target.model, target.options.stream);
            let what = match heard {
                true => format!("reading the answer from {url}"),
                false => format!("connecting to {url}"),
            };
            TurnOutcome::Failed {
                error: doing(&what, error),
                limit,
                usage,
                rounds,
            }
        }
        other => other,
    };
    let replies = work.messages()[base..].to_vec();
    (replies, outcome)
}

#[cfg(test)]
#[path = "run_turn_tests.rs"]
mod tests;
