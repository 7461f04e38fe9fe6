//! Request settings in Gemini's words, as body fields for [`crate::RequestOptions::extra`]
//! (see [`crate::Protocol::tool_choice_fields`]):
//!
//! - tool choice → `toolConfig: {"functionCallingConfig": {"mode"}}`: `NONE`, `ANY` (some
//!   function), or `ANY` with `allowedFunctionNames: [name]` (that function);
//! - response format → `generationConfig: {"responseMimeType": "application/json"}`, plus
//!   `responseJsonSchema` (the schema as JSON Schema; Gemini's alternative to the OpenAPI
//!   subset of `responseSchema`) for a schema. A schema's `name` has no place and its
//!   `strict` flag no meaning there (the output always follows the schema);
//! - stop sequences → `generationConfig: {"stopSequences"}`.
//!
//! `generationConfig` also holds what the encoder writes (`maxOutputTokens`,
//! `temperature`); the encoder merges an object in `extra` into its own one level deep, so
//! these fields join it rather than replace it. Two settings that both write
//! `generationConfig` are combined the same way by [`crate::RequestOptions::merge_extra`].
//!
//! Asking for what the wire does anyway (`auto` tools, plain text, no stop sequences) adds
//! nothing.

use qore_core::{ResponseFormat, ToolChoice};
use serde_json::{json, Map, Value};

use crate::protocols::shared::one_field;

pub fn tool_choice(choice: &ToolChoice) -> Map<String, Value> {
    let config = match choice {
        ToolChoice::Auto => return Map::new(),
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Required => json!({"mode": "ANY"}),
        ToolChoice::Tool { name } => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
    };
    one_field("toolConfig", json!({ "functionCallingConfig": config }))
}

pub fn response_format(format: &ResponseFormat) -> Map<String, Value> {
    let config = match format {
        ResponseFormat::Text => return Map::new(),
        ResponseFormat::JsonObject => json!({"responseMimeType": "application/json"}),
        ResponseFormat::JsonSchema { schema, .. } => json!({
            "responseMimeType": "application/json",
            "responseJsonSchema": schema,
        }),
    };
    one_field("generationConfig", config)
}

pub fn stop(stop: &[String]) -> Map<String, Value> {
    if stop.is_empty() {
        return Map::new();
    }
    one_field("generationConfig", json!({ "stopSequences": stop }))
}
