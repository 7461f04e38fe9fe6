//! `messages` -> [`History`]: the inverse of qore-client's Chat Completions encoder.
//!
//! Promises:
//! - `system` and `developer` -> [`Role::System`] (text, from a string or `text` parts);
//! - `user` -> text and image blocks (`image_url` with a `data:` URL -> bytes with their media
//!   type, any other URL -> [`ImageData::Url`]);
//! - `assistant` -> thinking (`reasoning_content`, or OpenRouter's `reasoning`), then text
//!   (string, `text` or `refusal` parts, or `refusal`), then one [`ContentBlock::ToolUse`] per
//!   `tool_calls` entry (arguments parsed; text that is not JSON kept in `raw_input`);
//! - `tool` -> [`ContentBlock::ToolResult`] in a user message: consecutive results share one
//!   user message, and a `user` message right after them joins it (the client writes one
//!   user turn as its results, then its other content);
//! - parts that would change the answer if lost (`input_audio`, `file`, audio or video
//!   references, anything unknown) are a 400 naming them; hints (`name`, `cache_control`,
//!   Mistral's `prefix` …) are named in [`Inbound::dropped`].

use base64::Engine as _;
use qore_core::{
    ContentBlock, History, ImageData, ImageSource, Message, Role, ToolCallInput, ToolResultPart,
};
use serde_json::Value;

use super::json::{self, Object};
use crate::{Inbound, ServeError};

/// Decode `messages` (at `path`), naming dropped hints in `inbound`.
pub fn decode(value: &Value, path: &str, inbound: &mut Inbound) -> Result<History, ServeError> {
    let items = json::as_array(value, path)?;
    if items.is_empty() {
        return Err(ServeError::invalid(
            path,
            format!("`{path}` must not be empty"),
        ));
    }
    let mut out: Vec<Message> = Vec::with_capacity(items.len());
    // The last message pushed is a user message opened by tool results.
    let mut open_results = false;
    for (i, item) in items.iter().enumerate() {
        let path = json::at(path, i);
        let object = json::as_object(item, &path)?;
        let role = json::req_str(object, "role", &path)?;
        for key in object.keys() {
            if !known_key(role, key) && !object[key].is_null() {
                inbound.drop_hint(&format!("messages[].{key}"));
            }
        }
        match role {
            "system" | "developer" => {
                let blocks = content(object, &path, inbound, Parts::Text)?;
                out.push(Message::new(Role::System, blocks));
                open_results = false;
            }
            "user" => {
                let blocks = content(object, &path, inbound, Parts::TextAndImages)?;
                match out.last_mut() {
                    Some(last) if open_results => last.blocks.extend(blocks),
                    _ => out.push(Message::new(Role::User, blocks)),
                }
                open_results = false;
            }
            "assistant" => {
                out.push(Message::new(Role::Assistant, assistant(object, &path)?));
                open_results = false;
            }
            "tool" => {
                let result = tool_result(object, &path, inbound)?;
                match out.last_mut() {
                    Some(last) if open_results => last.blocks.push(result),
                    _ => out.push(Message::new(Role::User, vec![result])),
                }
                open_results = true;
            }
            "function" => {
                return Err(ServeError::invalid(
                    json::join(&path, "role"),
                    "legacy `function` messages are not supported; send `tool` messages",
                ))
            }
            other => {
                return Err(ServeError::invalid(
                    json::join(&path, "role"),
                    format!("unknown role `{other}`"),
                ))
            }
        }
    }
    Ok(History::from(out))
}

/// The keys a message of `role` is read for; any other is a dropped hint.
fn known_key(role: &str, key: &str) -> bool {
    match key {
        "role" | "content" => true,
        "tool_calls" | "reasoning_content" | "reasoning" | "refusal" | "function_call" => {
            role == "assistant"
        }
        "tool_call_id" => role == "tool",
        _ => false,
    }
}

/// What content may hold.
#[derive(Clone, Copy, PartialEq)]
enum Parts {
    /// `text` parts only (system and developer messages).
    Text,
    /// `text` and `image_url` parts (user messages and tool results).
    TextAndImages,
}

/// Content: a string, or an array of the parts `allowed`; another part is a 400 naming it.
fn content(
    object: &Object,
    path: &str,
    inbound: &mut Inbound,
    allowed: Parts,
) -> Result<Vec<ContentBlock>, ServeError> {
    let field = json::join(path, "content");
    match json::get(object, "content") {
        None => Ok(Vec::new()),
        Some(Value::String(text)) => Ok(vec![ContentBlock::text(text.as_str())]),
        Some(Value::Array(parts)) => (parts.iter().enumerate())
            .map(|(j, part)| {
                let path = json::at(&field, j);
                let part = json::as_object(part, &path)?;
                if json::get(part, "cache_control").is_some() {
                    inbound.drop_hint("cache_control");
                }
                match json::req_str(part, "type", &path)? {
                    "text" => Ok(ContentBlock::text(json::req_str(part, "text", &path)?)),
                    "image_url" if allowed == Parts::TextAndImages => {
                        Ok(ContentBlock::Image(image(part, &path, inbound)?))
                    }
                    other => Err(refused_part(&path, other)),
                }
            })
            .collect(),
        Some(other) => Err(json::wrong_type(
            &field,
            "a string or an array of parts",
            other,
        )),
    }
}

fn refused_part(path: &str, kind: &str) -> ServeError {
    let path = json::join(path, "type");
    ServeError::invalid(
        &path,
        format!("`{kind}` content parts are not supported here (`{path}`)"),
    )
}

/// An `image_url` part: `{"image_url": {"url", "detail"}}` (or the URL as a string).
fn image(part: &Object, path: &str, inbound: &mut Inbound) -> Result<ImageSource, ServeError> {
    let field = json::join(path, "image_url");
    let (url, url_path) = match json::get(part, "image_url") {
        Some(Value::String(url)) => (url.as_str(), field),
        Some(Value::Object(inner)) => {
            if json::get(inner, "detail").is_some_and(|d| d != "auto") {
                inbound.drop_hint("image_url.detail");
            }
            (
                json::req_str(inner, "url", &field)?,
                json::join(&field, "url"),
            )
        }
        Some(other) => return Err(json::wrong_type(&field, "an object", other)),
        None => return Err(json::missing(&field)),
    };
    image_source(url, &url_path)
}

/// A URL as an image: a `data:` URL's bytes and media type, or the URL itself.
pub fn image_source(url: &str, path: &str) -> Result<ImageSource, ServeError> {
    let Some(rest) = url.strip_prefix("data:") else {
        return Ok(ImageSource {
            media_type: None,
            data: ImageData::Url(url.to_owned()),
        });
    };
    let bad = |why: &str| ServeError::invalid(path, format!("`{path}`: {why}"));
    let (header, data) = rest
        .split_once(',')
        .ok_or_else(|| bad("a data: URL needs a comma"))?;
    let media_type = header
        .strip_suffix(";base64")
        .ok_or_else(|| bad("only base64 data: URLs are supported"))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim().as_bytes())
        .map_err(|err| bad(&format!("the data: URL is not valid base64 ({err})")))?;
    let media_type = media_type.split(';').next().unwrap_or("").trim();
    Ok(ImageSource {
        media_type: (!media_type.is_empty()).then(|| media_type.to_owned()),
        data: ImageData::Bytes(bytes),
    })
}

fn assistant(object: &Object, path: &str) -> Result<Vec<ContentBlock>, ServeError> {
    if json::get(object, "function_call").is_some() {
        return Err(ServeError::invalid(
            json::join(path, "function_call"),
            "legacy `function_call` is not supported; send `tool_calls`",
        ));
    }
    let mut blocks = Vec::new();
    let reasoning = match json::opt_str(object, "reasoning_content", path)? {
        Some(text) => Some(text),
        None => json::opt_str(object, "reasoning", path)?,
    };
    if let Some(text) = reasoning.filter(|t| !t.is_empty()) {
        blocks.push(ContentBlock::Thinking {
            text: text.to_owned(),
            signature: None,
        });
    }
    let field = json::join(path, "content");
    let mut text = String::new();
    match json::get(object, "content") {
        None => {}
        Some(Value::String(t)) => text.push_str(t),
        Some(Value::Array(parts)) => {
            for (j, part) in parts.iter().enumerate() {
                let path = json::at(&field, j);
                let part = json::as_object(part, &path)?;
                match json::req_str(part, "type", &path)? {
                    "text" => text.push_str(json::req_str(part, "text", &path)?),
                    "refusal" => text.push_str(json::req_str(part, "refusal", &path)?),
                    other => return Err(refused_part(&path, other)),
                }
            }
        }
        Some(other) => {
            return Err(json::wrong_type(
                &field,
                "a string or an array of parts",
                other,
            ))
        }
    }
    if let Some(refusal) = json::opt_str(object, "refusal", path)? {
        text.push_str(refusal);
    }
    if !text.is_empty() {
        blocks.push(ContentBlock::text(text));
    }
    if let Some(calls) = json::get(object, "tool_calls") {
        let field = json::join(path, "tool_calls");
        for (j, call) in json::as_array(calls, &field)?.iter().enumerate() {
            blocks.push(tool_call(call, &json::at(&field, j))?);
        }
    }
    Ok(blocks)
}

fn tool_call(call: &Value, path: &str) -> Result<ContentBlock, ServeError> {
    let call = json::as_object(call, path)?;
    if let Some(kind) = json::opt_str(call, "type", path)? {
        if kind != "function" {
            return Err(refused_part(path, kind));
        }
    }
    let id = json::req_str(call, "id", path)?;
    let field = json::join(path, "function");
    let function = json::as_object(
        json::get(call, "function").ok_or_else(|| json::missing(&field))?,
        &field,
    )?;
    let name = json::req_str(function, "name", &field)?;
    let (input, raw_input) = match json::get(function, "arguments") {
        None => (Value::Object(Default::default()), None),
        Some(Value::String(raw)) => match ToolCallInput::parse(raw) {
            ToolCallInput::Parsed(value) => (value, None),
            ToolCallInput::Invalid(err) => (Value::Null, Some(err.raw)),
        },
        // Some clients send the arguments as the object itself.
        Some(value @ Value::Object(_)) => (value.clone(), None),
        Some(other) => {
            return Err(json::wrong_type(
                &json::join(&field, "arguments"),
                "a string",
                other,
            ))
        }
    };
    Ok(ContentBlock::ToolUse {
        id: id.to_owned(),
        name: name.to_owned(),
        input,
        raw_input,
        signature: None,
    })
}

fn tool_result(
    object: &Object,
    path: &str,
    inbound: &mut Inbound,
) -> Result<ContentBlock, ServeError> {
    let tool_use_id = json::req_str(object, "tool_call_id", path)?.to_owned();
    let content = content(object, path, inbound, Parts::TextAndImages)?
        .into_iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text, .. } if text.is_empty() => None,
            ContentBlock::Text { text, .. } => Some(ToolResultPart::Text { text }),
            ContentBlock::Image(image) => Some(ToolResultPart::Image(image)),
            _ => None,
        })
        .collect();
    Ok(ContentBlock::ToolResult {
        tool_use_id,
        content,
        is_error: false,
    })
}
