//! Encoding a Responses API request body from history.
//!
//! - system messages before the first user or assistant turn → `instructions` (joined by a
//!   blank line; the ChatGPT Codex backend accepts instructions only there); a system
//!   message later in the conversation → a `developer` message item at its place;
//! - user text and images → one `message` item (`input_text`, `input_image` with a URL or
//!   a `data:` URL); tool results → `function_call_output` items `{call_id, output}`, in
//!   order, before the user's other content; `output` is the text, or `input_text` /
//!   `input_image` parts when the result carries images; an error result's text starts
//!   with `Error: ` (the wire has no error flag);
//! - assistant turns → items in block order: text → `message` items with `output_text`;
//!   thinking with a signature → `reasoning` `{summary: [summary_text], encrypted_content}`
//!   (stateless replay); thinking without one (servers that do not encrypt) →
//!   `reasoning` with `content: [reasoning_text]`; redacted thinking → `reasoning` with its
//!   data as `encrypted_content`; tool calls → `function_call` `{call_id, name, arguments}`
//!   (the parsed input re-serialized, or the raw text the model sent when it was not JSON).
//!   Item ids (`rs_…`, `msg_…`, `fc_…`) are not replayed: with `store: false` the server
//!   has nothing to look them up in;
//! - tools → `{type: function, name, description, parameters}`; `stream`;
//!   `max_output_tokens`; `temperature`; with `stateless` (the default) `store: false` and
//!   `include: ["reasoning.encrypted_content"]`; `extra` fields last.
//!
//! Output is deterministic (sorted object keys), so re-encoding the same history gives the
//! same bytes.

use qore_core::{ContentBlock, ErrorInfo, ImageSource, Message, Role, ToolResultPart};
use serde_json::{json, Map, Value};

use crate::codec::ChatRequest;
use crate::protocols::shared::{self, joined_text};

pub fn encode(request: &ChatRequest<'_>, stateless: bool) -> Result<Value, ErrorInfo> {
    if request.model.is_empty() {
        return Err(ErrorInfo::config("no model given for the request"));
    }
    let mut instructions: Vec<String> = Vec::new();
    let mut input = Vec::with_capacity(request.history.len());
    for message in request.history {
        let first = input.is_empty();
        encode_message(message, first, &mut instructions, &mut input);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("input".into(), Value::Array(input));
    if !instructions.is_empty() {
        body.insert("instructions".into(), json!(instructions.join("\n\n")));
    }
    let options = request.options;
    body.insert("stream".into(), json!(options.stream));
    if stateless {
        body.insert("store".into(), json!(false));
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.input_schema,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    Ok(shared::finish_body(body, options, "max_output_tokens"))
}

/// A history encoded message by message ([`crate::Conversation`]): the messages before the
/// first input item (system prompts, which go to `instructions`) lie outside `input`; every
/// later message's items depend on it alone.
pub struct Items<'h> {
    history: &'h [Message],
    /// Messages before the first that adds an input item.
    leading: usize,
}

impl<'h> Items<'h> {
    pub fn new(history: &'h [Message]) -> Self {
        let mut scratch = (Vec::new(), Vec::new());
        let leading = (history.iter())
            .position(|message| {
                encode_message(message, true, &mut scratch.0, &mut scratch.1);
                !scratch.1.is_empty()
            })
            .unwrap_or(history.len());
        Items { history, leading }
    }
}

impl crate::Conversation for Items<'_> {
    fn outside(&self, at: usize) -> bool {
        at < self.leading
    }

    fn encode(&self, at: usize, out: &mut Vec<Value>) -> Result<(), ErrorInfo> {
        if let Some(message) = self.history.get(at) {
            encode_message(message, at <= self.leading, &mut Vec::new(), out);
        }
        Ok(())
    }
}

/// Append `message`'s items to `input`; `first`: no item precedes it (a system message
/// then goes to `instructions`).
fn encode_message(
    message: &Message,
    first: bool,
    instructions: &mut Vec<String>,
    input: &mut Vec<Value>,
) {
    match message.role {
        Role::System if first => instructions.push(joined_text(&message.blocks)),
        Role::System => input.push(json!({
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": joined_text(&message.blocks)}],
        })),
        Role::User => encode_user(&message.blocks, input),
        Role::Assistant => encode_assistant(&message.blocks, input),
    }
}

fn encode_user(blocks: &[ContentBlock], input: &mut Vec<Value>) {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => input.push(json!({
                "type": "function_call_output",
                "call_id": tool_use_id,
                "output": tool_output(content, *is_error),
            })),
            ContentBlock::Text { text, .. } => {
                parts.push(json!({"type": "input_text", "text": text}))
            }
            ContentBlock::Image(image) => parts.push(input_image(image)),
            // Reasoning and tool calls are the assistant's; a user turn carrying them is
            // replayed without them rather than as text the model did not write.
            ContentBlock::Thinking { .. }
            | ContentBlock::RedactedThinking { .. }
            | ContentBlock::ToolUse { .. } => {}
        }
    }
    if !parts.is_empty() {
        input.push(json!({"type": "message", "role": "user", "content": parts}));
    }
}

/// A tool result's `output`: its text, or content parts when it carries images.
fn tool_output(content: &[ToolResultPart], is_error: bool) -> Value {
    let prefix = if is_error { "Error: " } else { "" };
    if content
        .iter()
        .all(|part| matches!(part, ToolResultPart::Text { .. }))
    {
        let mut text = prefix.to_owned();
        for part in content {
            if let ToolResultPart::Text { text: t } = part {
                text.push_str(t);
            }
        }
        return json!(text);
    }
    let mut parts = Vec::with_capacity(content.len() + 1);
    if is_error {
        parts.push(json!({"type": "input_text", "text": prefix}));
    }
    for part in content {
        parts.push(match part {
            ToolResultPart::Text { text } => json!({"type": "input_text", "text": text}),
            ToolResultPart::Image(image) => input_image(image),
        });
    }
    Value::Array(parts)
}

fn input_image(image: &ImageSource) -> Value {
    let url = shared::image_url(image);
    json!({"type": "input_image", "image_url": url})
}

fn encode_assistant(blocks: &[ContentBlock], input: &mut Vec<Value>) {
    let mut text = String::new();
    let flush = |text: &mut String, input: &mut Vec<Value>| {
        if !text.is_empty() {
            input.push(json!({
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": std::mem::take(text)}],
            }));
        }
    };
    for block in blocks {
        match block {
            ContentBlock::Text { text: t, .. } => text.push_str(t),
            ContentBlock::Thinking { text: t, signature } => {
                flush(&mut text, input);
                match signature {
                    Some(signature) => {
                        let summary = if t.is_empty() {
                            json!([])
                        } else {
                            json!([{"type": "summary_text", "text": t}])
                        };
                        input.push(json!({
                            "type": "reasoning",
                            "summary": summary,
                            "encrypted_content": signature,
                        }));
                    }
                    None if t.is_empty() => {}
                    None => input.push(json!({
                        "type": "reasoning",
                        "summary": [],
                        "content": [{"type": "reasoning_text", "text": t}],
                    })),
                }
            }
            ContentBlock::RedactedThinking { data } => {
                flush(&mut text, input);
                input.push(json!({"type": "reasoning", "summary": [], "encrypted_content": data}));
            }
            ContentBlock::ToolUse {
                id,
                name,
                input: arguments,
                raw_input,
                ..
            } => {
                flush(&mut text, input);
                let arguments = match raw_input {
                    Some(raw) => raw.clone(),
                    None => arguments.to_string(),
                };
                input.push(json!({
                    "type": "function_call",
                    "call_id": id,
                    "name": name,
                    "arguments": arguments,
                }));
            }
            ContentBlock::Image(_) | ContentBlock::ToolResult { .. } => {}
        }
    }
    flush(&mut text, input);
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
