//! The writing half of the text tool protocol (see [`super::text_protocol`]): the
//! system-prompt section that describes the tools and the syntax, the `<tool_result>` blocks
//! of a round, and the result a malformed block gets.
//!
//! Promises: the same specs give the same bytes (prompt caches keep hitting); arguments of
//! plain types are listed one line each (name, type, required, description), others as the
//! compact JSON schema, so the section stays short for small contexts; a result can
//! never close its block early (`</tool_result` in a result, any case, is written
//! `<\/tool_result`).

use std::time::Duration;

use qore_core::{ToolOutput, ToolResultPart, ToolSpec};
use serde_json::Value;

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

/// The system-prompt section that teaches the protocol and lists the tools, in order: each
/// with its description and its arguments, one line each (name, type, whether required,
/// description) when every argument is of a plain type, else the compact JSON schema. Empty
/// when there are no tools.
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
        match argument_lines(&spec.input_schema) {
            Some(lines) => out.push_str(&lines),
            None => out.push_str(&format!("Arguments (JSON Schema): {}\n", spec.input_schema)),
        }
    }
    out
}

/// `schema`'s arguments one line each, or `None` when one is not of a plain type (a
/// string, number, integer or boolean, one of an enum, or an array of those).
fn argument_lines(schema: &Value) -> Option<String> {
    let Some(properties) = schema.get("properties") else {
        return (schema
            .as_object()?
            .keys()
            .all(|k| k == "type" || k == "additionalProperties"))
        .then(|| "Arguments: none\n".to_owned());
    };
    let required: Vec<&str> = (schema.get("required").and_then(Value::as_array))
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = String::from("Arguments:\n");
    for (name, property) in properties.as_object()? {
        let kind = plain_type(property)?;
        let needed = if required.contains(&name.as_str()) {
            ", required"
        } else {
            ""
        };
        out.push_str(&format!("- {name} ({kind}{needed})"));
        match property.get("description").and_then(Value::as_str) {
            Some(text) if !text.trim().is_empty() => out.push_str(&format!(": {}\n", text.trim())),
            _ => out.push('\n'),
        }
    }
    Some(out)
}

/// `property`'s type in words, when it is plain.
fn plain_type(property: &Value) -> Option<String> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        return Some(format!("one of {}", values.join(", ")));
    }
    match property.get("type")?.as_str()? {
        kind @ ("string" | "number" | "integer" | "boolean") => Some(kind.to_owned()),
        "array" => Some(format!("array of {}", plain_type(property.get("items")?)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::text_protocol::{parse_reply, TextToolEvent};
    use super::*;
    use serde_json::json;

    #[test]
    fn the_protocol_section_is_exact_and_deterministic() {
        let spec = |name: &str, description: &str, input_schema: Value| {
            let (name, description) = (name.into(), description.into());
            ToolSpec {
                name,
                description,
                input_schema,
            }
        };
        let specs = vec![
            spec(
                "read_file",
                "  Read a file.\n",
                json!({"type": "object", "required": ["path"],
            "properties": {"path": {"type": "string"}}}),
            ),
            spec("now", "", json!({"type": "object"})),
            spec(
                "pick",
                "",
                json!({"type": "object", "properties": {
            "how": {"enum": ["a", "b"], "description": " Which. "},
            "tags": {"type": "array", "items": {"type": "string"}}}}),
            ),
            spec(
                "nested",
                "",
                json!({"type": "object", "properties": {"at": {"type": "object"}}}),
            ),
        ];
        let section = render_protocol_section(&specs);
        assert_eq!(section, render_protocol_section(&specs.clone()));
        assert!(section.starts_with("## Tool-use protocol\n\n"), "{section}");
        assert!(section.contains(
        "\n<tool_call>{\"name\": \"TOOL_NAME\", \"arguments\": {\"ARGUMENT\": \"VALUE\"}}</tool_call>\n"
    ));
        assert!(section.contains("several calls in one reply"));
        assert!(section.contains("<tool_result name=\"TOOL_NAME\" id=\"ID\">...</tool_result>"));
        assert!(section.ends_with(concat!(
        "### Tools\n",
        "\n#### read_file\nRead a file.\n",
        "Arguments:\n- path (string, required)\n",
        "\n#### now\n",
        "Arguments: none\n",
        "\n#### pick\n",
        "Arguments:\n- how (one of \"a\", \"b\"): Which.\n- tags (array of string)\n",
        "\n#### nested\n",
        "Arguments (JSON Schema): {\"properties\":{\"at\":{\"type\":\"object\"}},\"type\":\"object\"}\n",
    )), "{section}");
        // The example in the section is itself a call the parser understands.
        let example = parse_reply(&section, "");
        assert_eq!(example.len(), 3, "{example:?}");
        assert!(matches!(&example[1], TextToolEvent::Call(c) if c.name == "TOOL_NAME"));
        assert_eq!(render_protocol_section(&[]), "");
    }
}
