//! Request settings (tool choice, response format, stop sequences) on every wire protocol.
//!
//! For each wire and each setting, the table says what the wire's fields must put in the
//! request body, or that the wire refuses the setting (`None`: it cannot say it). Each
//! accepted setting is merged into [`RequestOptions::extra`] and a real request is encoded
//! through [`Client::encode`] (and [`Protocol::encode`], which must agree): the body has
//! the expected fields and still has what the encoder wrote (the token bound, the
//! temperature, the messages, the tools). Asking for what the wire does anyway (`auto`
//! tools, plain text, no stop sequences) adds nothing on any wire.

use qore_client::{protocols, ChatRequest, Client, ClientConfig, Protocol, RequestOptions};
use qore_core::{History, Message, ResponseFormat, ToolChoice, ToolSpec};
use serde_json::{json, Map, Value};

const MAX_TOKENS: u32 = 321;
const TEMPERATURE: f64 = 0.25;

/// One request setting.
#[derive(Debug, Clone)]
enum Setting {
    Tools(ToolChoice),
    Format(ResponseFormat),
    Stop(Vec<String>),
}

impl Setting {
    fn fields(&self, protocol: &dyn Protocol) -> Option<Map<String, Value>> {
        match self {
            Setting::Tools(choice) => protocol.tool_choice_fields(choice),
            Setting::Format(format) => protocol.response_format_fields(format),
            Setting::Stop(stop) => protocol.stop_fields(stop),
        }
    }
}

fn none() -> Setting {
    Setting::Tools(ToolChoice::None)
}
fn required() -> Setting {
    Setting::Tools(ToolChoice::Required)
}
fn named() -> Setting {
    Setting::Tools(ToolChoice::Tool {
        name: "lookup".into(),
    })
}
fn json_object() -> Setting {
    Setting::Format(ResponseFormat::JsonObject)
}
fn point_schema() -> Value {
    json!({"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"],
           "additionalProperties": false})
}
fn json_schema() -> Setting {
    Setting::Format(ResponseFormat::JsonSchema {
        name: "point".into(),
        schema: point_schema(),
        strict: true,
    })
}
fn stop() -> Setting {
    Setting::Stop(vec!["END".into(), "\n\n".into()])
}

/// The settings every wire must take as nothing at all.
fn no_ops() -> Vec<Setting> {
    vec![
        Setting::Tools(ToolChoice::Auto),
        Setting::Format(ResponseFormat::Text),
        Setting::Stop(Vec::new()),
    ]
}

/// What a wire must do with a setting: refuse it, or put these values at these JSON
/// pointers of the body.
type Expected = Option<Vec<(&'static str, Value)>>;

fn at(pairs: &[(&'static str, Value)]) -> Expected {
    Some(pairs.to_vec())
}

/// Where each wire keeps what its encoder writes: the token bound, the temperature, the
/// user's text and the offered tool's name.
fn encoder_fields(wire: &str) -> [(&'static str, Value); 4] {
    let (max, temp, user, tool) = match wire {
        "openai-chat" | "llamacpp" | "mistral" => (
            "/max_tokens",
            "/temperature",
            "/messages/1/content",
            "/tools/0/function/name",
        ),
        "openai-responses" => (
            "/max_output_tokens",
            "/temperature",
            "/input/0/content/0/text",
            "/tools/0/name",
        ),
        "anthropic" => (
            "/max_tokens",
            "/temperature",
            "/messages/0/content/0/text",
            "/tools/0/name",
        ),
        "gemini" => (
            "/generationConfig/maxOutputTokens",
            "/generationConfig/temperature",
            "/contents/0/parts/0/text",
            "/tools/0/functionDeclarations/0/name",
        ),
        "ollama" => (
            "/options/num_predict",
            "/options/temperature",
            "/messages/1/content",
            "/tools/0/function/name",
        ),
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
fn table() -> Vec<(&'static str, Setting, Expected)> {
    let schema = point_schema();
    let chat_format = json!({"type": "json_schema",
                             "json_schema": {"name": "point", "schema": schema, "strict": true}});
    let mut rows = Vec::new();
    for wire in ["openai-chat", "llamacpp", "mistral"] {
        let required_word = if wire == "mistral" { "any" } else { "required" };
        let named_choice = if wire == "llamacpp" {
            None // llama.cpp reads tool_choice as a string only
        } else {
            at(&[(
                "/tool_choice",
                json!({"type": "function", "function": {"name": "lookup"}}),
            )])
        };
        rows.extend([
            (wire, none(), at(&[("/tool_choice", json!("none"))])),
            (
                wire,
                required(),
                at(&[("/tool_choice", json!(required_word))]),
            ),
            (wire, named(), named_choice),
            (
                wire,
                json_object(),
                at(&[("/response_format", json!({"type": "json_object"}))]),
            ),
            (
                wire,
                json_schema(),
                at(&[("/response_format", chat_format.clone())]),
            ),
            (wire, stop(), at(&[("/stop", json!(["END", "\n\n"]))])),
        ]);
    }
    let wire = "openai-responses";
    rows.extend([
        (wire, none(), at(&[("/tool_choice", json!("none"))])),
        (wire, required(), at(&[("/tool_choice", json!("required"))])),
        (
            wire,
            named(),
            at(&[(
                "/tool_choice",
                json!({"type": "function", "name": "lookup"}),
            )]),
        ),
        (
            wire,
            json_object(),
            at(&[("/text", json!({"format": {"type": "json_object"}}))]),
        ),
        (
            wire,
            json_schema(),
            at(&[(
                "/text/format",
                json!({"type": "json_schema", "name": "point", "schema": schema,
                       "strict": true}),
            )]),
        ),
        (wire, stop(), None),
    ]);
    let wire = "anthropic";
    rows.extend([
        (
            wire,
            none(),
            at(&[("/tool_choice", json!({"type": "none"}))]),
        ),
        (
            wire,
            required(),
            at(&[("/tool_choice", json!({"type": "any"}))]),
        ),
        (
            wire,
            named(),
            at(&[("/tool_choice", json!({"type": "tool", "name": "lookup"}))]),
        ),
        (wire, json_object(), None),
        (
            wire,
            json_schema(),
            at(&[(
                "/output_config",
                json!({"format": {"type": "json_schema", "schema": schema}}),
            )]),
        ),
        (
            wire,
            stop(),
            at(&[("/stop_sequences", json!(["END", "\n\n"]))]),
        ),
    ]);
    let wire = "gemini";
    let mode = "/toolConfig/functionCallingConfig";
    rows.extend([
        (wire, none(), at(&[(mode, json!({"mode": "NONE"}))])),
        (wire, required(), at(&[(mode, json!({"mode": "ANY"}))])),
        (
            wire,
            named(),
            at(&[(
                mode,
                json!({"mode": "ANY", "allowedFunctionNames": ["lookup"]}),
            )]),
        ),
        (
            wire,
            json_object(),
            at(&[(
                "/generationConfig/responseMimeType",
                json!("application/json"),
            )]),
        ),
        (
            wire,
            json_schema(),
            at(&[
                (
                    "/generationConfig/responseMimeType",
                    json!("application/json"),
                ),
                ("/generationConfig/responseJsonSchema", schema.clone()),
            ]),
        ),
        (
            wire,
            stop(),
            at(&[("/generationConfig/stopSequences", json!(["END", "\n\n"]))]),
        ),
    ]);
    let wire = "ollama";
    rows.extend([
        (wire, none(), None),
        (wire, required(), None),
        (wire, named(), None),
        (wire, json_object(), at(&[("/format", json!("json"))])),
        (wire, json_schema(), at(&[("/format", schema.clone())])),
        (
            wire,
            stop(),
            at(&[("/options/stop", json!(["END", "\n\n"]))]),
        ),
    ]);
    rows
}

fn history() -> History {
    let mut history = History::new();
    history.push(Message::system("answer in one line"));
    history.push(Message::user("where am I?"));
    history
}

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "lookup".into(),
        description: "Look a city up".into(),
        input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    }]
}

/// The body `wire` encodes with `extra` merged in, through [`Client::encode`]; checked to
/// be the one [`Protocol::encode`] gives.
fn encode(wire: &str, extra: Map<String, Value>) -> Value {
    let protocol = protocols::by_name(wire).unwrap();
    let options = RequestOptions {
        max_tokens: Some(MAX_TOKENS),
        temperature: Some(TEMPERATURE),
        extra,
        ..RequestOptions::default()
    };
    let (history, tools) = (history(), tools());
    let request = ChatRequest {
        model: "m",
        history: &history,
        tools: &tools,
        options: &options,
    };
    let client = Client::new(protocol.clone(), ClientConfig::new("http://127.0.0.1:9")).unwrap();
    let bytes = client.encode(&request).unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body, protocol.encode(&request).unwrap(), "{wire}");
    body
}

fn assert_fields(wire: &str, what: &str, body: &Value, fields: &[(&'static str, Value)]) {
    for (pointer, want) in fields {
        assert_eq!(
            body.pointer(pointer),
            Some(want),
            "{wire}, {what}: {pointer} in {body:#}"
        );
    }
}

#[test]
fn every_wire_is_in_the_table() {
    let wires: Vec<&str> = table().iter().map(|(wire, _, _)| *wire).collect();
    for name in protocols::NAMES {
        assert!(wires.contains(name), "{name} has no rows");
        let _ = encoder_fields(name);
    }
}

#[test]
fn each_setting_encodes_as_the_wire_says_it_and_keeps_the_encoders_fields() {
    for (wire, setting, expected) in table() {
        let protocol = protocols::by_name(wire).unwrap();
        let what = format!("{setting:?}");
        let fields = setting.fields(&*protocol);
        let Some(expected) = expected else {
            assert_eq!(fields, None, "{wire} should refuse {what}");
            continue;
        };
        let fields = fields.unwrap_or_else(|| panic!("{wire} refused {what}"));
        let mut options = RequestOptions::default();
        options.merge_extra(fields);
        let body = encode(wire, options.extra);
        assert_fields(wire, &what, &body, &expected);
        assert_fields(wire, &what, &body, &encoder_fields(wire));
    }
}

#[test]
fn asking_for_the_default_changes_nothing_on_any_wire() {
    for wire in protocols::NAMES {
        let protocol = protocols::by_name(wire).unwrap();
        let plain = encode(wire, Map::new());
        for setting in no_ops() {
            let fields = setting.fields(&*protocol);
            assert_eq!(fields, Some(Map::new()), "{wire}, {setting:?}");
        }
        assert_fields(wire, "no settings", &plain, &encoder_fields(wire));
    }
}

/// The table's row for `setting` on `wire`.
fn expected(wire: &str, setting: &Setting) -> Expected {
    let key = format!("{setting:?}");
    table()
        .into_iter()
        .find(|(w, s, _)| *w == wire && format!("{s:?}") == key)
        .unwrap_or_else(|| panic!("no row for {wire}, {key}"))
        .2
}

#[test]
fn all_settings_together_keep_each_other_and_the_encoders_fields() {
    for wire in protocols::NAMES {
        let protocol = protocols::by_name(wire).unwrap();
        let mut options = RequestOptions::default();
        let mut want = Vec::new();
        for setting in [named(), json_schema(), stop()] {
            if let Some(fields) = setting.fields(&*protocol) {
                options.merge_extra(fields);
                want.extend(expected(wire, &setting).unwrap());
            }
        }
        let body = encode(wire, options.extra);
        assert_fields(wire, "all settings", &body, &want);
        assert_fields(wire, "all settings", &body, &encoder_fields(wire));
    }
}

#[test]
fn gemini_settings_join_the_encoders_generation_config() {
    let gemini = protocols::by_name("gemini").unwrap();
    let mut options = RequestOptions::default();
    options.merge_extra(json_schema().fields(&*gemini).unwrap());
    options.merge_extra(stop().fields(&*gemini).unwrap());
    let body = encode("gemini", options.extra);
    assert_eq!(
        body["generationConfig"],
        json!({
            "maxOutputTokens": MAX_TOKENS,
            "temperature": TEMPERATURE,
            "responseMimeType": "application/json",
            "responseJsonSchema": point_schema(),
            "stopSequences": ["END", "\n\n"],
        })
    );
}

#[test]
fn ollama_stop_sequences_join_the_encoders_options() {
    let ollama = protocols::by_name("ollama").unwrap();
    let mut options = RequestOptions::default();
    options.merge_extra(stop().fields(&*ollama).unwrap());
    options.merge_extra(json_object().fields(&*ollama).unwrap());
    let body = encode("ollama", options.extra);
    assert_eq!(
        body["options"],
        json!({"num_predict": MAX_TOKENS, "temperature": TEMPERATURE, "stop": ["END", "\n\n"]})
    );
    assert_eq!(body["format"], "json");
}

#[test]
fn forbidding_tool_calls_is_the_none_choice_where_the_wire_has_one() {
    for wire in protocols::NAMES {
        let protocol = protocols::by_name(wire).unwrap();
        if let Some(fields) = protocol.tool_choice_fields(&ToolChoice::None) {
            assert_eq!(fields, protocol.forbid_tool_calls(), "{wire}");
        }
    }
}
