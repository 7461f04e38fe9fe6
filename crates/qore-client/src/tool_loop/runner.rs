//! [`ToolLoopRunner`]: stream a turn, run its tool calls, continue from history, until the
//! model answers without tools or a limit stops it. The whole policy on one screen:
//!
//! ```text
//! loop:
//!   refresh the registry: a tool source whose version moved (an MCP server's
//!     tools/list_changed) offers its new list from this round on; nothing changed: one
//!     version check per source, nothing fetched
//!   encode the request from history (tools on offer unless disabled) and stream it
//!     (text protocol: the request is derived from history by `text_turn`, and the
//!     reply's <tool_call> blocks become the turn's tool calls)
//!   failed / cancelled turn          -> stop; history unchanged (no half turn)
//!   no tool calls                    -> append the message; finished
//!   append the assistant message
//!   same tool + same arguments N times in a row -> answer the calls "not run"; failed (limit)
//!   round limit reached              -> answer the calls "not run"; then either fail, or
//!                                       ask once more with tool calls forbidden
//!   run the calls (approval, parallel-safe at once, timeouts, cancellation)
//!   append one user message with every result, in call order
//!   cancelled while running          -> stop (history is well formed: every call answered)
//! ```
//!
//! A call to a tool no longer on offer (its source dropped it) is answered like a call to a
//! tool never offered: an error result saying it is not available and naming the tools
//! there are (see [`super::execute`]).
//!
//! State (round count, repetition, usage) lives in one `run` call: concurrent runs never
//! share it, and it is dropped however the run ends.

use std::collections::HashMap;

use futures_util::StreamExt as _;
use qore_core::{CancellationToken, History, Message, ResponseEvent, Role, Usage};

use super::approval::{ApprovalPolicy, Approver};
use super::execute::{answer_all, run_calls, CallReport, RoundResults, ToolCall};
use super::outcome::{add_usage, LoopStop, TurnOutcome};
use super::registry::ToolRegistry;
use super::text_protocol::malformed_result;
use super::text_turn::{self, TextTurn};
use crate::{ChatRequest, Client, EncodeCache, RequestOptions};

/// What happens when the round limit is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AtRoundLimit {
    /// Answer the pending calls "not run" and ask for a final answer with tools forbidden.
    #[default]
    FinalAnswer,
    /// Fail the turn with [`LoopStop::RoundLimit`].
    Fail,
}

/// How tools reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolProtocol {
    /// The protocol's own tool definitions and tool-call events.
    #[default]
    Native,
    /// Tools described in the system prompt, calls written as `<tool_call>` blocks (for
    /// models or servers without native tool calling; see [`super::text_protocol`]).
    Text,
}

/// Limits of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopConfig {
    /// Rounds of tool calls allowed (a round: one assistant turn's calls and their results).
    pub max_rounds: u32,
    /// What happens when `max_rounds` is reached.
    pub at_round_limit: AtRoundLimit,
    /// The same tool with the same arguments this many times in a row stops the loop.
    pub repeat_limit: u32,
    /// How tools reach the model: native tool calling or the text protocol.
    pub tool_protocol: ToolProtocol,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            max_rounds: 25,
            at_round_limit: AtRoundLimit::FinalAnswer,
            repeat_limit: 3,
            tool_protocol: ToolProtocol::Native,
        }
    }
}

/// What the loop reports while it runs.
#[derive(Debug)]
pub enum LoopEvent<'a> {
    /// An event of the turn being streamed.
    Response(&'a ResponseEvent),
    /// A round's calls are about to run (after the assistant message was stored).
    ToolsStarting {
        /// The round's number, from 1.
        round: u32,
        /// The calls, in call order.
        calls: &'a [ToolCall],
    },
    /// A call's result, in call order.
    ToolFinished(&'a CallReport),
}

/// Runs the tool loop for one request against one client.
pub struct ToolLoopRunner<'a> {
    /// The client every request goes through.
    pub client: &'a Client,
    /// Refreshed before each round ([`ToolRegistry::refresh`]).
    pub registry: &'a mut ToolRegistry,
    /// How calls are approved; tools allowed "for the session" are remembered in it.
    pub policy: &'a mut ApprovalPolicy,
    /// Who is asked when the policy says so.
    pub approver: &'a dyn Approver,
    /// The loop's limits.
    pub config: LoopConfig,
}

impl ToolLoopRunner<'_> {
    /// Run until the model answers without tools, a limit stops it, it fails or `cancel`
    /// fires. `history` must end with the user's turn; every finished turn and every tool
    /// result is appended to it.
    pub async fn run(
        &mut self,
        model: &str,
        history: &mut History,
        options: &RequestOptions,
        cancel: &CancellationToken,
        on_event: impl FnMut(LoopEvent<'_>),
    ) -> TurnOutcome {
        let mut cache = EncodeCache::new();
        (self.run_cached(model, history, options, &mut cache, cancel, on_event)).await
    }

    /// [`ToolLoopRunner::run`], each request encoded through `cache`: every message is
    /// encoded once, by the round that first sends it, or by an earlier run of the owner's
    /// (a session keeps its cache across turns). From round 2 on the loop vouches for the
    /// messages the previous request sent ([`EncodeCache::vouch_unchanged`]: it only appends
    /// to them), so a round hashes only what it added.
    pub async fn run_cached(
        &mut self,
        model: &str,
        history: &mut History,
        options: &RequestOptions,
        cache: &mut EncodeCache,
        cancel: &CancellationToken,
        mut on_event: impl FnMut(LoopEvent<'_>),
    ) -> TurnOutcome {
        let mut usage = Usage::default();
        let mut rounds = 0u32;
        let mut tools_forbidden = false;
        let mut repeat: Option<(String, String, u32)> = None;
        let text_mode = self.config.tool_protocol == ToolProtocol::Text;
        let forbidding = {
            let mut forbidding = options.clone();
            if !text_mode {
                (forbidding.extra).extend(self.client.protocol().forbid_tool_calls());
            }
            forbidding
        };
        // Messages the previous round's request encoded: the loop only appends to them.
        let mut encoded = 0;
        loop {
            for refused in self.registry.refresh().await {
                tracing::warn!("a changed tool left out: {}", refused.message);
            }
            let derived;
            let (request_history, tools) = if text_mode {
                derived = text_turn::request_history(history, self.registry.specs());
                (&derived, &[][..])
            } else {
                (&*history, self.registry.specs())
            };
            let request = ChatRequest {
                model,
                history: request_history,
                tools,
                options: if tools_forbidden {
                    &forbidding
                } else {
                    options
                },
            };
            if !text_mode {
                cache.vouch_unchanged(encoded);
                encoded = history.len();
            }
            let mut stream = self.client.stream_cached(&request, cache, cancel.clone());
            let mut emit = |event: &ResponseEvent| on_event(LoopEvent::Response(event));
            let mut text_turn = text_mode.then(|| TextTurn::new(history.len()));
            while let Some(event) = stream.next().await {
                match &mut text_turn {
                    Some(turn) => turn.on_event(&event, &mut emit),
                    None => emit(&event),
                }
            }
            if let Some(turn) = &mut text_turn {
                turn.end(&mut emit);
            }
            let (mut message, stop_reason) = match stream.finish().await {
                qore_core::StreamOutcome::Finished {
                    message,
                    stop_reason,
                    usage: turn,
                } => {
                    add_usage(&mut usage, &turn);
                    (message, stop_reason)
                }
                qore_core::StreamOutcome::Failed { error, usage: turn } => {
                    add_usage(&mut usage, &turn);
                    return TurnOutcome::failed(error, usage, rounds);
                }
                qore_core::StreamOutcome::Cancelled { usage: turn } => {
                    add_usage(&mut usage, &turn);
                    return TurnOutcome::Cancelled { usage, rounds };
                }
            };
            let malformed = match text_turn {
                Some(turn) => turn.attach(&mut message),
                None => HashMap::new(),
            };
            let calls = ToolCall::all_in(&message.blocks);
            history.push(message);
            if calls.is_empty() {
                return TurnOutcome::Finished {
                    stop_reason,
                    usage,
                    rounds,
                };
            }
            rounds += 1;
            if let Some((tool, times)) = self.repeated(&mut repeat, &calls) {
                let text = format!(
                    "Not run: {tool} was called with the same arguments {times} times in a row."
                );
                self.answer(history, &answer_all(&calls, &text), &mut on_event);
                return TurnOutcome::stopped(LoopStop::RepeatedCall { tool, times }, usage, rounds);
            }
            if tools_forbidden || rounds > self.config.max_rounds {
                let text = "Not run: tool round limit reached. Answer with what you have.";
                self.answer(history, &answer_all(&calls, text), &mut on_event);
                if tools_forbidden || self.config.at_round_limit == AtRoundLimit::Fail {
                    let limit = LoopStop::RoundLimit {
                        rounds: self.config.max_rounds,
                    };
                    return TurnOutcome::stopped(limit, usage, rounds);
                }
                tools_forbidden = true;
                continue;
            }
            on_event(LoopEvent::ToolsStarting {
                round: rounds,
                calls: &calls,
            });
            let results = self.run_round(&calls, &malformed, cancel).await;
            self.answer(history, &results, &mut on_event);
            if results.cancelled {
                return TurnOutcome::Cancelled { usage, rounds };
            }
        }
    }

    /// Run a round's calls; a malformed text-protocol block is answered with its parse
    /// error, in its place.
    async fn run_round(
        &mut self,
        calls: &[ToolCall],
        malformed: &HashMap<String, String>,
        cancel: &CancellationToken,
    ) -> RoundResults {
        if malformed.is_empty() {
            return run_calls(calls, self.registry, self.policy, self.approver, cancel).await;
        }
        let valid: Vec<ToolCall> = (calls.iter())
            .filter(|c| !malformed.contains_key(&c.id))
            .cloned()
            .collect();
        let ran = run_calls(&valid, self.registry, self.policy, self.approver, cancel).await;
        let mut ran_reports = ran.reports.into_iter();
        let reports = (calls.iter())
            .filter_map(|call| match malformed.get(&call.id) {
                Some(message) => Some(malformed_result(&call.id, message)),
                None => ran_reports.next(),
            })
            .collect();
        RoundResults {
            reports,
            cancelled: ran.cancelled,
        }
    }

    /// Append one user message with every result, reporting each.
    fn answer(
        &self,
        history: &mut History,
        results: &RoundResults,
        on_event: &mut impl FnMut(LoopEvent<'_>),
    ) {
        for report in &results.reports {
            on_event(LoopEvent::ToolFinished(report));
        }
        history.push(Message::new(Role::User, results.blocks()));
    }

    /// Track identical consecutive calls; `Some((tool, times))` when the limit is reached.
    fn repeated(
        &self,
        last: &mut Option<(String, String, u32)>,
        calls: &[ToolCall],
    ) -> Option<(String, u32)> {
        for call in calls {
            let args = call
                .raw_input
                .clone()
                .unwrap_or_else(|| call.input.to_string());
            let count = match last {
                Some((tool, prev, n)) if *tool == call.name && *prev == args => *n + 1,
                _ => 1,
            };
            *last = Some((call.name.clone(), args, count));
            if count >= self.config.repeat_limit.max(1) {
                return Some((call.name.clone(), count));
            }
        }
        None
    }
}
