//! What the CLI prints: text for people, one JSON object per line for scripts.
//!
//! Text mode: answer text to stdout as it streams; reasoning and tool calls to stderr.
//! JSON mode: every [`ResponseEvent`] as `{"type": ...}`, then a last line that is either
//! `{"type": "result", "text", "messages", "usage", "stop_reason"}`,
//! `{"type": "error", "category", "message", "status"}` or `{"type": "cancelled"}`.
//! Failures always also print one human line on stderr.

use std::io::Write as _;

use qore_client::ModelInfo;
use qore_core::{ErrorInfo, History, ResponseEvent, StopReason, ToolCallInput, Usage};
use serde_json::json;

pub struct Output {
    json: bool,
    ends_with_newline: bool,
    /// Reasoning was printed to stderr and its line is not finished yet.
    in_thinking: bool,
    /// Names of the tool calls seen, by id (text mode prints them when a call ends).
    tool_names: Vec<(String, String)>,
}

impl Output {
    pub fn new(json: bool) -> Self {
        Output {
            json,
            ends_with_newline: true,
            in_thinking: false,
            tool_names: Vec::new(),
        }
    }

    /// Finish the reasoning line on stderr before anything else is printed there or the
    /// answer starts.
    fn end_thinking(&mut self) {
        if self.in_thinking {
            self.in_thinking = false;
            eprintln!();
        }
    }

    fn line(&self, value: &serde_json::Value) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{value}");
        let _ = stdout.flush();
    }

    pub fn event(&mut self, event: &ResponseEvent) {
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
                let mut stdout = std::io::stdout().lock();
                let _ = stdout.write_all(text.as_bytes());
                let _ = stdout.flush();
                self.ends_with_newline = text.ends_with('\n');
            }
            ResponseEvent::ThinkingDelta { text } => {
                self.in_thinking = !text.ends_with('\n');
                eprint!("{text}");
            }
            ResponseEvent::ToolCallStart { id, name } => {
                self.tool_names.push((id.clone(), name.clone()));
            }
            ResponseEvent::ToolCallEnd { id, input } => {
                self.end_thinking();
                let name = self
                    .tool_names
                    .iter()
                    .find(|(call, _)| call == id)
                    .map_or("?", |(_, name)| name.as_str());
                let arguments = match input {
                    ToolCallInput::Parsed(value) => value.to_string(),
                    ToolCallInput::Invalid(err) => {
                        format!("{} (invalid JSON: {})", err.raw, err.message)
                    }
                };
                eprintln!("[tool call {name} {arguments} (id {id})]");
            }
            _ => {}
        }
    }

    pub fn result(
        &mut self,
        text: &str,
        history: &History,
        usage: &Usage,
        stop: Option<&StopReason>,
    ) {
        self.end_thinking();
        if self.json {
            self.line(&json!({
                "type": "result",
                "text": text,
                "messages": history,
                "usage": usage,
                "stop_reason": stop,
            }));
        } else if !self.ends_with_newline {
            println!();
        }
    }

    pub fn error(&mut self, error: &ErrorInfo) {
        self.end_thinking();
        if self.json {
            self.line(&json!({
                "type": "error",
                "category": error.category,
                "message": error.message,
                "status": error.status(),
            }));
        } else if !self.ends_with_newline {
            println!();
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
        if self.json {
            self.line(&json!({"type": "cancelled"}));
        } else if !self.ends_with_newline {
            println!();
        }
        eprintln!("qore: cancelled");
    }

    pub fn models(&mut self, models: &[ModelInfo]) {
        for model in models {
            if self.json {
                self.line(&json!(model));
            } else {
                match model.context_length {
                    Some(n) => println!("{}\t(context {n})", model.id),
                    None => println!("{}", model.id),
                }
            }
        }
    }
}
