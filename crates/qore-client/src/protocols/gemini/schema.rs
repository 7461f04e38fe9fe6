//! Tool parameter schemas reduced to what Gemini's `parameters` accepts: a subset of the
//! OpenAPI 3.0 Schema object. Gemini rejects the whole request on the first keyword it does
//! not know (`Unknown name "exclusiveMinimum"`), on keywords that do not fit a node's type
//! (`properties: only allowed for OBJECT type`) and on `required` names that are not
//! properties, so tools written as JSON Schema (MCP servers, schemars, zod, pydantic) are
//! rewritten before they are sent.
//!
//! Promises ([`sanitize`]):
//! - kept, where the node's type allows it: `type`, `description`, `title`, `nullable`,
//!   `enum` (strings), `format` (only `enum`/`date-time` for strings, `int32`/`int64`,
//!   `float`/`double`), `properties`, `required` (only names that are properties),
//!   `items`, `minItems`/`maxItems`, `minLength`/`maxLength`/`pattern`,
//!   `minimum`/`maximum`, `minProperties`/`maxProperties`, `propertyOrdering`, `anyOf`;
//! - rewritten: `$ref` is inlined from `$defs`/`definitions` (a recursive reference
//!   becomes a free-form object); `allOf` is merged into one node; `oneOf` is `anyOf`; a
//!   `null` branch or type becomes `nullable: true`; a list of types becomes `anyOf`;
//!   `const` becomes a one-value `enum`; `exclusiveMinimum`/`exclusiveMaximum` become the
//!   inclusive bound (the next integer for integers); an `enum` of non-strings is dropped
//!   and its values are listed in the description; a missing `type` is inferred from
//!   `properties`/`items`/`enum`; an array without `items` (or with free-form items) gets
//!   string items (Gemini requires typed items);
//! - dropped: everything else (`$schema`, `$id`, `additionalProperties`, `default`,
//!   `examples`, `multipleOf`, `not`, `if`/`then`/`else`, `patternProperties`, …);
//! - the root is an object schema with `properties` (empty when the tool takes no
//!   arguments), as the recordings show Gemini accepts.

use serde_json::{json, Map, Value};

/// How deep `$ref` inlining and nesting may go before a node becomes a free-form object.
const MAX_DEPTH: usize = 24;

/// `schema` (JSON Schema) as a Gemini function declaration's `parameters`.
pub fn sanitize(schema: &Value) -> Value {
    let mut sanitizer = Sanitizer {
        root: schema,
        expanding: Vec::new(),
    };
    let mut root = sanitizer.node(schema, 0);
    if root.get("type").and_then(Value::as_str) == Some("object")
        && !root.contains_key("properties")
    {
        root.insert("properties".into(), json!({}));
    }
    if root.is_empty() {
        root.insert("type".into(), json!("object"));
        root.insert("properties".into(), json!({}));
    }
    Value::Object(root)
}

struct Sanitizer<'a> {
    root: &'a Value,
    /// `$ref`s being inlined (a reference to one of them is recursive).
    expanding: Vec<String>,
}

impl Sanitizer<'_> {
    fn node(&mut self, schema: &Value, depth: usize) -> Map<String, Value> {
        let Value::Object(source) = schema else {
            return Map::new(); // `true` or a non-schema: anything goes
        };
        if depth > MAX_DEPTH {
            return free_form_object();
        }
        if let Some(Value::String(reference)) = source.get("$ref") {
            let mut node = self.reference(reference, depth);
            annotations(source, &mut node);
            return node;
        }
        match source.get("allOf").and_then(Value::as_array) {
            Some(members) => {
                let merged = self.merge_all_of(source, members);
                self.plain(&merged, depth)
            }
            None => self.plain(source, depth),
        }
    }

    fn reference(&mut self, reference: &str, depth: usize) -> Map<String, Value> {
        let target = reference
            .strip_prefix('#')
            .and_then(|pointer| self.root.pointer(pointer));
        match target {
            Some(target) if !self.expanding.iter().any(|r| r == reference) => {
                self.expanding.push(reference.to_owned());
                let node = self.node(target, depth + 1);
                self.expanding.pop();
                node
            }
            // Recursive or unresolvable: Gemini has no references, so no recursion either.
            _ => free_form_object(),
        }
    }

    /// `allOf` members and the node's own keywords as one raw node (properties and
    /// `required` joined; for other keywords the node's own, then the first member's, win).
    fn merge_all_of(&self, source: &Map<String, Value>, members: &[Value]) -> Map<String, Value> {
        let mut merged: Map<String, Value> = source.clone();
        merged.remove("allOf");
        for member in members {
            let member = match member.get("$ref").and_then(Value::as_str) {
                Some(reference) => reference
                    .strip_prefix('#')
                    .and_then(|pointer| self.root.pointer(pointer))
                    .unwrap_or(member),
                None => member,
            };
            let Value::Object(member) = member else {
                continue;
            };
            for (key, value) in member {
                match (key.as_str(), merged.get_mut(key)) {
                    ("properties", Some(Value::Object(ours))) => {
                        if let Value::Object(theirs) = value {
                            for (name, schema) in theirs {
                                ours.entry(name.clone()).or_insert_with(|| schema.clone());
                            }
                        }
                    }
                    ("required", Some(Value::Array(ours))) => {
                        for name in value.as_array().into_iter().flatten() {
                            if !ours.contains(name) {
                                ours.push(name.clone());
                            }
                        }
                    }
                    (_, Some(_)) => {}
                    (_, None) => {
                        merged.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        merged
    }

    /// A node without `$ref` or `allOf`.
    fn plain(&mut self, source: &Map<String, Value>, depth: usize) -> Map<String, Value> {
        let mut node = Map::new();
        let mut nullable = source.get("nullable") == Some(&Value::Bool(true));
        let branches = source
            .get("anyOf")
            .or_else(|| source.get("oneOf"))
            .and_then(Value::as_array);
        if let Some(branches) = branches {
            let (nulls, others): (Vec<&Value>, Vec<&Value>) =
                branches.iter().partition(|b| is_null_schema(b));
            nullable |= !nulls.is_empty();
            match others.as_slice() {
                [] => {}
                [only] => node = self.node(only, depth + 1),
                many => {
                    let sanitized = many
                        .iter()
                        .map(|b| Value::Object(self.node(b, depth + 1)))
                        .collect();
                    node.insert("anyOf".into(), Value::Array(sanitized));
                }
            }
        }

        let mut types: Vec<&str> = match source.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if types.contains(&"null") {
            nullable = true;
            types.retain(|t| *t != "null");
        }
        if types.len() > 1 {
            // A list of types: one branch per type, each with the keywords that fit it.
            let branches = types
                .iter()
                .map(|t| {
                    let mut one = source.clone();
                    one.insert("type".into(), json!(t));
                    one.remove("anyOf");
                    one.remove("oneOf");
                    one.remove("description");
                    one.remove("title");
                    Value::Object(self.plain(&one, depth + 1))
                })
                .collect();
            node.insert("anyOf".into(), Value::Array(branches));
        } else if let Some(t) = types.first() {
            node.insert("type".into(), json!(t));
        }
        if !node.contains_key("type") && !node.contains_key("anyOf") {
            if let Some(t) = inferred_type(source) {
                node.insert("type".into(), json!(t));
            }
        }

        annotations(source, &mut node);
        let kind = node.get("type").and_then(Value::as_str).map(str::to_owned);
        self.enumeration(source, kind.as_deref(), &mut node, &mut nullable);
        match kind.as_deref() {
            Some("string") => {
                copy_keys(source, &mut node, &["minLength", "maxLength", "pattern"]);
                allowed_format(source, &mut node, &["enum", "date-time"]);
            }
            Some("integer") => {
                numeric_bounds(source, &mut node, true);
                allowed_format(source, &mut node, &["int32", "int64"]);
            }
            Some("number") => {
                numeric_bounds(source, &mut node, false);
                allowed_format(source, &mut node, &["float", "double"]);
            }
            Some("array") => {
                copy_keys(source, &mut node, &["minItems", "maxItems"]);
                let items = match source.get("items").or_else(|| source.get("prefixItems")) {
                    Some(Value::Array(tuple)) => match tuple.as_slice() {
                        [] => None,
                        [one] => Some(Value::Object(self.node(one, depth + 1))),
                        many => Some(json!({"anyOf": many
                            .iter()
                            .map(|s| Value::Object(self.node(s, depth + 1)))
                            .collect::<Vec<_>>()})),
                    },
                    Some(items) => Some(Value::Object(self.node(items, depth + 1))),
                    None => None,
                }
                .filter(|items| items.as_object().is_some_and(|o| !o.is_empty()));
                match items {
                    Some(items) => {
                        node.insert("items".into(), items);
                    }
                    // Gemini requires `items` on every array.
                    None if !node.contains_key("items") => {
                        node.insert("items".into(), json!({"type": "string"}));
                    }
                    None => {}
                }
            }
            Some("object") => self.object(source, &mut node, depth),
            _ => {}
        }
        if nullable {
            node.insert("nullable".into(), Value::Bool(true));
        }
        node
    }

    fn object(&mut self, source: &Map<String, Value>, node: &mut Map<String, Value>, depth: usize) {
        copy_keys(source, node, &["minProperties", "maxProperties"]);
        let Some(Value::Object(properties)) = source.get("properties") else {
            return;
        };
        let sanitized: Map<String, Value> = properties
            .iter()
            .map(|(name, schema)| (name.clone(), Value::Object(self.node(schema, depth + 1))))
            .collect();
        let required: Vec<Value> = source
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|name| name.as_str().is_some_and(|n| sanitized.contains_key(n)))
            .cloned()
            .collect();
        if !required.is_empty() {
            node.insert("required".into(), Value::Array(required));
        }
        if let Some(Value::Array(order)) = source.get("propertyOrdering") {
            if order.iter().all(Value::is_string) {
                node.insert("propertyOrdering".into(), Value::Array(order.clone()));
            }
        }
        node.insert("properties".into(), Value::Object(sanitized));
    }

    /// `enum` and `const`: strings are kept; other values are listed in the description.
    fn enumeration(
        &self,
        source: &Map<String, Value>,
        kind: Option<&str>,
        node: &mut Map<String, Value>,
        nullable: &mut bool,
    ) {
        let values: Vec<&Value> = match (source.get("enum"), source.get("const")) {
            (Some(Value::Array(values)), _) => values.iter().collect(),
            (_, Some(value)) => vec![value],
            _ => return,
        };
        if values.iter().any(|v| v.is_null()) {
            *nullable = true;
        }
        let values: Vec<&Value> = values.into_iter().filter(|v| !v.is_null()).collect();
        if values.is_empty() {
            return;
        }
        if matches!(kind, None | Some("string")) && values.iter().all(|v| v.is_string()) {
            node.insert("type".into(), json!("string"));
            let values = values.into_iter().cloned().collect();
            node.insert("enum".into(), Value::Array(values));
            return;
        }
        let listed: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        let note = format!("Allowed values: {}.", listed.join(", "));
        let description = match node.get("description").and_then(Value::as_str) {
            Some(text) => format!("{text} {note}"),
            None => note,
        };
        node.insert("description".into(), Value::String(description));
    }
}

fn free_form_object() -> Map<String, Value> {
    let mut node = Map::new();
    node.insert("type".into(), json!("object"));
    node
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

fn inferred_type(source: &Map<String, Value>) -> Option<&'static str> {
    if source.contains_key("properties") {
        Some("object")
    } else if source.contains_key("items") || source.contains_key("prefixItems") {
        Some("array")
    } else if let Some(Value::Array(values)) = source.get("enum") {
        values
            .iter()
            .all(|v| v.is_string() || v.is_null())
            .then_some("string")
    } else {
        None
    }
}

/// `description` and `title` (strings only), the source's winning over what is there.
fn annotations(source: &Map<String, Value>, node: &mut Map<String, Value>) {
    for key in ["description", "title"] {
        if let Some(Value::String(text)) = source.get(key) {
            node.insert(key.into(), Value::String(text.clone()));
        }
    }
}

fn copy_keys(source: &Map<String, Value>, node: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(value) = source.get(*key).filter(|v| v.is_number() || v.is_string()) {
            node.insert((*key).into(), value.clone());
        }
    }
}

fn allowed_format(source: &Map<String, Value>, node: &mut Map<String, Value>, allowed: &[&str]) {
    if let Some(format) = source.get("format").and_then(Value::as_str) {
        if allowed.contains(&format) {
            node.insert("format".into(), json!(format));
        }
    }
}

/// `minimum`/`maximum`, with exclusive bounds turned into the inclusive bound they imply.
fn numeric_bounds(source: &Map<String, Value>, node: &mut Map<String, Value>, integer: bool) {
    for (inclusive, exclusive, step) in [
        ("minimum", "exclusiveMinimum", 1.0),
        ("maximum", "exclusiveMaximum", -1.0),
    ] {
        let mut bound = source.get(inclusive).and_then(Value::as_f64);
        // Draft 2020-12: a number. (Draft 4's boolean form only qualifies `minimum`.)
        if let Some(limit) = source.get(exclusive).and_then(Value::as_f64) {
            let implied = if integer {
                if step > 0.0 {
                    limit.floor() + 1.0
                } else {
                    limit.ceil() - 1.0
                }
            } else {
                limit
            };
            bound = Some(match bound {
                Some(b) if step > 0.0 => b.max(implied),
                Some(b) => b.min(implied),
                None => implied,
            });
        }
        if let Some(bound) = bound {
            node.insert(inclusive.into(), number(bound, integer));
        }
    }
}

fn number(value: f64, integer: bool) -> Value {
    if (integer || value.fract() == 0.0) && value.abs() < 9.0e15 {
        json!(value as i64)
    } else {
        json!(value)
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
