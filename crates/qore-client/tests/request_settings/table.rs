//! The table of the request settings test: the settings asked of every wire, and for each
//! wire what its body must carry for each (values at JSON pointers) or that it refuses it,
//! plus where each wire's encoder keeps what it writes itself.

use qore_client::Protocol;
use qore_core::{ResponseFormat, ToolChoice};
use serde_json::{json, Map, Value};

pub const MAX_TOKENS: u32 = 321;
pub const TEMPERATURE: f64 = 0.25;

/// One request setting.
#[derive(Debug, Clone)]
pub enum Setting {
    Tools(ToolChoice),
    Format(ResponseFormat),
    Stop(Vec<String>),
}

impl Setting {
    pub fn fields(&self, protocol: &dyn Protocol) -> Option<Map<String, Value>> {
        match self {
            Setting::Tools(choice) => protocol.tool_choice_fields(choice),
            Setting::Format(format) => protocol.response_format_fields(format),
            Setting::Stop(stop) => protocol.stop_fields(stop),
        }
    }
}

pub fn none() -> Setting {
    Setting::Tools(ToolChoice::None)
}
pub fn required() -> Setting {
    Setting::Tools(ToolChoice::Required)
}
pub fn named() -> Setting {
    Setting::Tools(ToolChoice::Tool {
        name: "lookup".into(),
    })
}
pub fn json_object() -> Setting {
    Setting::Format(ResponseFormat::JsonObject)
}
pub fn point_schema() -> Value {
    json!({"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"],
           "additionalProperties": false})
}
pub fn json_schema() -> Setting {
    Setting::Format(ResponseFormat::JsonSchema {
        name: "point".into(),
        schema: point_schema(),
        strict: true,
    })
}
pub fn stop() -> Setting {
    Setting::Stop(vec!["END".into(), "\n\n".into()])
}

/// The settings every wire must take as nothing at all.
pub fn no_ops() -> Vec<Setting> {
    vec![
        Setting::Tools(ToolChoice::Auto),
        Setting::Format(ResponseFormat::Text),
        Setting::Stop(Vec::new()),
    ]
}

/// What a wire must do with a setting: refuse it, or put these values at these JSON
/// pointers of the body.
pub type Expected = Option<Vec<(&'static str, Value)>>;

pub fn at(pairs: &[(&'static str, Value)]) -> Expected {
    Some(pairs.to_vec())
}

/// One value at one pointer.
pub fn at1(pointer: &'static str, value: Value) -> Expected {
    Some(vec![(pointer, value)])
}

/// Where each wire keeps what its encoder writes: the token bound, the temperature, the
/// user's text and the offered tool's name.
pub fn encoder_fields(wire: &str) -> [(&'static str, Value); 4] {
    let [max, temp, user, tool] = match wire {
        "openai-chat" | "llamacpp" | "mistral" => [
            "/max_tokens",
            "/temperature",
            "/messages/1/content",
            "/tools/0/function/name",
        ],
        "openai-responses" => [
            "/max_output_tokens",
            "/temperature",
            "/input/0/content/0/text",
            "/tools/0/name",
        ],
        "anthropic" => [
            "/max_tokens",
            "/temperature",
            "/messages/0/content/0/text",
            "/tools/0/name",
        ],
        "gemini" => [
            "/generationConfig/maxOutputTokens",
            "/generationConfig/temperature",
            "/contents/0/parts/0/text",
            "/tools/0/functionDeclarations/0/name",
        ],
        "ollama" => [
            "/options/num_predict",
            "/options/temperature",
            "/messages/1/content",
            "/tools/0/function/name",
        ],
        other => panic!("no encoder fields listed for {other}"),
    };
    [
        (max, json!(MAX_TOKENS)),
        (temp, json!(TEMPERATURE)),
        (user, json!("where am I?")),
        (tool, json!("lookup")),
    ]
}

/// The table: every wire, every setting.
pub fn table() -> Vec<(&'static str, Setting, Expected)> {
    let schema = point_schema();
    let stops = json!(["END", "\n\n"]);
    let mut rows = Vec::new();
    let mut add = |wire: &'static str, settings: Vec<(Setting, Expected)>| {
        rows.extend(
            settings
                .into_iter()
                .map(|(setting, want)| (wire, setting, want)),
        );
    };
    let chat_format = json!({"type": "json_schema",
                             "json_schema": {"name": "point", "schema": schema, "strict": true}});
    for wire in ["openai-chat", "llamacpp", "mistral"] {
        let required_word = if wire == "mistral" { "any" } else { "required" };
        let function = json!({"type": "function", "function": {"name": "lookup"}});
        // llama.cpp reads tool_choice as a string only.
        let named_choice = (wire != "llamacpp").then(|| vec![("/tool_choice", function)]);
        add(
            wire,
            vec![
                (none(), at1("/tool_choice", json!("none"))),
                (required(), at1("/tool_choice", json!(required_word))),
                (named(), named_choice),
                (
                    json_object(),
                    at1("/response_format", json!({"type": "json_object"})),
                ),
                (json_schema(), at1("/response_format", chat_format.clone())),
                (stop(), at1("/stop", stops.clone())),
            ],
        );
    }
    let function = json!({"type": "function", "name": "lookup"});
    let text_format =
        json!({"type": "json_schema", "name": "point", "schema": schema, "strict": true});
    add(
        "openai-responses",
        vec![
            (none(), at1("/tool_choice", json!("none"))),
            (required(), at1("/tool_choice", json!("required"))),
            (named(), at1("/tool_choice", function)),
            (
                json_object(),
                at1("/text", json!({"format": {"type": "json_object"}})),
            ),
            (json_schema(), at1("/text/format", text_format)),
            (stop(), None),
        ],
    );
    let output_config = json!({"format": {"type": "json_schema", "schema": schema}});
    add(
        "anthropic",
        vec![
            (none(), at1("/tool_choice", json!({"type": "none"}))),
            (required(), at1("/tool_choice", json!({"type": "any"}))),
            (
                named(),
                at1("/tool_choice", json!({"type": "tool", "name": "lookup"})),
            ),
            (json_object(), None),
            (json_schema(), at1("/output_config", output_config)),
            (stop(), at1("/stop_sequences", stops.clone())),
        ],
    );
    let mode = "/toolConfig/functionCallingConfig";
    let only_lookup = json!({"mode": "ANY", "allowedFunctionNames": ["lookup"]});
    let mime = (
        "/generationConfig/responseMimeType",
        json!("application/json"),
    );
    let json_schema_at = ("/generationConfig/responseJsonSchema", schema.clone());
    add(
        "gemini",
        vec![
            (none(), at1(mode, json!({"mode": "NONE"}))),
            (required(), at1(mode, json!({"mode": "ANY"}))),
            (named(), at1(mode, only_lookup)),
            (json_object(), at1(mime.0, mime.1.clone())),
            (json_schema(), at(&[mime, json_schema_at])),
            (
                stop(),
                at1("/generationConfig/stopSequences", stops.clone()),
            ),
        ],
    );
    add(
        "ollama",
        vec![
            (none(), None),
            (required(), None),
            (named(), None),
            (json_object(), at1("/format", json!("json"))),
            (json_schema(), at1("/format", schema.clone())),
            (stop(), at1("/options/stop", stops)),
        ],
    );
    rows
}
