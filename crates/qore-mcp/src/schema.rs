//! Tool input schemas made acceptable to every provider before they reach qore-client's
//! codecs (which send `input_schema` as it is, except Gemini's, which rewrites it further).
//!
//! Promises ([`fit`]): the root is `"type": "object"` with a `properties` object (OpenAI
//! and Anthropic refuse anything else); the root's `oneOf`/`anyOf`/`allOf`/`not`/`enum`
//! are dropped (OpenAI refuses them at the top level; arguments are still checked by the
//! server); `$schema` is dropped (a dialect URL the validator does not know would fail
//! registration); everything below the root is kept.

use serde_json::{Map, Value};

/// `schema` as every provider accepts it.
pub fn fit(schema: &Map<String, Value>) -> Value {
    let mut root = schema.clone();
    for key in ["$schema", "oneOf", "anyOf", "allOf", "not", "enum", "const"] {
        root.remove(key);
    }
    root.insert("type".into(), Value::String("object".into()));
    if !root.get("properties").is_some_and(Value::is_object) {
        root.insert("properties".into(), Value::Object(Map::new()));
    }
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn roots_become_plain_objects() {
        let cases = [
            (json!({}), json!({"type": "object", "properties": {}})),
            (
                json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                       "properties": {"a": {"type": "string"}}, "required": ["a"]}),
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
            ),
            (
                json!({"anyOf": [{"required": ["a"]}, {"required": ["b"]}],
                       "properties": {"a": {"oneOf": [{"type": "string"}]}}}),
                json!({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}}),
            ),
            (
                json!({"type": "string", "properties": 3}),
                json!({"type": "object", "properties": {}}),
            ),
        ];
        for (input, want) in cases {
            let Value::Object(map) = &input else {
                unreachable!()
            };
            assert_eq!(fit(map), want, "{input}");
        }
    }
}
