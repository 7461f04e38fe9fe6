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
use qore_core::{ContentBlock, ErrorInfo, ImageData, ImageSource, Message, Role, ToolResultPart};
use serde_json::{json, Map, Value};

use crate::codec::ChatRequest;

/// `max_tokens` when the request does not say: the API requires the field.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

pub fn encode(request: &ChatRequest<'_>, cache_breakpoints: bool) -> Result<Value, ErrorInfo> {
    if request.model.is_empty() {
        return Err(ErrorInfo::config("no model given for the request"));
    }
    let history = request.history.messages();
    let mut system: Vec<Value> = (history.iter())
        .filter(|message| message.role == Role::System)
        .flat_map(|message| &message.blocks)
        .filter_map(ContentBlock::as_text)
        .filter(|text| !text.trim().is_empty())
        .map(|text| json!({"type": "text", "text": text}))
        .collect();
    let turns = Turns::new(history, cache_breakpoints);
    let mut messages = Vec::with_capacity(turns.ranges.len());
    for &(start, _) in &turns.ranges {
        messages.extend(turns.turn(start));
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
        // The last user turn's mark is [`Turns::turn`]'s.
        for block in [system.last_mut(), tools.last_mut()].into_iter().flatten() {
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

/// A history as turns: consecutive user (or assistant) messages that send blocks make one
/// turn; system messages and messages without blocks between them do not break it.
/// Also the history encoded turn by turn ([`crate::Conversation`]): an entry is a turn,
/// keyed also by whether it carries the last user turn's cache mark.
pub struct Turns<'h> {
    history: &'h [Message],
    /// Each turn's first message and the end (exclusive) of its messages.
    ranges: Vec<(usize, usize)>,
    /// The first message of the turn marked for the prompt cache (the last user turn).
    marked: Option<usize>,
}

impl<'h> Turns<'h> {
    pub fn new(history: &'h [Message], cache_breakpoints: bool) -> Self {
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        let mut role = None;
        for (at, message) in history.iter().enumerate() {
            if message.role == Role::System || !message.blocks.iter().any(|b| sent(message.role, b))
            {
                continue;
            }
            match ranges.last_mut() {
                Some((_, end)) if role == Some(message.role) => *end = at + 1,
                _ => ranges.push((at, at + 1)),
            }
            role = Some(message.role);
        }
        let marked = (ranges.iter().rev())
            .find(|(start, _)| history[*start].role == Role::User)
            .map(|(start, _)| *start)
            .filter(|_| cache_breakpoints);
        Turns {
            history,
            ranges,
            marked,
        }
    }

    fn range(&self, start: usize) -> Option<(usize, usize)> {
        let i = self.ranges.binary_search_by_key(&start, |r| r.0).ok()?;
        Some(self.ranges[i])
    }

    /// The turn that starts at message `start`: `{"role", "content"}`.
    fn turn(&self, start: usize) -> Option<Value> {
        let (start, end) = self.range(start)?;
        let role = self.history[start].role;
        let mut content = Vec::new();
        for message in &self.history[start..end] {
            match message.role {
                Role::User => content.extend(user_blocks(&message.blocks)),
                Role::Assistant => content.extend(assistant_blocks(&message.blocks)),
                Role::System => {}
            }
        }
        if role == Role::User {
            // Stable: tool results first, everything else after, each in its order.
            content.sort_by_key(|block| block["type"] != "tool_result");
        }
        if self.marked == Some(start) {
            if let Some(Value::Object(block)) = content.last_mut() {
                block.insert("cache_control".into(), json!({"type": "ephemeral"}));
            }
        }
        let role = if role == Role::User {
            "user"
        } else {
            "assistant"
        };
        Some(json!({"role": role, "content": content}))
    }
}

impl crate::Conversation for Turns<'_> {
    fn outside(&self, at: usize) -> bool {
        self.history.get(at).is_some_and(|m| m.role == Role::System)
    }

    fn entry_end(&self, at: usize) -> usize {
        self.range(at).map_or(at + 1, |(_, end)| end)
    }

    fn context(&self, at: usize, key: &mut crate::KeyHasher) {
        key.tag(u8::from(self.marked == Some(at)));
    }

    fn encode(&self, at: usize, out: &mut Vec<Value>) -> Result<(), ErrorInfo> {
        out.extend(self.turn(at));
        Ok(())
    }
}

/// Whether `block` of a `role` message is sent (see the module doc): the rule
/// [`user_blocks`] and [`assistant_blocks`] follow.
fn sent(role: Role, block: &ContentBlock) -> bool {
    match (role, block) {
        (Role::User | Role::Assistant, ContentBlock::Text { text, .. }) => !text.trim().is_empty(),
        (Role::User, ContentBlock::Image(_) | ContentBlock::ToolResult { .. }) => true,
        (
            Role::Assistant,
            ContentBlock::Thinking {
                signature: Some(_), ..
            }
            | ContentBlock::RedactedThinking { .. }
            | ContentBlock::ToolUse { .. },
        ) => true,
        _ => false,
    }
}

fn user_blocks(blocks: &[ContentBlock]) -> Vec<Value> {
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks.iter().filter(|b| sent(Role::User, b)) {
        match block {
            ContentBlock::Text { text, .. } => out.push(json!({"type": "text", "text": text})),
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
            // Not sent: reasoning and tool calls are the assistant's; a user turn carrying
            // them is replayed without them rather than as text the model did not write.
            _ => {}
        }
    }
    out
}

fn assistant_blocks(blocks: &[ContentBlock]) -> Vec<Value> {
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks.iter().filter(|b| sent(Role::Assistant, b)) {
        match block {
            ContentBlock::Text { text, .. } => out.push(json!({"type": "text", "text": text})),
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
            // Not sent: unsigned thinking, images and tool results.
            _ => {}
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
