//! Decoding an Anthropic Messages request (`POST /v1/messages`) into an [`Inbound`].
//!
//! Promises:
//! - `model` and `messages` are required, and so is `max_tokens` (as the API requires;
//!   `count_tokens` bodies go without it); `temperature`, `top_p`, `stop_sequences` and
//!   `stream` are carried; `system` (a string or text blocks) becomes one
//!   [`qore_core::Role::System`] message, first; the messages' blocks are decoded by
//!   [`super::blocks`];
//! - client tools (`name`, `description`, `input_schema`) become [`ToolSpec`]s; hosted tools
//!   (a `type` other than `custom`: `web_search_…`, `bash_…`, `text_editor_…`,
//!   `code_execution_…`) are dropped and named by their type; `tool_choice` maps to
//!   [`ToolChoice`] (`any` is [`ToolChoice::Required`]), its `disable_parallel_tool_use`
//!   dropped and named;
//! - `output_config.format` (or the older top-level `output_format`) of type `json_schema`
//!   becomes [`ResponseFormat::JsonSchema`]; the rest of `output_config` (`effort`) is
//!   dropped and named `output_config`;
//! - hints no qore-core type carries are dropped and named once, by their wire names:
//!   `cache_control` (wherever it appears), `top_k`, `thinking`, `context_management`,
//!   `metadata`, `service_tier`, `container`, `mcp_servers`, and any other top-level key;
//!   a `null` value is taken as absent;
//! - headers: `anthropic-version` and `anthropic-beta` go to
//!   [`Inbound::passthrough_headers`]; `anthropic-beta` is also named as dropped (the
//!   server un-names it when the upstream speaks Anthropic);
//! - malformed JSON, a missing required field or a value of the wrong type is a 400
//!   ([`ServeError::invalid`]) naming the field (`messages[1].content[0].source.data`);
//!   no input makes it panic.

use axum::http::HeaderMap;
use qore_core::{ResponseFormat, ToolChoice, ToolSpec};
use serde_json::{Map, Value};

use super::blocks;
use crate::{Inbound, ServeError};

/// Decode a `/v1/messages` body (`max_tokens` required).
pub fn decode(body: &[u8], headers: &HeaderMap) -> Result<Inbound, ServeError> {
    decode_body(body, headers, true)
}

/// Decode a body; `require_max_tokens` is false for `count_tokens`.
pub fn decode_body(
    body: &[u8],
    headers: &HeaderMap,
    require_max_tokens: bool,
) -> Result<Inbound, ServeError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|err| ServeError::invalid("body", format!("the body is not JSON: {err}")))?;
    let Value::Object(fields) = value else {
        return Err(ServeError::invalid(
            "body",
            "the body must be a JSON object",
        ));
    };
    let mut inbound = Inbound::default();
    read_headers(headers, &mut inbound);

    inbound.model = match fields.get("model") {
        Some(Value::String(model)) if !model.is_empty() => model.clone(),
        Some(Value::String(_)) => return Err(ServeError::invalid("model", "model is empty")),
        None | Some(Value::Null) => {
            return Err(ServeError::invalid("model", "model: a required field"))
        }
        Some(_) => return Err(wrong_type("model", "a string")),
    };
    if let Some(system) = present(&fields, "system") {
        blocks::system(system, &mut inbound)?;
    }
    match present(&fields, "messages") {
        Some(Value::Array(messages)) => blocks::messages(messages, &mut inbound)?,
        Some(_) => return Err(wrong_type("messages", "an array")),
        None => {
            return Err(ServeError::invalid(
                "messages",
                "messages: a required field",
            ))
        }
    }
    inbound.max_tokens = match present(&fields, "max_tokens") {
        Some(value) => Some(
            (value.as_u64())
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| wrong_type("max_tokens", "a non-negative integer"))?,
        ),
        None if require_max_tokens => {
            return Err(ServeError::invalid(
                "max_tokens",
                "max_tokens: a required field",
            ))
        }
        None => None,
    };
    inbound.temperature = number(&fields, "temperature")?;
    inbound.top_p = number(&fields, "top_p")?;
    if let Some(value) = present(&fields, "stream") {
        inbound.stream = value
            .as_bool()
            .ok_or_else(|| wrong_type("stream", "a boolean"))?;
    }
    if let Some(value) = present(&fields, "stop_sequences") {
        inbound.stop = stop_sequences(value)?;
    }
    if let Some(value) = present(&fields, "tools") {
        tools(value, &mut inbound)?;
    }
    if let Some(value) = present(&fields, "tool_choice") {
        inbound.tool_choice = Some(tool_choice(value, &mut inbound)?);
    }
    if let Some(value) = present(&fields, "output_format") {
        inbound.response_format = output_format(value, "output_format")?;
    }
    if let Some(value) = present(&fields, "output_config") {
        output_config(value, &mut inbound)?;
    }
    for (key, value) in &fields {
        let carried = matches!(
            key.as_str(),
            "model"
                | "system"
                | "messages"
                | "max_tokens"
                | "temperature"
                | "top_p"
                | "stream"
                | "stop_sequences"
                | "tools"
                | "tool_choice"
                | "output_format"
                | "output_config"
        );
        if !carried && !value.is_null() {
            // top_k, thinking, context_management, metadata, cache_control, …
            inbound.drop_hint(key);
        }
    }
    Ok(inbound)
}

/// `anthropic-version` and `anthropic-beta`, each value as sent, for pass-through.
fn read_headers(headers: &HeaderMap, inbound: &mut Inbound) {
    for name in ["anthropic-version", "anthropic-beta"] {
        for value in headers.get_all(name) {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            inbound.passthrough_headers.push((name.to_owned(), value));
            if name == "anthropic-beta" {
                inbound.drop_hint("anthropic-beta");
            }
        }
    }
}

/// The value at `key`, `None` when absent or `null`.
pub(super) fn present<'a>(fields: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    fields.get(key).filter(|v| !v.is_null())
}

/// A 400: `place` is not of the type `expected` names.
pub(super) fn wrong_type(place: &str, expected: &str) -> ServeError {
    ServeError::invalid(place, format!("{place}: expected {expected}"))
}

fn number(fields: &Map<String, Value>, key: &str) -> Result<Option<f64>, ServeError> {
    match present(fields, key) {
        None => Ok(None),
        Some(value) => value
            .as_f64()
            .map(Some)
            .ok_or_else(|| wrong_type(key, "a number")),
    }
}

fn stop_sequences(value: &Value) -> Result<Vec<String>, ServeError> {
    let Value::Array(items) = value else {
        return Err(wrong_type("stop_sequences", "an array of strings"));
    };
    (items.iter().enumerate())
        .map(|(i, item)| match item {
            Value::String(stop) => Ok(stop.clone()),
            _ => Err(wrong_type(&format!("stop_sequences[{i}]"), "a string")),
        })
        .collect()
}

fn tools(value: &Value, inbound: &mut Inbound) -> Result<(), ServeError> {
    let Value::Array(items) = value else {
        return Err(wrong_type("tools", "an array"));
    };
    for (i, item) in items.iter().enumerate() {
        let place = format!("tools[{i}]");
        let Value::Object(tool) = item else {
            return Err(wrong_type(&place, "an object"));
        };
        match present(tool, "type") {
            None => {}
            Some(Value::String(kind)) if kind == "custom" => {}
            Some(Value::String(kind)) => {
                // A tool the provider runs itself: nothing here can run it.
                inbound.drop_hint(kind);
                continue;
            }
            Some(_) => return Err(wrong_type(&format!("{place}.type"), "a string")),
        }
        let name = match present(tool, "name") {
            Some(Value::String(name)) if !name.is_empty() => name.clone(),
            Some(Value::String(_)) | None => {
                return Err(ServeError::invalid(
                    format!("{place}.name"),
                    format!("{place}.name: a tool needs a name"),
                ))
            }
            Some(_) => return Err(wrong_type(&format!("{place}.name"), "a string")),
        };
        let description = match present(tool, "description") {
            Some(Value::String(text)) => text.clone(),
            None => String::new(),
            Some(_) => return Err(wrong_type(&format!("{place}.description"), "a string")),
        };
        let input_schema = match present(tool, "input_schema") {
            Some(schema @ Value::Object(_)) => schema.clone(),
            Some(_) => return Err(wrong_type(&format!("{place}.input_schema"), "an object")),
            None => {
                return Err(ServeError::invalid(
                    format!("{place}.input_schema"),
                    format!("{place}.input_schema: a required field"),
                ))
            }
        };
        for (key, value) in tool {
            let known = matches!(
                key.as_str(),
                "type" | "name" | "description" | "input_schema"
            );
            if !known && !value.is_null() {
                inbound.drop_hint(key);
            }
        }
        inbound.tools.push(ToolSpec {
            name,
            description,
            input_schema,
        });
    }
    Ok(())
}

fn tool_choice(value: &Value, inbound: &mut Inbound) -> Result<ToolChoice, ServeError> {
    let Value::Object(choice) = value else {
        return Err(wrong_type("tool_choice", "an object"));
    };
    if present(choice, "disable_parallel_tool_use").is_some() {
        inbound.drop_hint("disable_parallel_tool_use");
    }
    match present(choice, "type") {
        Some(Value::String(kind)) => match kind.as_str() {
            "auto" => Ok(ToolChoice::Auto),
            "any" => Ok(ToolChoice::Required),
            "none" => Ok(ToolChoice::None),
            "tool" => match present(choice, "name") {
                Some(Value::String(name)) if !name.is_empty() => {
                    Ok(ToolChoice::Tool { name: name.clone() })
                }
                _ => Err(ServeError::invalid(
                    "tool_choice.name",
                    "tool_choice.name: a tool choice of type tool needs the tool's name",
                )),
            },
            other => Err(ServeError::invalid(
                "tool_choice.type",
                format!("tool_choice.type: unknown type {other:?} (auto, any, tool or none)"),
            )),
        },
        Some(_) => Err(wrong_type("tool_choice.type", "a string")),
        None => Err(ServeError::invalid(
            "tool_choice.type",
            "tool_choice.type: a required field",
        )),
    }
}

/// `output_config`: its `format` is the answer's shape; anything else in it (`effort`) is a
/// hint, named `output_config`.
fn output_config(value: &Value, inbound: &mut Inbound) -> Result<(), ServeError> {
    let Value::Object(config) = value else {
        return Err(wrong_type("output_config", "an object"));
    };
    for (key, value) in config {
        if key == "format" {
            if !value.is_null() {
                inbound.response_format = output_format(value, "output_config.format")?;
            }
        } else if !value.is_null() {
            inbound.drop_hint("output_config");
        }
    }
    Ok(())
}

/// `{"type": "json_schema", "schema": {...}}` → [`ResponseFormat::JsonSchema`] (strict: the
/// API guarantees the schema); any other type is refused, since it would change the answer.
fn output_format(value: &Value, place: &str) -> Result<Option<ResponseFormat>, ServeError> {
    let Value::Object(format) = value else {
        return Err(wrong_type(place, "an object"));
    };
    match present(format, "type") {
        Some(Value::String(kind)) if kind == "json_schema" => {}
        Some(Value::String(kind)) => {
            return Err(ServeError::invalid(
                format!("{place}.type"),
                format!("{place}.type: {kind:?} formats cannot be carried (json_schema can)"),
            ))
        }
        _ => return Err(wrong_type(&format!("{place}.type"), "a string")),
    }
    let schema = match present(format, "schema") {
        Some(schema @ Value::Object(_)) => schema.clone(),
        _ => return Err(wrong_type(&format!("{place}.schema"), "an object")),
    };
    let name = (schema.get("title").and_then(Value::as_str))
        .filter(|title| !title.is_empty())
        .unwrap_or("output")
        .to_owned();
    Ok(Some(ResponseFormat::JsonSchema {
        name,
        schema,
        strict: true,
    }))
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
