//! Encoding an Ollama `/api/chat` request body from history, and an `/api/generate`
//! fill-in-the-middle body ([`encode_fim`]: `prompt` and `suffix`, same options rules).
//!
//! - system blocks → `{"role": "system", "content"}` (text blocks joined by newlines);
//! - user text → `content` (text blocks joined by newlines), images → `images` (base64, as
//!   Ollama takes them; a `data:` URL is unwrapped, a remote URL is refused with a
//!   validation error since Ollama cannot fetch it);
//! - tool results → one `{"role": "tool", "content", "tool_name", "tool_call_id"}` message
//!   each, before the user's other content, in block order; `tool_name` is looked up from the
//!   call in an earlier assistant turn; an error result's text starts with `Error: `; images
//!   in a result go in that message's `images`;
//! - assistant turns → `content` (text), `thinking` (thinking blocks' text; Ollama has no
//!   signatures, redacted thinking cannot be replayed and is dropped), `tool_calls` as
//!   `{"id", "function": {"name", "arguments": {...}}}` with arguments as a JSON object. A
//!   call whose arguments were not a JSON object (raw text another wire produced) is sent
//!   with `{}`: this wire has no place for anything else.
//! - `options` carries `num_predict` (max tokens) and `temperature`; `tools` are in the
//!   OpenAI function shape; `stream` is explicit. `extra` is merged last at the top level
//!   (`think`, `format`, `keep_alive`, …), except that an `options` object in `extra` is
//!   merged into ours key by key (so `num_ctx` can be set without losing `num_predict`).
//!
//! Output is deterministic (sorted object keys).

use base64::Engine as _;
use qore_core::{ContentBlock, ErrorInfo, ImageData, ImageSource, Message, Role};
use serde_json::{json, Map, Value};

use crate::codec::{ChatRequest, FimRequest, RequestOptions};
use crate::protocols::shared::{self, joined_text};

pub fn encode(request: &ChatRequest<'_>) -> Result<Value, ErrorInfo> {
    if request.model.is_empty() {
        return Err(ErrorInfo::config("no model given for the request"));
    }
    let history = request.history.messages();
    let mut messages = Vec::with_capacity(history.len());
    for (at, message) in history.iter().enumerate() {
        encode_message(message, &history[..at], &mut messages)?;
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        body.insert("tools".into(), shared::function_tools(request.tools));
    }
    Ok(finish(body, request.options))
}

/// A fill-in-the-middle request to `/api/generate`: `{"model", "prompt" (the prefix),
/// "suffix", "stream", "options"}` (the server wraps them in the model's FIM template).
pub fn encode_fim(request: &FimRequest<'_>) -> Result<Value, ErrorInfo> {
    let body = shared::fim_prompt_body(request)?;
    Ok(finish(body, request.options))
}

/// `stream`, `options` (`num_predict`, `temperature`) and `extra`, as the module doc says.
fn finish(mut body: Map<String, Value>, options: &RequestOptions) -> Value {
    body.insert("stream".into(), json!(options.stream));
    let mut wire_options = Map::new();
    if let Some(max_tokens) = options.max_tokens {
        wire_options.insert("num_predict".into(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        wire_options.insert("temperature".into(), json!(temperature));
    }
    for (key, value) in &options.extra {
        match (key.as_str(), value) {
            ("options", Value::Object(extra)) => {
                wire_options.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            _ => {
                body.insert(key.clone(), value.clone());
            }
        }
    }
    if !wire_options.is_empty() {
        body.insert("options".into(), Value::Object(wire_options));
    }
    Value::Object(body)
}

/// A history encoded message by message ([`crate::Conversation`]): a tool result's entry
/// depends on the name of its call, read from an earlier turn.
pub struct Messages<'h> {
    pub history: &'h [Message],
}

impl crate::Conversation for Messages<'_> {
    fn context(&self, at: usize, key: &mut crate::KeyHasher) {
        let Some(message) = self.history.get(at) else {
            return;
        };
        let earlier = &self.history[..at];
        for block in &message.blocks {
            if let ContentBlock::ToolResult { tool_use_id, .. } = block {
                key.opt(tool_name(earlier, tool_use_id));
            }
        }
    }

    fn encode(&self, at: usize, out: &mut Vec<Value>) -> Result<(), ErrorInfo> {
        match self.history.get(at) {
            Some(message) => encode_message(message, &self.history[..at], out),
            None => Ok(()),
        }
    }
}

fn encode_message(
    message: &Message,
    earlier: &[Message],
    out: &mut Vec<Value>,
) -> Result<(), ErrorInfo> {
    match message.role {
        Role::System => {
            out.push(json!({"role": "system", "content": joined_text(&message.blocks)}));
            Ok(())
        }
        Role::User => encode_user(&message.blocks, earlier, out),
        Role::Assistant => {
            out.push(encode_assistant(&message.blocks));
            Ok(())
        }
    }
}

fn encode_user(
    blocks: &[ContentBlock],
    earlier: &[Message],
    out: &mut Vec<Value>,
) -> Result<(), ErrorInfo> {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let mut result_images = Vec::new();
                let text = shared::tool_result_text(content, *is_error, |image| {
                    result_images.push(base64_image(image)?);
                    Ok("")
                })?;
                let mut result = Map::new();
                result.insert("role".into(), json!("tool"));
                result.insert("content".into(), json!(text));
                result.insert("tool_call_id".into(), json!(tool_use_id));
                if let Some(name) = tool_name(earlier, tool_use_id) {
                    result.insert("tool_name".into(), json!(name));
                }
                if !result_images.is_empty() {
                    result.insert("images".into(), json!(result_images));
                }
                out.push(Value::Object(result));
            }
            ContentBlock::Text { text, .. } => texts.push(text.as_str()),
            ContentBlock::Image(image) => images.push(base64_image(image)?),
            // Reasoning and tool calls are the assistant's; a user turn carrying them is
            // replayed without them rather than as text the model did not write.
            ContentBlock::Thinking { .. }
            | ContentBlock::RedactedThinking { .. }
            | ContentBlock::ToolUse { .. } => {}
        }
    }
    if !texts.is_empty() || !images.is_empty() {
        let mut user = Map::new();
        user.insert("role".into(), json!("user"));
        user.insert("content".into(), json!(texts.join("\n")));
        if !images.is_empty() {
            user.insert("images".into(), json!(images));
        }
        out.push(Value::Object(user));
    }
    Ok(())
}

/// The name of the call `id`, from the latest assistant turn that made it.
fn tool_name<'a>(earlier: &'a [Message], id: &str) -> Option<&'a str> {
    earlier
        .iter()
        .rev()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| m.blocks.iter())
        .find_map(|block| match block {
            ContentBlock::ToolUse { id: call, name, .. } if call == id => Some(name.as_str()),
            _ => None,
        })
}

/// An image as Ollama takes it: base64 of the bytes, without a `data:` prefix.
fn base64_image(image: &ImageSource) -> Result<String, ErrorInfo> {
    match &image.data {
        ImageData::Bytes(bytes) => Ok(base64::engine::general_purpose::STANDARD.encode(bytes)),
        ImageData::Url(url) => match url.strip_prefix("data:").and_then(|r| r.split_once(',')) {
            Some((meta, data)) if meta.ends_with(";base64") => Ok(data.to_owned()),
            _ => Err(ErrorInfo::validation(format!(
                "Ollama takes images as inline bytes; cannot send the image at {:?}",
                url.chars().take(80).collect::<String>()
            ))),
        },
    }
}

fn encode_assistant(blocks: &[ContentBlock]) -> Value {
    let mut text = String::new();
    let mut thinking = String::new();
    let mut calls = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text: t, .. } => text.push_str(t),
            ContentBlock::Thinking { text: t, .. } => thinking.push_str(t),
            ContentBlock::ToolUse {
                id, name, input, ..
            } => {
                let arguments = match input {
                    Value::Object(_) => input.clone(),
                    _ => Value::Object(Map::new()),
                };
                calls.push(json!({"id": id, "function": {"name": name, "arguments": arguments}}));
            }
            ContentBlock::RedactedThinking { .. }
            | ContentBlock::Image(_)
            | ContentBlock::ToolResult { .. } => {}
        }
    }
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message.insert("content".into(), json!(text));
    if !thinking.is_empty() {
        message.insert("thinking".into(), json!(thinking));
    }
    if !calls.is_empty() {
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(message)
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
