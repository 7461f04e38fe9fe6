//! Encoding an Anthropic Messages request body from history.
//!
//! - system messages (wherever they are in history) → the top-level `system` array of text
//!   blocks, in order;
//! - user and assistant messages → `{"role", "content": [blocks]}`; consecutive messages of
//!   one role are merged into one turn, and in a user turn the `tool_result` blocks come
//!   first (the API requires them right after the `tool_use` turn); a turn left empty is
//!   dropped; empty and whitespace-only text blocks are dropped, in tool results too (the
//!   API rejects them);
//! - images → `{"type": "image", "source": {"type": "base64", "media_type", "data"}}` (a
//!   `data:` URL too; an unknown media type is sniffed from the bytes), other URLs →
//!   `{"source": {"type": "url", "url"}}`;
//! - tool results → `{"type": "tool_result", "tool_use_id", "content": [text and image
//!   blocks], "is_error": true}` (`is_error` only when set);
//! - assistant turns → thinking with its signature (an unsigned thinking block, from another
//!   provider, is left out: the API accepts none), `redacted_thinking` with its `data`, text,
//!   `tool_use` with the parsed input (input that was not a JSON object goes back as
//!   `{"raw_input": "<the text the model sent>"}`, since the wire takes objects only);
//!   images and tool results do not belong to the assistant and are left out;
//! - tools → `{"name", "description", "input_schema"}`; `max_tokens` (required by the API)
//!   defaults to [`DEFAULT_MAX_TOKENS`]; `stream`, `temperature`; `extra` merged last;
//! - with cache breakpoints on: `cache_control: {"type": "ephemeral"}` on the last system
//!   block, the last tool and the last block of the last user turn (3 of the 4 the API
//!   allows).
//!
//! Output is deterministic (sorted object keys), so re-encoding the same history gives the
//! same bytes.

use base64::Engine as _;
use qore_core::{ContentBlock, ErrorInfo, ImageData, ImageSource, Role, ToolResultPart};
use serde_json::{json, Map, Value};

use crate::codec::ChatRequest;

/// `max_tokens` when the request does not say: the API requires the field.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

pub fn encode(request: &ChatRequest<'_>, cache_breakpoints: bool) -> Result<Value, ErrorInfo> {
    if request.model.is_empty() {
        return Err(ErrorInfo::config("no model given for the request"));
    }
    let mut system = Vec::new();
    let mut turns: Vec<(Role, Vec<Value>)> = Vec::new();
    for message in request.history {
        let blocks = match message.role {
            Role::System => {
                system.extend(
                    message
                        .blocks
                        .iter()
                        .filter_map(ContentBlock::as_text)
                        .filter(|text| !text.trim().is_empty())
                        .map(|text| json!({"type": "text", "text": text})),
                );
                continue;
            }
            Role::User => user_blocks(&message.blocks),
            Role::Assistant => assistant_blocks(&message.blocks),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((role, content)) if *role == message.role => content.extend(blocks),
            _ => turns.push((message.role, blocks)),
        }
    }
    for (role, content) in &mut turns {
        if *role == Role::User {
            // Stable: tool results first, everything else after, each in its order.
            content.sort_by_key(|block| block["type"] != "tool_result");
        }
    }

    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| {
            let mut spec = Map::new();
            spec.insert("name".into(), json!(tool.name));
            if !tool.description.is_empty() {
                spec.insert("description".into(), json!(tool.description));
            }
            let schema = match &tool.input_schema {
                Value::Null => json!({"type": "object", "properties": {}}),
                schema => schema.clone(),
            };
            spec.insert("input_schema".into(), schema);
            Value::Object(spec)
        })
        .collect();

    if cache_breakpoints {
        let last_user = turns
            .iter_mut()
            .rev()
            .find(|(role, _)| *role == Role::User)
            .and_then(|(_, content)| content.last_mut());
        for block in [system.last_mut(), tools.last_mut(), last_user]
            .into_iter()
            .flatten()
        {
            if let Value::Object(block) = block {
                block.insert("cache_control".into(), json!({"type": "ephemeral"}));
            }
        }
    }

    let options = request.options;
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert(
        "max_tokens".into(),
        json!(options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    let messages = turns
        .into_iter()
        .map(|(role, content)| {
            let role = if role == Role::User {
                "user"
            } else {
                "assistant"
            };
            json!({"role": role, "content": content})
        })
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    body.insert("stream".into(), json!(options.stream));
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    for (key, value) in &options.extra {
        body.insert(key.clone(), value.clone());
    }
    Ok(Value::Object(body))
}

fn user_blocks(blocks: &[ContentBlock]) -> Vec<Value> {
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks {
        match block {
            ContentBlock::Text { text, .. } if !text.trim().is_empty() => {
                out.push(json!({"type": "text", "text": text}))
            }
            ContentBlock::Image(image) => out.push(image_block(image)),
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let mut result = Map::new();
                result.insert("type".into(), json!("tool_result"));
                result.insert("tool_use_id".into(), json!(tool_use_id));
                let parts: Vec<Value> = content
                    .iter()
                    .filter_map(|part| match part {
                        ToolResultPart::Text { text } if text.trim().is_empty() => None,
                        ToolResultPart::Text { text } => {
                            Some(json!({"type": "text", "text": text}))
                        }
                        ToolResultPart::Image(image) => Some(image_block(image)),
                    })
                    .collect();
                if !parts.is_empty() {
                    result.insert("content".into(), Value::Array(parts));
                }
                if *is_error {
                    result.insert("is_error".into(), json!(true));
                }
                out.push(Value::Object(result));
            }
            // Reasoning and tool calls are the assistant's; a user turn carrying them is
            // replayed without them rather than as text the model did not write.
            ContentBlock::Text { .. }
            | ContentBlock::Thinking { .. }
            | ContentBlock::RedactedThinking { .. }
            | ContentBlock::ToolUse { .. } => {}
        }
    }
    out
}

fn assistant_blocks(blocks: &[ContentBlock]) -> Vec<Value> {
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks {
        match block {
            ContentBlock::Text { text, .. } if !text.trim().is_empty() => {
                out.push(json!({"type": "text", "text": text}))
            }
            ContentBlock::Thinking {
                text,
                signature: Some(signature),
            } => out.push(json!({"type": "thinking", "thinking": text, "signature": signature})),
            ContentBlock::RedactedThinking { data } => {
                out.push(json!({"type": "redacted_thinking", "data": data}))
            }
            ContentBlock::ToolUse {
                id,
                name,
                input,
                raw_input,
                ..
            } => {
                let input = match (input, raw_input) {
                    (Value::Object(_), _) => input.clone(),
                    (_, Some(raw)) => json!({ "raw_input": raw }),
                    (Value::Null, None) => json!({}),
                    (other, None) => json!({ "raw_input": other.to_string() }),
                };
                out.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
            ContentBlock::Text { .. }
            | ContentBlock::Thinking { .. }
            | ContentBlock::Image(_)
            | ContentBlock::ToolResult { .. } => {}
        }
    }
    out
}

fn image_block(image: &ImageSource) -> Value {
    let source = match &image.data {
        ImageData::Bytes(bytes) => {
            let media_type = image
                .media_type
                .clone()
                .unwrap_or_else(|| sniff_media_type(bytes).to_owned());
            json!({
                "type": "base64",
                "media_type": media_type,
                "data": base64::engine::general_purpose::STANDARD.encode(bytes),
            })
        }
        ImageData::Url(url) => match data_url(url) {
            Some((media_type, data)) => json!({
                "type": "base64",
                "media_type": image.media_type.as_deref().unwrap_or(media_type),
                "data": data,
            }),
            None => json!({"type": "url", "url": url}),
        },
    };
    json!({"type": "image", "source": source})
}

/// `data:<media type>;base64,<data>` → (media type, data).
fn data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (meta, data) = rest.split_once(',')?;
    let media_type = meta.strip_suffix(";base64")?;
    Some((media_type, data))
}

/// The image type of `bytes` from their first bytes (the four types the API accepts).
fn sniff_media_type(bytes: &[u8]) -> &'static str {
    if bytes.starts_with(b"\x89PNG") {
        "image/png"
    } else if bytes.starts_with(b"\xFF\xD8\xFF") {
        "image/jpeg"
    } else if bytes.starts_with(b"GIF8") {
        "image/gif"
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        "image/webp"
    } else {
        "application/octet-stream"
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
