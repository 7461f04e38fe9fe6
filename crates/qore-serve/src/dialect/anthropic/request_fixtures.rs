//! Real requests: every recorded Anthropic Messages request body decodes (or is refused
//! for exactly the block it cannot carry, or refused as Anthropic refused it), and a request shaped like Claude Code's decodes
//! with its hints named.

use super::*;
use axum::http::{HeaderName, HeaderValue};
use serde_json::json;

/// The first block of `body`'s messages that no qore-core block carries: its type.
fn uncarried_block(body: &Value) -> Option<String> {
    const CARRIED: &[&str] = &[
        "text",
        "image",
        "thinking",
        "redacted_thinking",
        "tool_use",
        "tool_result",
    ];
    let messages = body["messages"].as_array()?;
    let blocks = (messages.iter())
        .filter_map(|m| m["content"].as_array())
        .flatten();
    for block in blocks {
        let nested = block["content"].as_array().into_iter().flatten();
        for block in std::iter::once(block).chain(nested) {
            let kind = block["type"].as_str().unwrap_or("");
            if !CARRIED.contains(&kind) {
                return Some(kind.to_owned());
            }
            if kind == "image" && block["source"]["type"] == "file" {
                return Some("file image sources".to_owned());
            }
        }
    }
    None
}

fn header_map(pairs: &[(String, String)]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in pairs {
        let name = HeaderName::from_bytes(name.as_bytes());
        let value = HeaderValue::from_str(value);
        if let (Ok(name), Ok(value)) = (name, value) {
            headers.append(name, value);
        }
    }
    headers
}

#[test]
fn every_recorded_messages_request_decodes() {
    let Some(dir) = qore_testkit::cassette::fixtures_dir() else {
        eprintln!("no fixtures: skipped");
        return;
    };
    let cassettes = qore_testkit::cassette::load_cassettes(&dir).unwrap();
    let (mut decoded, mut refused) = (0, 0);
    for cassette in cassettes.iter().filter(|c| c.provider == "anthropic") {
        for exchange in &cassette.exchanges {
            let Some(body) = exchange.request_body.as_deref() else {
                continue;
            };
            if exchange.method != "POST" || !exchange.path.starts_with("/v1/messages") {
                continue;
            }
            let name = cassette.name();
            let headers = header_map(&exchange.request_headers);
            let json: Value = serde_json::from_str(body).unwrap();
            let result = if exchange.path.ends_with("/count_tokens") {
                crate::dialect::anthropic::count_tokens::decode(body.as_bytes(), &headers)
            } else {
                decode(body.as_bytes(), &headers)
            };
            match (result, uncarried_block(&json)) {
                (Ok(inbound), None) => {
                    decoded += 1;
                    assert_eq!(inbound.model, json["model"], "{name}");
                    let turns = json["messages"].as_array().unwrap().len();
                    let first = inbound.history.messages().first().map(|m| m.role);
                    let system = usize::from(first == Some(Role::System));
                    assert_eq!(inbound.history.len(), turns + system, "{name}");
                    if exchange.request_header("anthropic-beta").is_some() {
                        assert!(inbound.dropped.contains(&"anthropic-beta".to_owned()));
                    }
                    assert!(crate::dialect::anthropic::count_tokens::count_tokens(&inbound) > 0);
                }
                (Err(err), Some(kind)) => {
                    refused += 1;
                    assert_eq!(err.status, 400, "{name}");
                    assert!(
                        err.message.contains(&format!("{kind} cannot be carried"))
                            || err
                                .message
                                .contains(&format!("{kind} blocks cannot be carried")),
                        "{name}: {}",
                        err.message
                    );
                }
                (Ok(_), Some(kind)) => panic!("{name}: a {kind} block was taken"),
                // Anthropic refused it too (a boolean `input_schema` …).
                (Err(err), None) if exchange.status == 400 => {
                    refused += 1;
                    assert_eq!(err.status, 400, "{name}");
                }
                (Err(err), None) => panic!("{name}: {err:?}"),
            }
        }
    }
    eprintln!("{decoded} recorded requests decoded, {refused} refused for their blocks");
    assert!(decoded > 400, "only {decoded} decoded");
}

/// Shaped like what Claude Code (2.x) sends: adaptive thinking, context management, an
/// effort, system blocks and tools with `cache_control`, a hosted tool, `metadata.user_id`,
/// a tool loop with signed thinking, and its beta headers.
#[test]
fn a_claude_code_request_decodes_with_its_hints_named() {
    let cache = json!({"type": "ephemeral"});
    let body = json!({
        "model": "claude-sonnet-4-5-20250929",
        "max_tokens": 32000,
        "stream": true,
        "temperature": 1,
        "metadata": {"user_id": "user_abc_account_def_session_123"},
        "thinking": {"type": "adaptive"},
        "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
        "output_config": {"effort": "high"},
        "system": [
            {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
            {"type": "text", "text": "You are an interactive CLI tool ...", "cache_control": cache},
        ],
        "tools": [
            {"name": "Bash", "description": "Executes a bash command",
                "input_schema": {"type": "object", "$schema": "http://json-schema.org/draft-07/schema#",
                    "properties": {"command": {"type": "string"}}, "required": ["command"],
                    "additionalProperties": false}},
            {"name": "Read", "description": "Reads a file",
                "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}},
            {"name": "TodoWrite", "description": "Write todos", "cache_control": cache,
                "input_schema": {"type": "object", "properties": {"todos": {"type": "array"}}}},
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 8},
        ],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>context</system-reminder>"},
                {"type": "text", "text": "list the files", "cache_control": cache}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "I should run ls.", "signature": "EqQBCkYI=="},
                {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "is_error": false,
                    "content": "Cargo.toml\nsrc", "cache_control": cache}]},
        ],
    });
    let mut headers = HeaderMap::new();
    headers.insert("anthropic-version", HeaderValue::from_static("2023-06-01"));
    headers.insert(
        "anthropic-beta",
        HeaderValue::from_static("claude-code-20250219,interleaved-thinking-2025-05-14"),
    );
    let inbound = decode(body.to_string().as_bytes(), &headers).unwrap();
    for name in [
        "anthropic-beta",
        "cache_control",
        "thinking",
        "context_management",
        "output_config",
        "metadata",
        "web_search_20250305",
    ] {
        assert!(
            inbound.dropped.contains(&name.to_owned()),
            "{name}: {:?}",
            inbound.dropped
        );
    }
    assert_eq!(inbound.dropped.len(), 7, "{:?}", inbound.dropped);
    assert_eq!(inbound.tools.len(), 3);
    assert_eq!(inbound.history.len(), 4);
    assert_eq!(inbound.history.messages()[0].role, Role::System);
    assert_eq!(inbound.history.messages()[0].blocks.len(), 2);
    assert_eq!(inbound.max_tokens, Some(32000));
    assert_eq!(inbound.temperature, Some(1.0));
    assert!(inbound.stream);
    assert_eq!(inbound.passthrough_headers.len(), 2);
}

/// Every value of `value`, each replaced in turn by each of `with`: the bodies that result.
fn mutations(value: &Value, with: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = with.to_vec();
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                for mutated in mutations(child, with) {
                    let mut copy = map.clone();
                    copy.insert(key.clone(), mutated);
                    out.push(Value::Object(copy));
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                for mutated in mutations(child, with) {
                    let mut copy = items.clone();
                    copy[i] = mutated;
                    out.push(Value::Array(copy));
                }
            }
        }
        _ => {}
    }
    out
}

#[test]
fn any_value_of_the_wrong_type_is_a_400_naming_a_field_never_a_panic() {
    let body = json!({
        "model": "m", "max_tokens": 8, "stream": true, "temperature": 0.5,
        "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "a", "description": "d", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "tool", "name": "a"},
        "stop_sequences": ["x"],
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                    "data": "YWJj"}}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "tool_use", "id": "t1", "name": "a", "input": {"x": 1}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                "is_error": true, "content": [{"type": "text", "text": "r"}]}]},
        ],
    });
    let with = [
        json!(null),
        json!(7),
        json!("s"),
        json!([]),
        json!({}),
        json!(true),
    ];
    let all = mutations(&body, &with);
    assert!(all.len() > 300, "{}", all.len());
    for mutated in all {
        if let Err(err) = decode(mutated.to_string().as_bytes(), &HeaderMap::new()) {
            assert_eq!(err.status, 400, "{mutated}");
            assert!(
                err.param.as_deref().is_some_and(|p| !p.is_empty()),
                "{mutated}"
            );
            assert!(
                err.message.contains(err.param.as_deref().unwrap_or(""))
                    || err.param.as_deref() == Some("body"),
                "{err:?}"
            );
        }
    }
}
