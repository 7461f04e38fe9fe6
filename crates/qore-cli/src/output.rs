//! What the CLI prints: text for people, one JSON object per line for scripts.
//!
//! Text mode: answer text to stdout as it streams; reasoning and tool calls to stderr. On a
//! terminal ([`console::styled_stdout`]) the answer is rendered Markdown, a line at a time
//! ([`Renderer`]: what a line is can only be known once it ends, and a table once its last
//! row is there), and reasoning is dimmed when stderr is one ([`console::styled_stderr`]);
//! anywhere else (`--plain`, `NO_COLOR`, `TERM=dumb`, a pipe or a file) the answer is the
//! model's text exactly as it came, byte for byte, written as it comes.
//! When tools run: `qore: tool NAME ARGUMENTS` on stderr as a round starts, then one line
//! per result, `qore: NAME -> SUMMARY`.
//! JSON mode: every [`ResponseEvent`] as `{"type": ...}`; when tools run, between them
//! `{"type": "tool_call", "id", "tool", "arguments"}` for each call of a round (or, for a
//! call answered without running, just before its result), `{"type": "approval_request",
//! ...}` from the approver, and `{"type": "tool_result", "id", "tool", "is_error", "ran",
//! "content"}`; then a last line that is either
//! `{"type": "result", "text", "messages", "usage", "stop_reason"}` (`messages`: the whole
//! conversation, tool turns included), `{"type": "stopped", "reason", "message",
//! "messages", "usage"}` (a tool-loop limit), `{"type": "error", "category", "message",
//! "status", "body"}` (`body`: what the provider sent, capped at 64 KiB, or null) or
//! `{"type": "cancelled"}`.
//! Failures always also print one human line on stderr.

use qore_client::tool_loop::{CallReport, LoopEvent, LoopStop, ToolCall};
pub use qore_client::transport::bad_answer::one_line;
use qore_client::ModelInfo;
use qore_core::{ErrorInfo, History, ResponseEvent, StopReason, ToolCallInput, Usage};
use serde_json::{json, Value};

use crate::console::{self, note, outln};
use crate::render::{Depth, Renderer};

/// Characters of a tool's arguments or result shown on one stderr line.
const SHOWN_CHARS: usize = 160;

/// A tool call seen in the stream.
struct SeenCall {
    id: String,
    name: String,
    /// The parsed arguments, or the raw text when it is not JSON.
    arguments: Value,
    /// Its `tool` line was printed.
    announced: bool,
}

pub struct Output {
    json: bool,
    /// Tools run in this session: text mode prints calls when they run, not as they stream.
    tools: bool,
    ends_with_newline: bool,
    /// Reasoning was printed to stderr and its line is not finished yet.
    in_thinking: bool,
    /// The tool calls seen, in order.
    calls: Vec<SeenCall>,
    /// The answer rendered for the terminal (none: printed as it comes).
    render: Option<Renderer>,
    /// Reasoning is dimmed on stderr.
    dim_thinking: bool,
}

/// Print one JSON line on stdout, flushed (skipped once stdout is closed).
pub fn json_line(value: &Value) {
    outln!("{value}");
}

/// A call's arguments for display: the parsed object, or the raw text when it is not JSON.
fn arguments(call: &ToolCall) -> Value {
    match &call.raw_input {
        Some(raw) => Value::String(raw.clone()),
        None => call.input.clone(),
    }
}

impl Output {
    pub fn new(json: bool) -> Self {
        Output {
            json,
            tools: false,
            ends_with_newline: true,
            in_thinking: false,
            calls: Vec::new(),
            render: (!json && console::styled_stdout()).then(|| {
                let depth = match console::true_colour() {
                    true => Depth::TrueColour,
                    false => Depth::Palette256,
                };
                Renderer::new(console::width(), depth)
            }),
            dim_thinking: !json && console::styled_stderr(),
        }
    }

    /// Print what the renderer holds of the answer (its unfinished line, a table).
    fn end_answer(&mut self) {
        if let Some(renderer) = &mut self.render {
            let rest = renderer.finish();
            if !rest.is_empty() {
                console::out(&rest);
            }
        }
    }

    /// Output for a run whose tool calls are executed.
    pub fn with_tools(mut self) -> Self {
        self.tools = true;
        self
    }

    /// Finish the reasoning line on stderr before anything else is printed there or the
    /// answer starts.
    fn end_thinking(&mut self) {
        if self.in_thinking {
            self.in_thinking = false;
            eprintln!();
        }
    }

    fn line(&self, value: &Value) {
        json_line(value);
    }

    /// End the answer's line on stdout and the reasoning's on stderr before tool activity.
    fn end_lines(&mut self) {
        self.end_thinking();
        self.end_answer();
        if !self.json && !self.ends_with_newline {
            outln!();
            self.ends_with_newline = true;
        }
    }

    pub fn event(&mut self, event: &ResponseEvent) {
        self.track_call(event);
        if self.json {
            // Errors are reported once, by the last line.
            if !matches!(event, ResponseEvent::Error { .. }) {
                if let Ok(value) = serde_json::to_value(event) {
                    self.line(&value);
                }
            }
            return;
        }
        match event {
            ResponseEvent::TextDelta { text } => {
                self.end_thinking();
                match &mut self.render {
                    // Whole lines only: the renderer never ends on an unfinished one.
                    Some(renderer) => {
                        let shown = renderer.push(text);
                        if !shown.is_empty() {
                            console::out(&shown);
                        }
                    }
                    None => {
                        console::out(text);
                        self.ends_with_newline = text.ends_with('\n');
                    }
                }
            }
            ResponseEvent::ThinkingDelta { .. } if console::quiet() => {}
            ResponseEvent::ThinkingDelta { text } => {
                self.in_thinking = !text.ends_with('\n');
                match self.dim_thinking {
                    true => eprint!("\x1b[2m{text}\x1b[22m"),
                    false => eprint!("{text}"),
                }
            }
            // With tools, a call is printed when it runs or is answered (`loop_event`).
            ResponseEvent::ToolCallEnd { id, input } if !self.tools => {
                self.end_thinking();
                let name = self
                    .calls
                    .iter()
                    .rev()
                    .find(|call| call.id == *id)
                    .map_or("?", |call| call.name.as_str());
                let arguments = match input {
                    ToolCallInput::Parsed(value) => value.to_string(),
                    ToolCallInput::Invalid(err) => {
                        format!("{} (invalid JSON: {})", err.raw, err.message)
                    }
                };
                note!("[tool call {name} {arguments} (id {id})]");
            }
            _ => {}
        }
    }

    /// Remember the tool calls of the stream: names and arguments, by id.
    fn track_call(&mut self, event: &ResponseEvent) {
        match event {
            ResponseEvent::ToolCallStart { id, name } => self.calls.push(SeenCall {
                id: id.clone(),
                name: name.clone(),
                arguments: Value::Null,
                announced: false,
            }),
            ResponseEvent::ToolCallEnd { id, input } => {
                if let Some(seen) = self.calls.iter_mut().rev().find(|call| call.id == *id) {
                    seen.arguments = match input {
                        ToolCallInput::Parsed(value) => value.clone(),
                        ToolCallInput::Invalid(err) => Value::String(err.raw.clone()),
                    };
                }
            }
            _ => {}
        }
    }

    /// What the tool loop reports: response events, calls about to run, results.
    pub fn loop_event(&mut self, event: LoopEvent<'_>) {
        match event {
            LoopEvent::Response(event) => self.event(event),
            LoopEvent::ToolsStarting { calls, .. } => {
                self.end_lines();
                for call in calls {
                    self.announce(&call.id, &call.name, &arguments(call));
                }
            }
            LoopEvent::ToolFinished(report) => {
                self.end_lines();
                let seen = self.calls.iter().rev().find(|call| call.id == report.id);
                if !seen.is_some_and(|call| call.announced) {
                    let arguments = seen.map_or(Value::Null, |call| call.arguments.clone());
                    self.announce(&report.id, &report.name, &arguments);
                }
                self.tool_result(report);
            }
        }
    }

    fn announce(&mut self, id: &str, tool: &str, arguments: &Value) {
        if let Some(seen) = self.calls.iter_mut().rev().find(|call| call.id == id) {
            seen.announced = true;
        }
        if self.json {
            self.line(&json!({
                "type": "tool_call",
                "id": id,
                "tool": tool,
                "arguments": arguments,
            }));
        } else {
            let arguments = match arguments {
                Value::String(raw) => raw.clone(),
                other => other.to_string(),
            };
            note!("qore: tool {tool} {}", one_line(&arguments, SHOWN_CHARS));
        }
    }

    fn tool_result(&mut self, report: &CallReport) {
        let content = report.output.text_content();
        if self.json {
            self.line(&json!({
                "type": "tool_result",
                "id": report.id,
                "tool": report.name,
                "is_error": report.output.is_error,
                "ran": report.ran,
                "content": content,
            }));
            return;
        }
        let summary = one_line(&content, SHOWN_CHARS);
        if !report.ran {
            // Refusals, denials and bad calls say themselves why they did not run.
            note!("qore: {} -> {summary}", report.name);
            return;
        }
        let lines = content.lines().count();
        note!(
            "qore: {} -> {}{lines} line{}, {:.1} s: {summary}",
            report.name,
            if report.output.is_error {
                "error, "
            } else {
                ""
            },
            if lines == 1 { "" } else { "s" },
            report.elapsed.as_secs_f64()
        );
    }

    pub fn result(
        &mut self,
        text: &str,
        history: &History,
        usage: &Usage,
        stop: Option<&StopReason>,
    ) {
        self.end_thinking();
        self.end_answer();
        if self.json {
            self.line(&json!({
                "type": "result",
                "text": text,
                "messages": history,
                "usage": usage,
                "stop_reason": stop,
            }));
        } else if !self.ends_with_newline {
            outln!();
        }
    }

    /// The tool loop stopped at a limit before the model finished.
    pub fn stopped(&mut self, reason: &LoopStop, history: &History, usage: &Usage) {
        let (kind, mut message) = (reason.kind(), reason.message());
        if let LoopStop::RoundLimit { .. } = reason {
            message.push_str(" (--max-rounds)");
        }
        self.end_lines();
        if self.json {
            self.line(&json!({
                "type": "stopped",
                "reason": kind,
                "message": message,
                "messages": history,
                "usage": usage,
            }));
        }
        eprintln!("qore: stopped: {message}");
    }

    pub fn error(&mut self, error: &ErrorInfo) {
        self.end_thinking();
        self.end_answer();
        if self.json {
            self.line(&json!({
                "type": "error",
                "category": error.category,
                "message": error.message,
                "status": error.status(),
                "body": error.provider.as_ref().and_then(|d| d.body.as_deref()),
            }));
        } else if !self.ends_with_newline {
            outln!();
        }
        let one_line = error
            .message
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        eprintln!("qore: error ({:?}): {one_line}", error.category);
    }

    pub fn cancelled(&mut self) {
        self.end_thinking();
        self.end_answer();
        if self.json {
            self.line(&json!({"type": "cancelled"}));
        } else if !self.ends_with_newline {
            outln!();
        }
        eprintln!("qore: cancelled");
    }

    pub fn models(&mut self, models: &[ModelInfo]) {
        for model in models {
            let written = match (self.json, model.context_length) {
                (true, _) => outln!("{}", json!(model)),
                (false, Some(n)) => outln!("{}\t(context {n})", model.id),
                (false, None) => outln!("{}", model.id),
            };
            if !written {
                return;
            }
        }
    }
}
