//! Wire-neutral request settings that a caller asks of a model beyond the conversation:
//! which tools it may (or must) call and the shape its answer must take. A wire that cannot
//! say one of them refuses it (`qore_client::Protocol::tool_choice_fields` returns `None`);
//! nothing here is ever dropped silently.

use serde::{Deserialize, Serialize};

/// How the model may use the tools on offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides (every wire's default).
    Auto,
    /// No tool call; the tools stay defined.
    None,
    /// At least one tool call, any tool.
    Required,
    /// A call of this tool.
    Tool {
        /// The name of the tool that must be called.
        name: String,
    },
}

/// The shape the answer must take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseFormat {
    /// Plain text (the default; asking for it changes nothing).
    Text,
    /// Any JSON object.
    JsonObject,
    /// JSON valid against `schema`.
    JsonSchema {
        /// The schema's name (OpenAI `json_schema.name`).
        name: String,
        /// The JSON Schema the answer must satisfy.
        schema: serde_json::Value,
        /// Ask the provider to enforce the schema exactly (OpenAI `strict`), where it can.
        #[serde(default)]
        strict: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip() {
        for choice in [
            ToolChoice::Auto,
            ToolChoice::None,
            ToolChoice::Required,
            ToolChoice::Tool { name: "add".into() },
        ] {
            let json = serde_json::to_string(&choice).unwrap();
            assert_eq!(serde_json::from_str::<ToolChoice>(&json).unwrap(), choice);
        }
        let format = ResponseFormat::JsonSchema {
            name: "point".into(),
            schema: serde_json::json!({"type": "object"}),
            strict: true,
        };
        let json = serde_json::to_value(&format).unwrap();
        assert_eq!(json["type"], "json_schema");
        assert_eq!(
            serde_json::from_value::<ResponseFormat>(json).unwrap(),
            format
        );
    }
}
