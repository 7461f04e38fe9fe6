//! Running one turn's tool calls: validation, approval, execution, results in call order.
//!
//! Promises:
//! - every call gets exactly one result, in the order of the calls, whatever happens: a
//!   tool not (or no longer) on offer ("not available", naming the tools there are),
//!   arguments that are not JSON, not an object or that break the tool's schema, a refusal
//!   or denial, a timeout, a cancellation: each becomes an error result
//!   the model can read (so history never holds a call without its result), and so does a
//!   tool that panics;
//! - approval is asked first, for every call that needs it, before anything runs; a call
//!   asking for more rights ([`qore_core::Tool::rights_asked`]) is asked about whatever the
//!   mode (see [`ApprovalPolicy::verdict_for`]), runs alone, and only when granted through
//!   [`qore_core::Tool::call_with_rights`];
//! - calls run in call order: each run of consecutive approved `parallel_safe` calls at
//!   once, every other call alone (nothing the model wrote later runs before it);
//! - each call has its tool's timeout; cancellation stops running calls at once (their
//!   result says "cancelled after N s") and skips the ones not started.

use std::time::{Duration, Instant};

use std::panic::{catch_unwind, AssertUnwindSafe};

use futures_util::future::join_all;
use futures_util::FutureExt as _;
use qore_core::{CancellationToken, ContentBlock, RightsRequest, ToolOutput};
use serde_json::Value;

use super::approval::{ApprovalPolicy, ApprovalRequest, Approver, Verdict};
use super::registry::{Registered, ToolRegistry};

/// A tool call as the assistant message holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's id.
    pub id: String,
    /// The name of the tool called.
    pub name: String,
    /// The parsed arguments.
    pub input: Value,
    /// The raw argument text when it was not JSON.
    pub raw_input: Option<String>,
}

impl ToolCall {
    /// The tool calls of an assistant message, in order.
    pub fn all_in(blocks: &[ContentBlock]) -> Vec<ToolCall> {
        blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse {
                    id,
                    name,
                    input,
                    raw_input,
                    ..
                } => Some(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                    raw_input: raw_input.clone(),
                }),
                _ => None,
            })
            .collect()
    }
}

/// What happened to one call, for the loop's events.
#[derive(Debug, Clone)]
pub struct CallReport {
    /// The id of the call this reports on.
    pub id: String,
    /// The name of the tool called.
    pub name: String,
    /// What goes back to the model: the tool's result, or why it did not run.
    pub output: ToolOutput,
    /// Whether the tool actually ran (false for refusals, denials, bad calls, skips).
    pub ran: bool,
    /// How long the call took.
    pub elapsed: Duration,
}

/// The result blocks of a round, in call order, and whether it was cancelled.
pub struct RoundResults {
    /// One report per call, in call order.
    pub reports: Vec<CallReport>,
    /// Whether cancellation stopped the round (later calls then did not run).
    pub cancelled: bool,
}

impl RoundResults {
    /// The reports as tool-result blocks for the next user message, in call order.
    pub fn blocks(&self) -> Vec<ContentBlock> {
        self.reports
            .iter()
            .map(|r| ContentBlock::ToolResult {
                tool_use_id: r.id.clone(),
                content: r.output.content.clone(),
                is_error: r.output.is_error,
            })
            .collect()
    }
}

/// Every call answered with the same error text, none run (round limit, repetition).
pub fn answer_all(calls: &[ToolCall], text: &str) -> RoundResults {
    RoundResults {
        reports: calls
            .iter()
            .map(|c| report(c, ToolOutput::error(text), false, Duration::ZERO))
            .collect(),
        cancelled: false,
    }
}

fn report(call: &ToolCall, output: ToolOutput, ran: bool, elapsed: Duration) -> CallReport {
    CallReport {
        id: call.id.clone(),
        name: call.name.clone(),
        output,
        ran,
        elapsed,
    }
}

/// Check a call against the registry: the tool, or the error result the model gets.
fn check<'r>(registry: &'r ToolRegistry, call: &ToolCall) -> Result<&'r Registered, ToolOutput> {
    let Some(registered) = registry.get(&call.name) else {
        let known: Vec<&str> = registry.specs().iter().map(|s| s.name.as_str()).collect();
        return Err(ToolOutput::error(format!(
            "Tool {:?} is not available (not among the tools on offer now). The tools are: {}.",
            call.name,
            known.join(", ")
        )));
    };
    if let Some(raw) = &call.raw_input {
        return Err(ToolOutput::error(format!(
            "The arguments of {} are not valid JSON: {raw}",
            call.name
        )));
    }
    if !call.input.is_object() {
        return Err(ToolOutput::error(format!(
            "The arguments of {} must be a JSON object, got: {}",
            call.name, call.input
        )));
    }
    let problems: Vec<String> = registered
        .validator
        .iter_errors(&call.input)
        .map(|e| {
            let at = e.instance_path.to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    if !problems.is_empty() {
        return Err(ToolOutput::error(format!(
            "The arguments of {} do not match its schema: {}",
            call.name,
            problems.join("; ")
        )));
    }
    Ok(registered)
}

/// What is to happen to one call (with the rights it asks for, if any).
enum Step<'r> {
    Run(&'r Registered, Option<RightsRequest>),
    Ask(&'r Registered, Option<RightsRequest>),
    Answer(ToolOutput),
}

/// Run one turn's calls (see the module doc).
pub async fn run_calls(
    calls: &[ToolCall],
    registry: &ToolRegistry,
    policy: &mut ApprovalPolicy,
    approver: &dyn Approver,
    cancel: &CancellationToken,
) -> RoundResults {
    // Validation and approval, in call order, before anything runs.
    let mut plan: Vec<Step<'_>> = calls
        .iter()
        .map(|call| match check(registry, call) {
            Err(output) => Step::Answer(output),
            Ok(registered) => {
                let rights = registered.tool.rights_asked(&call.input);
                let destructive = registered.tool.destructive();
                match policy.verdict_for(&call.name, destructive, rights.as_ref(), &call.input) {
                    Verdict::Run => Step::Run(registered, rights),
                    Verdict::Ask => Step::Ask(registered, rights),
                    Verdict::Refuse(text) => Step::Answer(ToolOutput::error(text)),
                }
            }
        })
        .collect();
    for (call, step) in calls.iter().zip(plan.iter_mut()) {
        let Step::Ask(registered, rights) = step else {
            continue;
        };
        let (registered, rights) = (*registered, rights.take());
        // An earlier answer in this turn ("allow for the session") may already cover it.
        let destructive = registered.tool.destructive();
        if policy.verdict_for(&call.name, destructive, rights.as_ref(), &call.input) == Verdict::Run
        {
            *step = Step::Run(registered, rights);
            continue;
        }
        let request = ApprovalRequest {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.input.clone(),
            rights,
        };
        let decision = tokio::select! {
            decision = approver.decide(&request) => decision,
            () = cancel.cancelled() => return not_run(calls, plan, "Not run: cancelled."),
        };
        *step = match policy.apply_for(&call.name, request.rights.as_ref(), &decision) {
            Ok(()) => Step::Run(registered, request.rights),
            Err(text) => Step::Answer(ToolOutput::error(text)),
        };
    }

    // Execution in call order: each run of consecutive parallel-safe calls at once, every
    // other call alone, so a call never runs before one the model wrote earlier that may
    // change what it sees (a read after a write reads the write).
    let mut reports: Vec<Option<CallReport>> = vec![None; calls.len()];
    let mut batch = Vec::new();
    for (i, (call, step)) in calls.iter().zip(&plan).enumerate() {
        match step {
            Step::Answer(output) => {
                reports[i] = Some(report(call, output.clone(), false, Duration::ZERO))
            }
            Step::Run(registered, None) if registered.tool.parallel_safe() => batch.push(i),
            Step::Run(registered, granted) => {
                run_batch(&mut batch, calls, &plan, &mut reports, cancel).await;
                reports[i] = Some(match cancel.is_cancelled() {
                    false => execute(call, registered, granted.clone(), cancel).await,
                    true => cancelled(call),
                });
            }
            Step::Ask(..) => {}
        }
    }
    run_batch(&mut batch, calls, &plan, &mut reports, cancel).await;
    RoundResults {
        reports: reports
            .into_iter()
            .zip(calls)
            .map(|(r, call)| {
                r.unwrap_or_else(|| {
                    report(call, ToolOutput::error("Not run."), false, Duration::ZERO)
                })
            })
            .collect(),
        cancelled: cancel.is_cancelled(),
    }
}

/// Run the parallel-safe calls at `batch` (indices into `calls`) at once, and empty it.
async fn run_batch(
    batch: &mut Vec<usize>,
    calls: &[ToolCall],
    plan: &[Step<'_>],
    reports: &mut [Option<CallReport>],
    cancel: &CancellationToken,
) {
    let running = batch.iter().map(|&i| async move {
        match (&plan[i], cancel.is_cancelled()) {
            (Step::Run(registered, granted), false) => {
                execute(&calls[i], registered, granted.clone(), cancel).await
            }
            _ => cancelled(&calls[i]),
        }
    });
    for (i, done) in batch.iter().zip(join_all(running).await) {
        reports[*i] = Some(done);
    }
    batch.clear();
}

fn cancelled(call: &ToolCall) -> CallReport {
    report(
        call,
        ToolOutput::error("Not run: cancelled."),
        false,
        Duration::ZERO,
    )
}

/// Cancelled before anything ran: every call gets its planned answer or `text`.
fn not_run(calls: &[ToolCall], plan: Vec<Step<'_>>, text: &str) -> RoundResults {
    RoundResults {
        reports: calls
            .iter()
            .zip(plan)
            .map(|(call, step)| match step {
                Step::Answer(output) => report(call, output, false, Duration::ZERO),
                Step::Run(..) | Step::Ask(..) => {
                    report(call, ToolOutput::error(text), false, Duration::ZERO)
                }
            })
            .collect(),
        cancelled: true,
    }
}

/// Run one call with its timeout, stopping at once on cancellation.
async fn execute(
    call: &ToolCall,
    registered: &Registered,
    granted: Option<RightsRequest>,
    cancel: &CancellationToken,
) -> CallReport {
    let started = Instant::now();
    let timeout = registered.tool.timeout();
    let token = cancel.child_token();
    // A tool from outside (MCP, skills) may panic: that is its error result, never an
    // unwinding loop that leaves the call unanswered.
    let panicked = |what: Box<dyn std::any::Any + Send>| {
        let message = what
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| what.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned());
        ToolOutput::error(format!("{} failed: it panicked ({message}).", call.name))
    };
    let tool = &registered.tool;
    let running = match catch_unwind(AssertUnwindSafe(|| match granted {
        Some(granted) => tool.call_with_rights(call.input.clone(), granted, token.clone()),
        None => tool.call(call.input.clone(), token.clone()),
    })) {
        Ok(running) => AssertUnwindSafe(running).catch_unwind(),
        Err(what) => return report(call, panicked(what), true, started.elapsed()),
    };
    let output = tokio::select! {
        result = tokio::time::timeout(timeout, running) => match result {
            Ok(Ok(output)) => output,
            Ok(Err(what)) => panicked(what),
            Err(_) => {
                token.cancel();
                ToolOutput::error(format!(
                    "{} timed out after {} s and was stopped.",
                    call.name,
                    timeout.as_secs_f64()
                ))
            }
        },
        () = cancel.cancelled() => {
            token.cancel();
            ToolOutput::error(format!(
                "{} was cancelled after {:.1} s.",
                call.name,
                started.elapsed().as_secs_f64()
            ))
        }
    };
    report(call, output, true, started.elapsed())
}

#[cfg(test)]
#[path = "execute_tests.rs"]
mod tests;
