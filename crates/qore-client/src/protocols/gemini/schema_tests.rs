//! The sanitizer on schemas as real tool authors write them (MCP servers via
//! zod-to-json-schema, schemars, pydantic v2, zod 4) and on the schemas the recordings show
//! Gemini accepting. Expected outputs are written by hand from Gemini's Schema reference.

use super::*;
use serde_json::json;

#[test]
fn mcp_filesystem_edit_file_zod_to_json_schema() {
    let schema = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "edits": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "oldText": {"type": "string", "description": "Text to search for - must match exactly"},
                    "newText": {"type": "string", "description": "Text to replace with"}
                },
                "required": ["oldText", "newText"],
                "additionalProperties": false
            }},
            "dryRun": {"type": "boolean", "default": false, "description": "Preview changes using git-style diff format"}
        },
        "required": ["path", "edits"],
        "additionalProperties": false,
        "$schema": "http://json-schema.org/draft-07/schema#"
    });
    assert_eq!(
        sanitize(&schema),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "edits": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "oldText": {"type": "string", "description": "Text to search for - must match exactly"},
                        "newText": {"type": "string", "description": "Text to replace with"}
                    },
                    "required": ["oldText", "newText"]
                }},
                "dryRun": {"type": "boolean", "description": "Preview changes using git-style diff format"}
            },
            "required": ["path", "edits"]
        })
    );
}

#[test]
fn schemars_definitions_refs_and_optional_fields() {
    // schemars 0.8 for `struct Args { mode: Mode, limit: Option<u32>, tags: Vec<String> }`.
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Args",
        "type": "object",
        "required": ["mode", "tags"],
        "properties": {
            "mode": {"$ref": "#/definitions/Mode"},
            "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 0.0},
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "definitions": {
            "Mode": {"description": "How fast to go.", "type": "string", "enum": ["fast", "slow"]}
        }
    });
    assert_eq!(
        sanitize(&schema),
        json!({
            "title": "Args",
            "type": "object",
            "required": ["mode", "tags"],
            "properties": {
                "mode": {"description": "How fast to go.", "type": "string", "enum": ["fast", "slow"]},
                "limit": {"type": "integer", "minimum": 0, "nullable": true},
                "tags": {"type": "array", "items": {"type": "string"}}
            }
        })
    );
}

#[test]
fn pydantic_v2_defs_optional_union_and_exclusive_bounds() {
    let schema = json!({
        "$defs": {
            "Address": {
                "properties": {
                    "street": {"title": "Street", "type": "string"},
                    "zip": {"title": "Zip", "type": "string", "pattern": "^[0-9]{5}$"}
                },
                "required": ["street"],
                "title": "Address",
                "type": "object"
            }
        },
        "properties": {
            "name": {"title": "Name", "type": "string", "minLength": 1},
            "age": {"anyOf": [{"type": "integer", "exclusiveMinimum": 0}, {"type": "null"}],
                    "default": null, "title": "Age"},
            "score": {"type": "number", "exclusiveMaximum": 1.5, "multipleOf": 0.5},
            "address": {"$ref": "#/$defs/Address", "description": "Where they live"}
        },
        "required": ["name", "address"],
        "title": "Person",
        "type": "object"
    });
    assert_eq!(
        sanitize(&schema),
        json!({
            "properties": {
                "name": {"title": "Name", "type": "string", "minLength": 1},
                "age": {"type": "integer", "minimum": 1, "title": "Age", "nullable": true},
                "score": {"type": "number", "maximum": 1.5},
                "address": {
                    "properties": {
                        "street": {"title": "Street", "type": "string"},
                        "zip": {"title": "Zip", "type": "string", "pattern": "^[0-9]{5}$"}
                    },
                    "required": ["street"],
                    "title": "Address",
                    "type": "object",
                    "description": "Where they live"
                }
            },
            "required": ["name", "address"],
            "title": "Person",
            "type": "object"
        })
    );
}

#[test]
fn recursive_references_stop_at_a_free_form_object() {
    let schema = json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {
            "label": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
        }}}
    });
    assert_eq!(
        sanitize(&schema),
        json!({"type": "object", "properties": {"root": {"type": "object", "properties": {
            "label": {"type": "string"},
            "children": {"type": "array", "items": {"type": "object"}}
        }}}})
    );
    let dangling = json!({"type": "object", "properties": {"x": {"$ref": "#/nowhere"}}});
    assert_eq!(
        sanitize(&dangling),
        json!({"type": "object", "properties": {"x": {"type": "object"}}})
    );
}

#[test]
fn tools_without_arguments_get_an_empty_object() {
    let empty = json!({"type": "object", "properties": {}});
    assert_eq!(sanitize(&json!({})), empty);
    assert_eq!(sanitize(&json!({"type": "object"})), empty);
    assert_eq!(
        sanitize(
            &json!({"type": "object", "additionalProperties": false, "properties": {}, "required": []})
        ),
        empty
    );
}

#[test]
fn enums_consts_formats_and_type_lists() {
    let schema = json!({
        "type": "object",
        "properties": {
            "level": {"type": "integer", "enum": [1, 2, 3], "description": "Log level."},
            "kind": {"const": "file"},
            "when": {"type": "string", "format": "date-time"},
            "site": {"type": "string", "format": "uri"},
            "size": {"type": "integer", "format": "int64"},
            "ratio": {"type": "number", "format": "uint8"},
            "id": {"type": ["string", "integer"], "description": "Name or number."},
            "color": {"enum": ["red", "green", null]},
            "shape": {"oneOf": [
                {"type": "object", "properties": {"r": {"type": "number"}}, "required": ["r", "unit"]},
                {"type": "string"}
            ]}
        },
        "required": ["level", "missing"]
    });
    assert_eq!(
        sanitize(&schema),
        json!({
            "type": "object",
            "properties": {
                "level": {"type": "integer", "description": "Log level. Allowed values: 1, 2, 3."},
                "kind": {"type": "string", "enum": ["file"]},
                "when": {"type": "string", "format": "date-time"},
                "site": {"type": "string"},
                "size": {"type": "integer", "format": "int64"},
                "ratio": {"type": "number"},
                "id": {"description": "Name or number.", "anyOf": [{"type": "string"}, {"type": "integer"}]},
                "color": {"type": "string", "enum": ["red", "green"], "nullable": true},
                "shape": {"anyOf": [
                    {"type": "object", "properties": {"r": {"type": "number"}}, "required": ["r"]},
                    {"type": "string"}
                ]}
            },
            "required": ["level"]
        })
    );
}

#[test]
fn all_of_merges_and_keywords_follow_the_type() {
    let schema = json!({
        "allOf": [
            {"$ref": "#/$defs/Base"},
            {"type": "object", "properties": {"extra": {"type": "boolean"}}, "required": ["extra"]}
        ],
        "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}
    });
    assert_eq!(
        sanitize(&schema),
        json!({"type": "object",
               "properties": {"id": {"type": "string"}, "extra": {"type": "boolean"}},
               "required": ["id", "extra"]})
    );
    // Keywords that do not fit the node's type are dropped; arrays always get items.
    let misplaced = json!({"type": "object", "properties": {
        "s": {"type": "string", "properties": {"x": {"type": "string"}}, "items": {"type": "string"}, "minimum": 3},
        "list": {"type": "array"},
        "anything": {"type": "array", "items": {}},
        "inferred": {"items": {"type": "integer"}, "maxItems": 4}
    }});
    assert_eq!(
        sanitize(&misplaced),
        json!({"type": "object", "properties": {
            "s": {"type": "string"},
            "list": {"type": "array", "items": {"type": "string"}},
            "anything": {"type": "array", "items": {"type": "string"}},
            "inferred": {"type": "array", "items": {"type": "integer"}, "maxItems": 4}
        }})
    );
}

#[test]
fn schemas_the_recordings_show_gemini_accepting_are_kept() {
    // rig's `plan_trip` and `macro_calculator` declarations (tool_definitions/*.yaml).
    let plan_trip = json!({"properties": {
        "destination": {"description": "Destination city", "type": "string"},
        "notes": {"description": "Optional free-form notes", "type": "string"},
        "transport": {"description": "Mode of transport", "enum": ["train", "car", "plane"], "type": "string"},
        "travellers": {"description": "Number of travellers", "type": "integer"},
        "waypoints": {"description": "Cities to pass through, in order", "items": {"type": "string"}, "type": "array"}
    }, "required": ["destination", "travellers", "transport", "waypoints"], "type": "object"});
    assert_eq!(sanitize(&plan_trip), plan_trip);
    let calculator = json!({"properties": {
        "operation": {"description": "The operation to perform (add, subtract, multiply, divide)", "type": "string"},
        "x": {"description": "First number in the calculation", "format": "int64", "type": "integer"},
        "y": {"description": "Second number in the calculation", "format": "int64", "type": "integer"}
    }, "required": ["x", "y", "operation"], "type": "object"});
    assert_eq!(sanitize(&calculator), calculator);
}

#[test]
fn property_names_that_look_like_keywords_are_just_names() {
    let schema = json!({"type": "object", "properties": {
        "type": {"type": "string"},
        "properties": {"type": "object", "additionalProperties": {"type": "string"}},
        "$ref": {"type": "string"}
    }, "required": ["type", "properties"]});
    assert_eq!(
        sanitize(&schema),
        json!({"type": "object", "properties": {
            "type": {"type": "string"},
            "properties": {"type": "object"},
            "$ref": {"type": "string"}
        }, "required": ["type", "properties"]})
    );
}
