//! Request settings in Anthropic Messages' words, as body fields for
//! [`crate::RequestOptions::extra`] (see [`crate::Protocol::tool_choice_fields`]):
//!
//! - tool choice → `tool_choice`: `{"type": "none"}`, `{"type": "any"}` (some tool), or
//!   `{"type": "tool", "name"}`;
//! - response format → `output_config: {"format": {"type": "json_schema", "schema"}}`
//!   (structured outputs, generally available: no beta header). The wire has no "any JSON
//!   object" mode, so [`ResponseFormat::JsonObject`] is refused; a schema's `name` has no
//!   place and its `strict` flag no meaning there (the output always follows the schema);
//! - stop sequences → `stop_sequences`.
//!
//! Asking for what the wire does anyway (`auto` tools, plain text, no stop sequences) adds
//! nothing.

use qore_core::{ResponseFormat, ToolChoice};
use serde_json::{json, Map, Value};

use crate::protocols::shared::one_field;

pub fn tool_choice(choice: &ToolChoice) -> Map<String, Value> {
    let value = match choice {
        ToolChoice::Auto => return Map::new(),
        ToolChoice::None => json!({"type": "none"}),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::Tool { name } => json!({"type": "tool", "name": name}),
    };
    one_field("tool_choice", value)
}

/// `None` for [`ResponseFormat::JsonObject`], which the wire cannot say.
pub fn response_format(format: &ResponseFormat) -> Option<Map<String, Value>> {
    match format {
        ResponseFormat::Text => Some(Map::new()),
        ResponseFormat::JsonObject => None,
        ResponseFormat::JsonSchema { schema, .. } => Some(one_field(
            "output_config",
            json!({"format": {"type": "json_schema", "schema": schema}}),
        )),
    }
}

pub fn stop(stop: &[String]) -> Map<String, Value> {
    if stop.is_empty() {
        return Map::new();
    }
    one_field("stop_sequences", json!(stop))
}
