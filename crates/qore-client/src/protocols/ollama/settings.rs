//! Request settings in Ollama's words, as body fields for [`crate::RequestOptions::extra`]
//! (see [`crate::Protocol::tool_choice_fields`]):
//!
//! - tool choice: `/api/chat` has no such parameter (the model always decides), so only
//!   `auto` is accepted, as nothing; any other choice is refused;
//! - response format → `format`: `"json"`, or the JSON Schema itself (a schema's `name`
//!   has no place and its `strict` flag no meaning there);
//! - stop sequences → `options: {"stop"}`. The encoder merges an `options` object in
//!   `extra` into its own key by key, so `num_predict` and `temperature` stay.
//!
//! Asking for what the wire does anyway (`auto` tools, plain text, no stop sequences) adds
//! nothing.

use qore_core::{ResponseFormat, ToolChoice};
use serde_json::{json, Map, Value};

use crate::protocols::shared::one_field;

/// Nothing for `auto`; `None` for every other choice, which the wire cannot say.
pub fn tool_choice(choice: &ToolChoice) -> Option<Map<String, Value>> {
    (*choice == ToolChoice::Auto).then(Map::new)
}

pub fn response_format(format: &ResponseFormat) -> Map<String, Value> {
    let value = match format {
        ResponseFormat::Text => return Map::new(),
        ResponseFormat::JsonObject => json!("json"),
        ResponseFormat::JsonSchema { schema, .. } => schema.clone(),
    };
    one_field("format", value)
}

pub fn stop(stop: &[String]) -> Map<String, Value> {
    if stop.is_empty() {
        return Map::new();
    }
    one_field("options", json!({ "stop": stop }))
}
