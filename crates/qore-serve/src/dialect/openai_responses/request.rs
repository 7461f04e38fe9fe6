//! A Responses request body as an [`Inbound`].
//!
//! Promises:
//! - `model` is required; `input` too unless `previous_response_id` is given (see
//!   `input.rs` for the items); `instructions` is a system message before them;
//! - `tools`: `function` tools become [`ToolSpec`]s (`parameters` absent: an empty object
//!   schema; `strict: true` is dropped and named `strict`); every other tool type (hosted
//!   `web_search`, `file_search`, `code_interpreter`, `computer_use_preview`,
//!   `image_generation`, `local_shell`, `mcp`, `custom` …) is dropped and named by its type;
//! - `tool_choice`: `auto`/`none`/`required`/`{type: function, name}` (a name that is not
//!   among the function tools is a 400); `{type: allowed_tools, mode, tools}` keeps only the
//!   function tools it allows, with its mode; forcing a hosted tool is a 400;
//! - `text.format` (`text`, `json_object`, `json_schema` with `name`, `schema`, `strict`)
//!   is the [`ResponseFormat`]; `text.verbosity` and other `text` keys are dropped and named
//!   `text.<key>`;
//! - `max_output_tokens`, `temperature`, `top_p`, `stream` (default false), `store` (default
//!   true), `previous_response_id` are carried; an `item_reference` is read through the
//!   resolver given to [`decode_with`] (a 400 without one);
//! - `include` is honoured for `reasoning.encrypted_content` (reasoning items always carry
//!   it when the model signed its reasoning) and named when it asks anything else;
//!   `background: true`, `conversation` and `prompt` would change the answer: a 400;
//!   every other key (`reasoning`, `prompt_cache_key`, `metadata`, `client_metadata`,
//!   `parallel_tool_calls`, `service_tier`, `truncation`, `safety_identifier`, `user`,
//!   `context_management`, `stream_options`, unknown ones) is dropped and named;
//!   `null` is read as absent everywhere;
//! - malformed JSON or a field of the wrong type is a 400 naming the field; nothing panics.

use qore_core::{History, ResponseFormat, ToolChoice, ToolSpec};
use serde_json::{json, Value};

use super::fields::{
    as_array, as_object, as_str, at, get, join, missing, opt_bool, opt_count, opt_f64, opt_str,
    parse_object, req_str, unsupported, wrong_type, Object,
};
use super::input::{self, Conversation, Resolver};
use crate::{Inbound, ServeError};

/// Top-level keys read here; every other non-null key is named in [`Inbound::dropped`].
const KNOWN: &[&str] = &[
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "text",
    "max_output_tokens",
    "temperature",
    "top_p",
    "stream",
    "store",
    "previous_response_id",
];

/// Decode a body; an `item_reference` is a 400.
pub fn decode(body: &[u8]) -> Result<Inbound, ServeError> {
    decode_with(body, None)
}

/// Decode a body, reading each `item_reference` as the item `resolve` finds for its id.
pub fn decode_with(body: &[u8], resolve: Resolver<'_>) -> Result<Inbound, ServeError> {
    let object = parse_object(body)?;
    let model = req_str(&object, "model", "")?;
    if model.is_empty() {
        return Err(ServeError::invalid("model", "`model` must not be empty"));
    }
    let mut inbound = Inbound {
        model: model.to_owned(),
        stream: opt_bool(&object, "stream", "")?.unwrap_or(false),
        store: opt_bool(&object, "store", "")?.unwrap_or(true),
        previous_response_id: opt_str(&object, "previous_response_id", "")?.map(str::to_owned),
        max_tokens: opt_count(&object, "max_output_tokens", "")?,
        temperature: opt_f64(&object, "temperature", "")?,
        top_p: opt_f64(&object, "top_p", "")?,
        ..Inbound::default()
    };
    let mut conversation = Conversation::default();
    if let Some(instructions) = get(&object, "instructions") {
        conversation.system(as_str(instructions, "instructions")?);
    }
    match get(&object, "input") {
        Some(value) => input::decode(value, &mut conversation, resolve)?,
        None if inbound.previous_response_id.is_some() => {}
        None => return Err(missing("input")),
    }
    inbound.history = History::from(conversation.messages);
    for name in &conversation.dropped {
        inbound.drop_hint(name);
    }
    if let Some(value) = get(&object, "tools") {
        inbound.tools = tools(value, &mut inbound.dropped)?;
    }
    if let Some(value) = get(&object, "tool_choice") {
        inbound.tool_choice = Some(tool_choice(value, &mut inbound.tools)?);
    }
    if let Some(value) = get(&object, "text") {
        inbound.response_format = text(value, &mut inbound)?;
    }
    for (key, value) in &object {
        if value.is_null() || KNOWN.contains(&key.as_str()) {
            continue;
        }
        match key.as_str() {
            "include" if only_encrypted_reasoning(value) => {}
            "background" if value != &Value::Bool(false) => {
                return Err(unsupported("background", "background mode"))
            }
            "background" => {}
            "conversation" => return Err(unsupported("conversation", "a stored conversation")),
            "prompt" => return Err(unsupported("prompt", "a prompt template")),
            _ => inbound.drop_hint(key),
        }
    }
    Ok(inbound)
}

/// `include` asks for nothing but what reasoning items always carry here.
fn only_encrypted_reasoning(value: &Value) -> bool {
    value.as_array().is_some_and(|items| {
        (items.iter()).all(|item| item.as_str() == Some("reasoning.encrypted_content"))
    })
}

fn drop_hint(dropped: &mut Vec<String>, name: &str) {
    if !dropped.iter().any(|d| d == name) {
        dropped.push(name.to_owned());
    }
}

fn tools(value: &Value, dropped: &mut Vec<String>) -> Result<Vec<ToolSpec>, ServeError> {
    let mut specs = Vec::new();
    for (index, tool) in as_array(value, "tools")?.iter().enumerate() {
        let path = at("tools", index);
        let tool = as_object(tool, &path)?;
        match req_str(tool, "type", &path)? {
            "function" => {
                let schema_path = join(&path, "parameters");
                let input_schema = match get(tool, "parameters") {
                    None => json!({"type": "object", "properties": {}}),
                    Some(schema @ Value::Object(_)) => schema.clone(),
                    Some(other) => return Err(wrong_type(&schema_path, "an object", other)),
                };
                if opt_bool(tool, "strict", &path)? == Some(true) {
                    drop_hint(dropped, "strict");
                }
                specs.push(ToolSpec {
                    name: req_str(tool, "name", &path)?.to_owned(),
                    description: opt_str(tool, "description", &path)?
                        .unwrap_or_default()
                        .to_owned(),
                    input_schema,
                });
            }
            other => drop_hint(dropped, other),
        }
    }
    Ok(specs)
}

fn tool_choice(value: &Value, tools: &mut Vec<ToolSpec>) -> Result<ToolChoice, ServeError> {
    const PATH: &str = "tool_choice";
    let object = match value {
        Value::String(mode) => return mode_choice(mode, PATH),
        Value::Object(object) => object,
        other => return Err(wrong_type(PATH, "a string or an object", other)),
    };
    match req_str(object, "type", PATH)? {
        "function" => {
            let name = req_str(object, "name", PATH)?;
            if !tools.iter().any(|tool| tool.name == name) {
                return Err(ServeError::invalid(
                    join(PATH, "name"),
                    format!("`tool_choice` names `{name}`, which is not among the function tools"),
                ));
            }
            Ok(ToolChoice::Tool {
                name: name.to_owned(),
            })
        }
        "allowed_tools" => allowed_tools(object, tools),
        other => Err(unsupported(
            &join(PATH, "type"),
            &format!("forcing the tool type `{other}`"),
        )),
    }
}

fn mode_choice(mode: &str, path: &str) -> Result<ToolChoice, ServeError> {
    match mode {
        "auto" => Ok(ToolChoice::Auto),
        "none" => Ok(ToolChoice::None),
        "required" => Ok(ToolChoice::Required),
        other => Err(ServeError::invalid(
            path,
            format!("`{path}` must be auto, none or required, not `{other}`"),
        )),
    }
}

/// `{type: allowed_tools, mode, tools: [{type: function, name}]}`: the tools on offer are
/// cut to the function tools it names.
fn allowed_tools(object: &Object, tools: &mut Vec<ToolSpec>) -> Result<ToolChoice, ServeError> {
    let path = "tool_choice";
    let mode = mode_choice(
        opt_str(object, "mode", path)?.unwrap_or("auto"),
        &join(path, "mode"),
    )?;
    let list_path = join(path, "tools");
    let list = get(object, "tools").ok_or_else(|| missing(&list_path))?;
    let mut names = Vec::new();
    for (index, entry) in as_array(list, &list_path)?.iter().enumerate() {
        let entry_path = at(&list_path, index);
        let entry = as_object(entry, &entry_path)?;
        if opt_str(entry, "type", &entry_path)?.unwrap_or("function") == "function" {
            names.push(req_str(entry, "name", &entry_path)?.to_owned());
        }
    }
    tools.retain(|tool| names.contains(&tool.name));
    Ok(mode)
}

fn text(value: &Value, inbound: &mut Inbound) -> Result<Option<ResponseFormat>, ServeError> {
    let object = as_object(value, "text")?;
    let mut format = None;
    for (key, value) in object {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "format" => format = Some(response_format(value, &mut inbound.dropped)?),
            other => inbound.drop_hint(&join("text", other)),
        }
    }
    Ok(format)
}

fn response_format(value: &Value, dropped: &mut Vec<String>) -> Result<ResponseFormat, ServeError> {
    const PATH: &str = "text.format";
    let object = as_object(value, PATH)?;
    match req_str(object, "type", PATH)? {
        "text" => Ok(ResponseFormat::Text),
        "json_object" => Ok(ResponseFormat::JsonObject),
        "json_schema" => {
            let schema_path = join(PATH, "schema");
            let schema = get(object, "schema").ok_or_else(|| missing(&schema_path))?;
            if !schema.is_object() {
                return Err(wrong_type(&schema_path, "an object", schema));
            }
            if get(object, "description").is_some() {
                drop_hint(dropped, "text.format.description");
            }
            Ok(ResponseFormat::JsonSchema {
                name: opt_str(object, "name", PATH)?
                    .unwrap_or("response")
                    .to_owned(),
                schema: schema.clone(),
                strict: opt_bool(object, "strict", PATH)?.unwrap_or(false),
            })
        }
        other => Err(ServeError::invalid(
            join(PATH, "type"),
            format!("`text.format.type` must be text, json_object or json_schema, not `{other}`"),
        )),
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
