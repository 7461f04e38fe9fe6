//! Request settings (tool choice, response format, stop sequences) on every wire protocol.
//!
//! For each wire and each setting, the table says what the wire's fields must put in the
//! request body, or that the wire refuses the setting (`None`: it cannot say it). Each
//! accepted setting is merged into [`RequestOptions::extra`] and a real request is encoded
//! through [`Client::encode`] (and [`Protocol::encode`], which must agree): the body has
//! the expected fields and still has what the encoder wrote (the token bound, the
//! temperature, the messages, the tools). Asking for what the wire does anyway (`auto`
//! tools, plain text, no stop sequences) adds nothing on any wire.

#[path = "request_settings/table.rs"]
mod table;

use qore_client::{protocols, ChatRequest, Client, ClientConfig, RequestOptions};
use qore_core::{History, Message, ToolChoice, ToolSpec};
use serde_json::{json, Map, Value};
use table::*;

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
