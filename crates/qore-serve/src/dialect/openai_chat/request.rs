//! A Chat Completions request body -> [`Inbound`].
//!
//! Promises:
//! - `model` and `messages` are required; `messages` decode as [`super::messages`] says;
//! - `tools` (type `function`) -> [`ToolSpec`]s, `tool_choice` (`auto`, `none`, `required`,
//!   Mistral's `any`, or a named function) -> [`ToolChoice`], `response_format` (`text`,
//!   `json_object`, `json_schema`) -> [`ResponseFormat`]; `stream`,
//!   `stream_options.include_usage`, `max_completion_tokens` (else `max_tokens`),
//!   `temperature`, `top_p` and `stop` (a string or strings) are passed on;
//! - what would change the answer if lost is a 400 naming it: `n` other than 1, audio
//!   output (`modalities` with `audio`), legacy `functions`/`function_call`, tools that are
//!   not functions, unsupported content parts;
//! - every other field received (sampling hints, `metadata`, `user`, `store`, unknown keys)
//!   is named in [`Inbound::dropped`] unless it is `null`;
//! - malformed JSON or a field of the wrong type is a 400 naming the field; no input panics.

use qore_core::{ResponseFormat, ToolChoice, ToolSpec};
use serde_json::{json, Value};

use super::json::{self, Object};
use super::messages;
use crate::{Inbound, ServeError};

pub fn decode(body: &[u8]) -> Result<Inbound, ServeError> {
    let object = json::parse_object(body)?;
    let mut inbound = Inbound::default();
    let mut max_tokens = None;
    let mut max_completion_tokens = None;
    for (key, value) in &object {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "model" => inbound.model = json::as_str(value, key)?.to_owned(),
            "messages" => inbound.history = messages::decode(value, key, &mut inbound)?,
            "tools" => inbound.tools = tools(value, key, &mut inbound)?,
            "tool_choice" => inbound.tool_choice = Some(tool_choice(value, key)?),
            "response_format" => inbound.response_format = Some(response_format(value, key)?),
            "stream" => inbound.stream = json::opt_bool(&object, key, "")?.unwrap_or(false),
            "stream_options" => {
                let options = json::as_object(value, key)?;
                inbound.include_usage =
                    json::opt_bool(options, "include_usage", key)?.unwrap_or(false);
                for (inner, v) in options {
                    if inner != "include_usage" && !v.is_null() {
                        inbound.drop_hint(&json::join(key, inner));
                    }
                }
            }
            "max_tokens" => max_tokens = json::opt_count(&object, key, "")?,
            "max_completion_tokens" => max_completion_tokens = json::opt_count(&object, key, "")?,
            "temperature" => inbound.temperature = json::opt_f64(&object, key, "")?,
            "top_p" => inbound.top_p = json::opt_f64(&object, key, "")?,
            "stop" => inbound.stop = json::strings(&object, key, "")?,
            "n" => match value.as_u64() {
                Some(1) => {}
                _ => {
                    return Err(ServeError::invalid(
                        "n",
                        "only one choice per request is supported (`n` must be 1)",
                    ))
                }
            },
            "modalities" => modalities(value, &mut inbound)?,
            "functions" | "function_call" => {
                return Err(ServeError::invalid(
                    key.as_str(),
                    format!("legacy `{key}` is not supported; send `tools` and `tool_choice`"),
                ))
            }
            // Every other field is a hint no qore-core type carries: `prompt_cache_key`,
            // `metadata`, `user`, `store`, `reasoning_effort`, `parallel_tool_calls`, `seed`,
            // `logit_bias`, `logprobs`, `top_logprobs`, `frequency_penalty`,
            // `presence_penalty`, `service_tier`, `safety_identifier`, `prediction`,
            // `web_search_options`, `verbosity`, `audio`, and keys we do not know.
            _ => inbound.drop_hint(key),
        }
    }
    if !object.get("model").is_some_and(Value::is_string) {
        return Err(json::missing("model"));
    }
    if !object.get("messages").is_some_and(Value::is_array) {
        return Err(json::missing("messages"));
    }
    inbound.max_tokens = max_completion_tokens.or(max_tokens);
    Ok(inbound)
}

/// `modalities`: text only is the default and changes nothing; audio output is refused.
fn modalities(value: &Value, inbound: &mut Inbound) -> Result<(), ServeError> {
    for (i, item) in json::as_array(value, "modalities")?.iter().enumerate() {
        match json::as_str(item, &json::at("modalities", i))? {
            "text" => {}
            other => {
                return Err(ServeError::invalid(
                    "modalities",
                    format!("only text output is supported, not `{other}`"),
                ))
            }
        }
    }
    inbound.drop_hint("modalities");
    Ok(())
}

fn tools(value: &Value, path: &str, inbound: &mut Inbound) -> Result<Vec<ToolSpec>, ServeError> {
    let mut specs = Vec::new();
    for (i, tool) in json::as_array(value, path)?.iter().enumerate() {
        let path = json::at(path, i);
        let tool = json::as_object(tool, &path)?;
        match json::req_str(tool, "type", &path)? {
            "function" => {}
            other => {
                return Err(ServeError::invalid(
                    json::join(&path, "type"),
                    format!("only `function` tools are supported, not `{other}`"),
                ))
            }
        }
        let field = json::join(&path, "function");
        let function = json::as_object(
            json::get(tool, "function").ok_or_else(|| json::missing(&field))?,
            &field,
        )?;
        if json::get(function, "strict").is_some() {
            inbound.drop_hint("tools[].function.strict");
        }
        let parameters = match json::get(function, "parameters") {
            None => json!({"type": "object", "properties": {}}),
            Some(schema @ Value::Object(_)) => schema.clone(),
            Some(other) => {
                return Err(json::wrong_type(
                    &json::join(&field, "parameters"),
                    "an object",
                    other,
                ))
            }
        };
        specs.push(ToolSpec {
            name: json::req_str(function, "name", &field)?.to_owned(),
            description: json::opt_str(function, "description", &field)?
                .unwrap_or("")
                .to_owned(),
            input_schema: parameters,
        });
    }
    Ok(specs)
}

fn tool_choice(value: &Value, path: &str) -> Result<ToolChoice, ServeError> {
    let named = |object: &Object| -> Result<ToolChoice, ServeError> {
        let field = json::join(path, "function");
        let function = json::as_object(
            json::get(object, "function").ok_or_else(|| json::missing(&field))?,
            &field,
        )?;
        let name = json::req_str(function, "name", &field)?;
        Ok(ToolChoice::Tool {
            name: name.to_owned(),
        })
    };
    match value {
        Value::String(choice) => match choice.as_str() {
            "auto" => Ok(ToolChoice::Auto),
            "none" => Ok(ToolChoice::None),
            "required" | "any" => Ok(ToolChoice::Required),
            other => Err(ServeError::invalid(
                path,
                format!("`{path}` must be auto, none, required or a function, not `{other}`"),
            )),
        },
        Value::Object(object) => match json::req_str(object, "type", path)? {
            "function" => named(object),
            other => Err(ServeError::invalid(
                json::join(path, "type"),
                format!("tool choice `{other}` is not supported"),
            )),
        },
        other => Err(json::wrong_type(path, "a string or an object", other)),
    }
}

fn response_format(value: &Value, path: &str) -> Result<ResponseFormat, ServeError> {
    let object = json::as_object(value, path)?;
    match json::req_str(object, "type", path)? {
        "text" => Ok(ResponseFormat::Text),
        "json_object" => Ok(ResponseFormat::JsonObject),
        "json_schema" => {
            let field = json::join(path, "json_schema");
            let inner = json::as_object(
                json::get(object, "json_schema").ok_or_else(|| json::missing(&field))?,
                &field,
            )?;
            let schema = match json::get(inner, "schema") {
                None => json!({}),
                Some(schema @ Value::Object(_)) => schema.clone(),
                Some(other) => {
                    return Err(json::wrong_type(
                        &json::join(&field, "schema"),
                        "an object",
                        other,
                    ))
                }
            };
            Ok(ResponseFormat::JsonSchema {
                name: json::opt_str(inner, "name", &field)?
                    .unwrap_or("response")
                    .to_owned(),
                schema,
                strict: json::opt_bool(inner, "strict", &field)?.unwrap_or(false),
            })
        }
        other => Err(ServeError::invalid(
            json::join(path, "type"),
            format!("response format `{other}` is not supported"),
        )),
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "request_edge_tests.rs"]
mod edge_tests;
