//! Decoding the conversation of an Anthropic Messages request: `system` and `messages`.
//!
//! Promises:
//! - `system`, a string or an array of `text` blocks, becomes one system message of text
//!   blocks, first in history;
//! - each message (`role` `user`, `assistant`, or `system`, which newer models take
//!   mid-conversation; content a string or blocks) becomes one
//!   message of the same blocks, in order: `text`; `image` (a `base64` source → bytes and
//!   media type, a `url` source → the URL); `thinking` with its `signature`;
//!   `redacted_thinking` with its `data`; `tool_use` with its input; `tool_result` (content a
//!   string or `text`/`image` blocks, `is_error`);
//! - a block no qore-core block carries (`document`, `search_result`, `server_tool_use`,
//!   `web_search_tool_result`, `container_upload`, any other type, an image from the Files
//!   API) is a 400 naming its type and place (`messages[1].content[0]: document blocks
//!   cannot be carried`): dropping it would change the answer;
//! - `cache_control` on any block is dropped and named; `citations` on a text block too.

use base64::Engine as _;
use qore_core::{ContentBlock, ImageData, ImageSource, Message, Role, ToolResultPart};
use serde_json::{Map, Value};

use super::request::{present, wrong_type};
use crate::{Inbound, ServeError};

/// `system` → a system message, pushed first.
pub fn system(value: &Value, inbound: &mut Inbound) -> Result<(), ServeError> {
    let blocks = match value {
        Value::String(text) => vec![ContentBlock::text(text.as_str())],
        Value::Array(items) => {
            let mut blocks = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let place = format!("system[{i}]");
                let block = object(item, &place)?;
                match kind(block, &place)? {
                    "text" => {
                        hints(block, &[], inbound);
                        blocks.push(ContentBlock::text(string(block, "text", &place)?));
                    }
                    other => return Err(not_carried(&place, other)),
                }
            }
            blocks
        }
        _ => return Err(wrong_type("system", "a string or an array of text blocks")),
    };
    if !blocks.is_empty() {
        inbound.history.push(Message::new(Role::System, blocks));
    }
    Ok(())
}

/// `messages` → history, in order.
pub fn messages(items: &[Value], inbound: &mut Inbound) -> Result<(), ServeError> {
    for (i, item) in items.iter().enumerate() {
        let place = format!("messages[{i}]");
        let message = object(item, &place)?;
        let role = match present(message, "role") {
            Some(Value::String(role)) if role == "user" => Role::User,
            Some(Value::String(role)) if role == "assistant" => Role::Assistant,
            // Newer models take system messages mid-conversation (recorded: claude-opus-4-8).
            Some(Value::String(role)) if role == "system" => Role::System,
            Some(Value::String(role)) => {
                return Err(ServeError::invalid(
                    format!("{place}.role"),
                    format!(
                        "{place}.role: {role:?} is not a role here (user, assistant or system)"
                    ),
                ))
            }
            Some(_) => return Err(wrong_type(&format!("{place}.role"), "a string")),
            None => {
                return Err(ServeError::invalid(
                    format!("{place}.role"),
                    format!("{place}.role: a required field"),
                ))
            }
        };
        let blocks = match present(message, "content") {
            Some(Value::String(text)) => vec![ContentBlock::text(text.as_str())],
            Some(Value::Array(blocks)) => (blocks.iter().enumerate())
                .map(|(j, block)| content_block(block, &format!("{place}.content[{j}]"), inbound))
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(wrong_type(
                    &format!("{place}.content"),
                    "a string or an array of blocks",
                ))
            }
            None => {
                return Err(ServeError::invalid(
                    format!("{place}.content"),
                    format!("{place}.content: a required field"),
                ))
            }
        };
        inbound.history.push(Message::new(role, blocks));
    }
    Ok(())
}

fn content_block(
    value: &Value,
    place: &str,
    inbound: &mut Inbound,
) -> Result<ContentBlock, ServeError> {
    let block = object(value, place)?;
    let block = match kind(block, place)? {
        "text" => {
            hints(block, &["citations"], inbound);
            ContentBlock::text(string(block, "text", place)?)
        }
        "image" => {
            hints(block, &[], inbound);
            ContentBlock::Image(image(block, place)?)
        }
        "thinking" => {
            hints(block, &[], inbound);
            ContentBlock::Thinking {
                text: string(block, "thinking", place)?.to_owned(),
                signature: match present(block, "signature") {
                    Some(Value::String(signature)) => Some(signature.clone()),
                    None => None,
                    Some(_) => return Err(wrong_type(&format!("{place}.signature"), "a string")),
                },
            }
        }
        "redacted_thinking" => {
            hints(block, &[], inbound);
            ContentBlock::RedactedThinking {
                data: string(block, "data", place)?.to_owned(),
            }
        }
        "tool_use" => {
            hints(block, &[], inbound);
            ContentBlock::ToolUse {
                id: string(block, "id", place)?.to_owned(),
                name: string(block, "name", place)?.to_owned(),
                input: match block.get("input") {
                    Some(input @ Value::Object(_)) => input.clone(),
                    None | Some(Value::Null) => Value::Object(Map::new()),
                    Some(_) => return Err(wrong_type(&format!("{place}.input"), "an object")),
                },
                raw_input: None,
                signature: None,
            }
        }
        "tool_result" => {
            hints(block, &[], inbound);
            tool_result(block, place, inbound)?
        }
        other => return Err(not_carried(place, other)),
    };
    Ok(block)
}

fn tool_result(
    block: &Map<String, Value>,
    place: &str,
    inbound: &mut Inbound,
) -> Result<ContentBlock, ServeError> {
    let content = match present(block, "content") {
        None => Vec::new(),
        Some(Value::String(text)) => vec![ToolResultPart::Text { text: text.clone() }],
        Some(Value::Array(parts)) => {
            let mut out = Vec::with_capacity(parts.len());
            for (k, part) in parts.iter().enumerate() {
                let place = format!("{place}.content[{k}]");
                let part = object(part, &place)?;
                out.push(match kind(part, &place)? {
                    "text" => {
                        hints(part, &["citations"], inbound);
                        ToolResultPart::Text {
                            text: string(part, "text", &place)?.to_owned(),
                        }
                    }
                    "image" => {
                        hints(part, &[], inbound);
                        ToolResultPart::Image(image(part, &place)?)
                    }
                    other => return Err(not_carried(&place, other)),
                });
            }
            out
        }
        Some(_) => {
            return Err(wrong_type(
                &format!("{place}.content"),
                "a string or an array of blocks",
            ))
        }
    };
    let is_error = match present(block, "is_error") {
        None => false,
        Some(Value::Bool(flag)) => *flag,
        Some(_) => return Err(wrong_type(&format!("{place}.is_error"), "a boolean")),
    };
    Ok(ContentBlock::ToolResult {
        tool_use_id: string(block, "tool_use_id", place)?.to_owned(),
        content,
        is_error,
    })
}

fn image(block: &Map<String, Value>, place: &str) -> Result<ImageSource, ServeError> {
    let place = format!("{place}.source");
    let source = match present(block, "source") {
        Some(source) => object(source, &place)?,
        None => {
            return Err(ServeError::invalid(
                place.clone(),
                format!("{place}: a required field"),
            ))
        }
    };
    match kind(source, &place)? {
        "base64" => {
            let media_type = string(source, "media_type", &place)?.to_owned();
            let data = string(source, "data", &place)?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data.trim().as_bytes())
                .map_err(|err| {
                    ServeError::invalid(
                        format!("{place}.data"),
                        format!("{place}.data: not base64 ({err})"),
                    )
                })?;
            Ok(ImageSource {
                media_type: Some(media_type),
                data: ImageData::Bytes(bytes),
            })
        }
        "url" => Ok(ImageSource {
            media_type: None,
            data: ImageData::Url(string(source, "url", &place)?.to_owned()),
        }),
        other => Err(ServeError::invalid(
            format!("{place}.type"),
            format!("{place}.type: {other} image sources cannot be carried (base64 or url can)"),
        )),
    }
}

/// Name the hints a block carries: `cache_control`, and the `extra` keys given.
fn hints(block: &Map<String, Value>, extra: &[&str], inbound: &mut Inbound) {
    if present(block, "cache_control").is_some() {
        inbound.drop_hint("cache_control");
    }
    for key in extra {
        if present(block, key).is_some() {
            inbound.drop_hint(key);
        }
    }
}

fn not_carried(place: &str, kind: &str) -> ServeError {
    ServeError::invalid(place, format!("{place}: {kind} blocks cannot be carried"))
}

fn object<'a>(value: &'a Value, place: &str) -> Result<&'a Map<String, Value>, ServeError> {
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(wrong_type(place, "an object")),
    }
}

/// The block's `type`.
fn kind<'a>(block: &'a Map<String, Value>, place: &str) -> Result<&'a str, ServeError> {
    match present(block, "type") {
        Some(Value::String(kind)) => Ok(kind),
        Some(_) => Err(wrong_type(&format!("{place}.type"), "a string")),
        None => Err(ServeError::invalid(
            format!("{place}.type"),
            format!("{place}.type: a required field"),
        )),
    }
}

/// The string at `key` of a block at `place`, required.
fn string<'a>(
    block: &'a Map<String, Value>,
    key: &str,
    place: &str,
) -> Result<&'a str, ServeError> {
    match present(block, key) {
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(wrong_type(&format!("{place}.{key}"), "a string")),
        None => Err(ServeError::invalid(
            format!("{place}.{key}"),
            format!("{place}.{key}: a required field"),
        )),
    }
}
