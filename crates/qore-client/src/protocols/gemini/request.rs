//! Encoding a Gemini `GenerateContentRequest` from history.
//!
//! - system messages → `systemInstruction: {parts: [{text}]}` (one part per text block);
//! - user turns → `{"role": "user", "parts": [...]}`: tool results first, as
//!   `functionResponse {name, response, id?, parts?}`, then text, images (bytes and `data:`
//!   URLs as `inlineData {mimeType, data}`, other URLs as `fileData {mimeType?, fileUri}`);
//!   a result's `name` is the name of the call it answers, looked up by `tool_use_id` in the
//!   history (Gemini requires it; an unknown id is a Validation error); `response` is
//!   `{"result": text}`, or `{"error": text}` for a failed tool (Gemini's documented
//!   convention); images in a result go in the response's own `parts` (Gemini 3 multimodal
//!   function responses), image URLs there as text (Gemini takes no `fileData` there);
//! - assistant turns → `{"role": "model", "parts": [...]}`, one part per block, in order:
//!   thinking → `{text, thought: true, thoughtSignature?}`, text → `{text,
//!   thoughtSignature?}`, tool calls → `{functionCall: {name, args, id?}, thoughtSignature?}`
//!   with the signature exactly on the part it came with; ids this engine synthesized are
//!   not sent (Gemini never saw them); redacted thinking (another provider's) is dropped;
//! - `generationConfig {maxOutputTokens, temperature}`; tools as
//!   `[{functionDeclarations: [{name, description, parameters}]}]`, parameters sanitized
//!   ([`super::schema`]);
//! - `options.extra` merged last: its fields win; where both sides are objects
//!   (`generationConfig`), their keys are merged one level deep, so adding a
//!   `thinkingConfig` keeps `maxOutputTokens`.
//!
//! Messages that end up with no parts are left out (Gemini rejects empty contents). Output
//! is deterministic (sorted object keys).

use std::collections::HashMap;

use base64::Engine as _;
use qore_core::{ContentBlock, ErrorInfo, ImageData, ImageSource, Message, Role, ToolResultPart};
use serde_json::{json, Map, Value};

use super::{ids, schema};
use crate::codec::ChatRequest;

pub fn encode(request: &ChatRequest<'_>) -> Result<Value, ErrorInfo> {
    if request.model.is_empty() {
        return Err(ErrorInfo::config("no model given for the request"));
    }
    let call_names = call_names(request.history.messages());
    let mut system = Vec::new();
    let mut contents = Vec::with_capacity(request.history.len());
    for message in request.history {
        match message.role {
            Role::System => system.extend(
                message
                    .blocks
                    .iter()
                    .filter_map(ContentBlock::as_text)
                    .map(|text| json!({ "text": text })),
            ),
            _ => encode_content(message, &call_names, &mut contents)?,
        }
    }

    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    if !system.is_empty() {
        body.insert("systemInstruction".into(), json!({ "parts": system }));
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let mut declaration = Map::new();
                declaration.insert("name".into(), json!(tool.name));
                if !tool.description.is_empty() {
                    declaration.insert("description".into(), json!(tool.description));
                }
                declaration.insert("parameters".into(), schema::sanitize(&tool.input_schema));
                Value::Object(declaration)
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{ "functionDeclarations": declarations }]),
        );
    }
    let options = request.options;
    let mut config = Map::new();
    if let Some(max_tokens) = options.max_tokens {
        config.insert("maxOutputTokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        config.insert("temperature".into(), json!(temperature));
    }
    if !config.is_empty() {
        body.insert("generationConfig".into(), Value::Object(config));
    }
    for (key, value) in &options.extra {
        match (body.get_mut(key), value) {
            (Some(Value::Object(ours)), Value::Object(theirs)) => {
                for (inner, value) in theirs {
                    ours.insert(inner.clone(), value.clone());
                }
            }
            _ => {
                body.insert(key.clone(), value.clone());
            }
        }
    }
    Ok(Value::Object(body))
}

/// The name of every call in `history`, by id (the last call with an id wins).
fn call_names(history: &[Message]) -> HashMap<&str, &str> {
    (history.iter())
        .flat_map(|m| &m.blocks)
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, .. } => Some((id.as_str(), name.as_str())),
            _ => None,
        })
        .collect()
}

/// The `contents` entry of a user or assistant message, none when it has no parts.
fn encode_content(
    message: &Message,
    call_names: &HashMap<&str, &str>,
    contents: &mut Vec<Value>,
) -> Result<(), ErrorInfo> {
    let (role, parts) = match message.role {
        Role::System => return Ok(()),
        Role::User => ("user", user_parts(&message.blocks, call_names)?),
        Role::Assistant => ("model", model_parts(&message.blocks)),
    };
    if !parts.is_empty() {
        contents.push(json!({"role": role, "parts": parts}));
    }
    Ok(())
}

/// A history encoded message by message ([`crate::Conversation`]): system messages lie
/// outside `contents`; a tool result's entry depends on the name of its call.
pub struct Contents<'h> {
    history: &'h [Message],
    call_names: HashMap<&'h str, &'h str>,
}

impl<'h> Contents<'h> {
    pub fn new(history: &'h [Message]) -> Self {
        Contents {
            history,
            call_names: call_names(history),
        }
    }
}

impl crate::Conversation for Contents<'_> {
    fn outside(&self, at: usize) -> bool {
        self.history.get(at).is_some_and(|m| m.role == Role::System)
    }

    fn context(&self, at: usize, key: &mut crate::KeyHasher) {
        for block in self.history.get(at).map_or(&[][..], |m| &m.blocks) {
            if let ContentBlock::ToolResult { tool_use_id, .. } = block {
                key.opt(self.call_names.get(tool_use_id.as_str()).copied());
            }
        }
    }

    fn encode(&self, at: usize, out: &mut Vec<Value>) -> Result<(), ErrorInfo> {
        match self.history.get(at) {
            Some(message) => encode_content(message, &self.call_names, out),
            None => Ok(()),
        }
    }
}

fn user_parts(
    blocks: &[ContentBlock],
    call_names: &HashMap<&str, &str>,
) -> Result<Vec<Value>, ErrorInfo> {
    let mut responses = Vec::new();
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let name = call_names.get(tool_use_id.as_str()).ok_or_else(|| {
                    ErrorInfo::validation(format!(
                        "a tool result answers call {tool_use_id:?}, which no assistant turn \
                         in the history made (Gemini needs the call's name)"
                    ))
                })?;
                responses.push(function_response(name, tool_use_id, content, *is_error));
            }
            ContentBlock::Text { text, .. } if !text.is_empty() => {
                parts.push(json!({ "text": text }))
            }
            ContentBlock::Image(image) => parts.push(image_part(image)),
            // Empty text; reasoning and tool calls are the model's, not the user's.
            ContentBlock::Text { .. }
            | ContentBlock::Thinking { .. }
            | ContentBlock::RedactedThinking { .. }
            | ContentBlock::ToolUse { .. } => {}
        }
    }
    responses.extend(parts);
    Ok(responses)
}

fn function_response(
    name: &str,
    tool_use_id: &str,
    content: &[ToolResultPart],
    is_error: bool,
) -> Value {
    let mut text = String::new();
    let mut media = Vec::new();
    for part in content {
        match part {
            ToolResultPart::Text { text: t } => text.push_str(t),
            ToolResultPart::Image(image) => match inline_data(image) {
                Some(inline) => media.push(json!({ "inlineData": inline })),
                // Gemini takes only inline media inside a function response.
                None => {
                    if let ImageData::Url(url) = &image.data {
                        text.push_str(&format!("[image: {url}]"));
                    }
                }
            },
        }
    }
    let key = if is_error { "error" } else { "result" };
    let mut response = Map::new();
    response.insert("name".into(), json!(name));
    response.insert("response".into(), json!({ key: text }));
    if !ids::is_synthesized(tool_use_id) {
        response.insert("id".into(), json!(tool_use_id));
    }
    if !media.is_empty() {
        response.insert("parts".into(), Value::Array(media));
    }
    json!({ "functionResponse": response })
}

fn model_parts(blocks: &[ContentBlock]) -> Vec<Value> {
    let mut parts = Vec::with_capacity(blocks.len());
    for block in blocks {
        let (mut part, signature) = match block {
            ContentBlock::Thinking { text, signature } => {
                if text.is_empty() && signature.is_none() {
                    continue;
                }
                (json!({"text": text, "thought": true}), signature)
            }
            ContentBlock::Text { text, signature } => {
                if text.is_empty() && signature.is_none() {
                    continue;
                }
                (json!({ "text": text }), signature)
            }
            ContentBlock::ToolUse {
                id,
                name,
                input,
                signature,
                ..
            } => {
                let mut call = Map::new();
                call.insert("name".into(), json!(name));
                // Gemini's args are an object; arguments that were not one (not valid JSON,
                // from another provider) are sent as no arguments.
                let args = match input {
                    Value::Object(_) => input.clone(),
                    _ => json!({}),
                };
                call.insert("args".into(), args);
                if !ids::is_synthesized(id) {
                    call.insert("id".into(), json!(id));
                }
                (json!({ "functionCall": call }), signature)
            }
            ContentBlock::Image(image) => (image_part(image), &None),
            ContentBlock::RedactedThinking { .. } | ContentBlock::ToolResult { .. } => continue,
        };
        if let Some(signature) = signature {
            part["thoughtSignature"] = json!(signature);
        }
        parts.push(part);
    }
    parts
}

/// An image as a part: inline bytes, or a file reference for a URL.
fn image_part(image: &ImageSource) -> Value {
    if let Some(inline) = inline_data(image) {
        return json!({ "inlineData": inline });
    }
    let mut file = Map::new();
    if let ImageData::Url(url) = &image.data {
        file.insert("fileUri".into(), json!(url));
        if let Some(mime) = image
            .media_type
            .clone()
            .or_else(|| mime_from_extension(url))
        {
            file.insert("mimeType".into(), json!(mime));
        }
    }
    json!({ "fileData": file })
}

/// `{mimeType, data}` for bytes or a base64 `data:` URL; `None` for other URLs.
fn inline_data(image: &ImageSource) -> Option<Value> {
    let engine = base64::engine::general_purpose::STANDARD;
    let (mime, data) = match &image.data {
        ImageData::Bytes(bytes) => {
            let mime = image
                .media_type
                .clone()
                .or_else(|| sniff(bytes).map(str::to_owned))
                .unwrap_or_else(|| "application/octet-stream".to_owned());
            (mime, engine.encode(bytes))
        }
        ImageData::Url(url) => {
            let (head, data) = url.strip_prefix("data:")?.split_once(',')?;
            let mime = head.strip_suffix(";base64")?;
            let mime = if mime.is_empty() {
                image.media_type.clone()?
            } else {
                mime.to_owned()
            };
            (mime, data.to_owned())
        }
    };
    Some(json!({"mimeType": mime, "data": data}))
}

fn sniff(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', ..] => Some("image/png"),
        [0xFF, 0xD8, 0xFF, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', ..] => Some("image/gif"),
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => Some("image/webp"),
        _ => None,
    }
}

fn mime_from_extension(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    let mime = match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "heic" => "image/heic",
        "heif" => "image/heif",
        "pdf" => "application/pdf",
        _ => return None,
    };
    Some(mime.to_owned())
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
