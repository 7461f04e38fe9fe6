//! Request settings in Chat Completions' words, as body fields for
//! [`crate::RequestOptions::extra`] (see [`crate::Protocol::tool_choice_fields`]):
//!
//! - tool choice → `tool_choice`: `"none"`, the wire's word for "required" (`"required"`
//!   on OpenAI, `"any"` on Mistral), or `{"type": "function", "function": {"name"}}`;
//! - response format → `response_format`: `{"type": "json_object"}` or `{"type":
//!   "json_schema", "json_schema": {"name", "schema", "strict"}}`;
//! - stop sequences → `stop` (an array).
//!
//! Asking for what the wire does anyway (`auto` tools, plain text, no stop sequences) adds
//! nothing. llama.cpp and Mistral speak this wire for chat and build on these helpers with
//! their own exceptions.

use qore_core::{ResponseFormat, ToolChoice};
use serde_json::{json, Map, Value};

use crate::protocols::shared::one_field;

/// `tool_choice` for `choice`, with `required` as the wire's word for "call some tool".
pub(crate) fn tool_choice(choice: &ToolChoice, required: &str) -> Map<String, Value> {
    let value = match choice {
        ToolChoice::Auto => return Map::new(),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!(required),
        ToolChoice::Tool { name } => json!({"type": "function", "function": {"name": name}}),
    };
    one_field("tool_choice", value)
}

/// `response_format` for `format`.
pub(crate) fn response_format(format: &ResponseFormat) -> Map<String, Value> {
    let value = match format {
        ResponseFormat::Text => return Map::new(),
        ResponseFormat::JsonObject => json!({"type": "json_object"}),
        ResponseFormat::JsonSchema {
            name,
            schema,
            strict,
        } => json!({"type": "json_schema", "json_schema": {
            "name": name,
            "schema": schema,
            "strict": strict,
        }}),
    };
    one_field("response_format", value)
}

/// `stop` for `stop` (nothing for an empty list).
pub(crate) fn stop(stop: &[String]) -> Map<String, Value> {
    if stop.is_empty() {
        return Map::new();
    }
    one_field("stop", json!(stop))
}
