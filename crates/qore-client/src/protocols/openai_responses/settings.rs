//! Request settings in the Responses API's words, as body fields for
//! [`crate::RequestOptions::extra`] (see [`crate::Protocol::tool_choice_fields`]):
//!
//! - tool choice → `tool_choice`: `"none"`, `"required"`, or `{"type": "function",
//!   "name"}` (flat, unlike Chat Completions' nested `function`);
//! - response format → `text: {"format": …}`: `{"type": "json_object"}` or `{"type":
//!   "json_schema", "name", "schema", "strict"}`;
//! - stop sequences: the API has no such parameter, so a non-empty list is refused.
//!
//! Asking for what the wire does anyway (`auto` tools, plain text, no stop sequences) adds
//! nothing.

use qore_core::{ResponseFormat, ToolChoice};
use serde_json::{json, Map, Value};

use crate::protocols::shared::one_field;

pub fn tool_choice(choice: &ToolChoice) -> Map<String, Value> {
    let value = match choice {
        ToolChoice::Auto => return Map::new(),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool { name } => json!({"type": "function", "name": name}),
    };
    one_field("tool_choice", value)
}

pub fn response_format(format: &ResponseFormat) -> Map<String, Value> {
    let value = match format {
        ResponseFormat::Text => return Map::new(),
        ResponseFormat::JsonObject => json!({"type": "json_object"}),
        ResponseFormat::JsonSchema {
            name,
            schema,
            strict,
        } => json!({
            "type": "json_schema",
            "name": name,
            "schema": schema,
            "strict": strict,
        }),
    };
    one_field("text", json!({ "format": value }))
}

/// `None` for any stop sequence: the wire has no field for them.
pub fn stop(stop: &[String]) -> Option<Map<String, Value>> {
    stop.is_empty().then(Map::new)
}
