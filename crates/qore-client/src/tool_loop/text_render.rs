//! The writing half of the text tool protocol (see [`super::text_protocol`]): the
//! system-prompt section that describes the tools and the syntax, the `<tool_result>` blocks
//! of a round, and the result a malformed block gets.
//!
//! Promises: the same specs give the same bytes (prompt caches keep hitting); a result can
//! never close its block early (`</tool_result` in a result, any case, is written
//! `<\/tool_result`).

use std::time::Duration;

use qore_core::{ToolOutput, ToolResultPart, ToolSpec};

use super::execute::CallReport;

/// The result the loop gives a malformed block: an error, nothing run.
pub fn malformed_result(id: impl Into<String>, message: impl Into<String>) -> CallReport {
    CallReport {
        id: id.into(),
        name: String::new(),
        output: ToolOutput::error(message),
        ran: false,
        elapsed: Duration::ZERO,
    }
}

/// The results of a round as `<tool_result>` blocks for the next user turn, in order. An
/// empty name (a malformed block) leaves the `name` attribute out; `error="true"` marks
/// errors; images become `[image]`; any `</tool_result` (any case) in a result is written
/// `<\/tool_result`.
pub fn render_results(reports: &[CallReport]) -> String {
    let blocks: Vec<String> = reports
        .iter()
        .map(|report| {
            let name = match report.name.as_str() {
                "" => String::new(),
                name => format!(" name=\"{}\"", attribute(name)),
            };
            let error = if report.output.is_error {
                " error=\"true\""
            } else {
                ""
            };
            let parts: Vec<&str> = (report.output.content.iter())
                .map(|part| match part {
                    ToolResultPart::Text { text } => text.as_str(),
                    ToolResultPart::Image(_) => "[image]",
                })
                .collect();
            let mut body = escape_close(&parts.join("\n"));
            if !body.is_empty() && !body.ends_with('\n') {
                body.push('\n');
            }
            let id = attribute(&report.id);
            format!("<tool_result{name} id=\"{id}\"{error}>\n{body}</tool_result>")
        })
        .collect();
    blocks.join("\n")
}

fn attribute(value: &str) -> String {
    (value.replace('&', "&amp;").replace('"', "&quot;"))
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn escape_close(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (i, _) in text.to_ascii_lowercase().match_indices("</tool_result") {
        out.push_str(&text[last..=i]);
        out.push('\\');
        last = i + 1;
    }
    out.push_str(&text[last..]);
    out
}

const PROTOCOL: &str = r#"## Tool-use protocol

You can use the tools listed below. To call one, write a block of exactly this form in your reply, outside any code:

<tool_call>{"name": "TOOL_NAME", "arguments": {"ARGUMENT": "VALUE"}}</tool_call>

- The block holds one JSON object: "name" is the tool's name, "arguments" an object matching the tool's argument schema.
- You may make several calls in one reply, one block per call.
- After your calls, end your reply. The results arrive in the next user message as <tool_result name="TOOL_NAME" id="ID">...</tool_result> blocks, one per call, in the order of the calls; a failed call's block has error="true". Never write <tool_result> blocks yourself.
- Blocks inside code (fenced blocks or `inline code`) are not calls: use code to show the syntax without calling anything.
- If an argument must contain the text </tool_call>, write it as <\/tool_call>.
- When you need no tool, answer normally, without any <tool_call> block.

### Tools
"#;

/// The system-prompt section that teaches the protocol and lists the tools, in order, with
/// their compact JSON schemas. Empty when there are no tools.
pub fn render_protocol_section(specs: &[ToolSpec]) -> String {
    if specs.is_empty() {
        return String::new();
    }
    let mut out = PROTOCOL.to_owned();
    for spec in specs {
        out.push_str(&format!("\n#### {}\n", spec.name));
        if !spec.description.trim().is_empty() {
            out.push_str(&format!("{}\n", spec.description.trim()));
        }
        out.push_str(&format!("Arguments (JSON Schema): {}\n", spec.input_schema));
    }
    out
}
