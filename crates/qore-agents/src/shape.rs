//! What each wire accepts as a request body, checked structurally: the rules a provider's
//! API reference states for the conversation (roles, block types, required fields, every
//! tool call answered, arguments that are JSON). Used by load-time validation, so a
//! profile whose template writes a body the provider would reject is refused before it is
//! ever sent.
//!
//! A chat body must carry the wire's conversation (`messages`, `contents` or `input`); a
//! fill-in-the-middle body its prompt (`prompt`, or `input_prefix` for llama.cpp
//! `/infill`, whose `input_extra` is a list of `{"filename", "text"}` strings). Each check
//! returns the JSON path of the first problem.

use std::collections::HashSet;

use serde_json::Value;

type Check = Result<(), (String, String)>;

fn fail(at: impl Into<String>, message: impl Into<String>) -> Check {
    Err((at.into(), message.into()))
}

/// Check `body` against `protocol`'s request rules.
pub fn check(protocol: &str, body: &Value) -> Check {
    let Some(object) = body.as_object() else {
        return fail("", "the body is not a JSON object");
    };
    let fim = ["prompt", "input_prefix"]
        .iter()
        .any(|k| object.contains_key(*k));
    match protocol {
        _ if fim && !object.contains_key("messages") => check_fim(body),
        "openai-chat" | "llamacpp" | "mistral" => check_chat(body, false),
        "ollama" => check_chat(body, true),
        "anthropic" => check_anthropic(body),
        "gemini" => check_gemini(body),
        "openai-responses" => check_responses(body),
        other => fail("", format!("unknown protocol {other:?}")),
    }
}

fn array<'a>(body: &'a Value, key: &str) -> Result<&'a Vec<Value>, (String, String)> {
    match body.get(key) {
        Some(Value::Array(items)) if !items.is_empty() => Ok(items),
        Some(Value::Array(_)) => Err((key.into(), "is empty".into())),
        Some(_) => Err((key.into(), "is not an array".into())),
        None => Err((key.into(), "is missing".into())),
    }
}

fn string<'a>(v: &'a Value, at: &str) -> Result<&'a str, (String, String)> {
    v.as_str()
        .ok_or_else(|| (at.to_owned(), "must be a string".to_owned()))
}

fn check_fim(body: &Value) -> Check {
    for key in ["prompt", "input_prefix", "suffix", "input_suffix"] {
        if let Some(v) = body.get(key) {
            string(v, key)?;
        }
    }
    if let Some(extra) = body.get("input_extra") {
        let files = (extra.as_array()).ok_or(("input_extra".into(), "must be an array".into()))?;
        for (i, file) in files.iter().enumerate() {
            for key in ["filename", "text"] {
                let at = format!("input_extra[{i}].{key}");
                string(file.get(key).unwrap_or(&Value::Null), &at)?;
            }
        }
    }
    Ok(())
}

/// Every call id answered by a later result, and no result without a call.
struct Calls {
    open: Vec<String>,
    seen: HashSet<String>,
}

impl Calls {
    fn new() -> Self {
        Calls {
            open: Vec::new(),
            seen: HashSet::new(),
        }
    }
    fn call(&mut self, id: &str) {
        self.open.push(id.to_owned());
        self.seen.insert(id.to_owned());
    }
    fn result(&mut self, id: &str, at: &str) -> Check {
        if !self.seen.contains(id) {
            return fail(at, format!("answers {id:?}, which no earlier call has"));
        }
        self.open.retain(|o| o != id);
        Ok(())
    }
    fn end(self, at: &str) -> Check {
        match self.open.first() {
            Some(id) => fail(at, format!("the call {id:?} has no result")),
            None => Ok(()),
        }
    }
}

fn check_chat(body: &Value, ollama: bool) -> Check {
    let messages = array(body, "messages")?;
    let mut calls = Calls::new();
    for (i, m) in messages.iter().enumerate() {
        let at = format!("messages[{i}]");
        let role = string(&m["role"], &format!("{at}.role"))?;
        match role {
            "system" | "developer" | "user" => {
                check_chat_content(&m["content"], &at, ollama, false)?
            }
            "assistant" => {
                let has_calls = m.get("tool_calls").is_some();
                check_chat_content(&m["content"], &at, ollama, has_calls)?;
                for (j, c) in m["tool_calls"].as_array().into_iter().flatten().enumerate() {
                    let at = format!("{at}.tool_calls[{j}]");
                    string(&c["function"]["name"], &format!("{at}.function.name"))?;
                    let args = &c["function"]["arguments"];
                    match (ollama, args) {
                        (true, Value::Object(_)) => {}
                        (true, _) => {
                            return fail(format!("{at}.function.arguments"), "must be an object")
                        }
                        (false, Value::String(_)) => {}
                        (false, _) => {
                            return fail(
                                format!("{at}.function.arguments"),
                                "must be a string of JSON",
                            )
                        }
                    }
                    match c["id"].as_str() {
                        Some(id) => calls.call(id),
                        None if ollama => {}
                        None => return fail(format!("{at}.id"), "is missing"),
                    }
                }
            }
            "tool" => {
                let at_id = format!("{at}.tool_call_id");
                match m["tool_call_id"].as_str() {
                    Some(id) => calls.result(id, &at_id)?,
                    None if ollama => {}
                    None => return fail(at_id, "is missing"),
                }
                string(&m["content"], &format!("{at}.content"))?;
            }
            other => {
                return fail(
                    format!("{at}.role"),
                    format!("{other:?} is not a chat role"),
                )
            }
        }
    }
    calls.end("messages")
}

fn check_chat_content(content: &Value, at: &str, ollama: bool, may_be_null: bool) -> Check {
    let at = format!("{at}.content");
    match content {
        Value::String(_) => Ok(()),
        Value::Null if may_be_null => Ok(()),
        Value::Array(parts) if !ollama => {
            for (k, p) in parts.iter().enumerate() {
                match p["type"].as_str() {
                    Some("text") => string(&p["text"], &format!("{at}[{k}].text")).map(drop)?,
                    Some("image_url") => {
                        string(&p["image_url"]["url"], &format!("{at}[{k}].image_url.url"))
                            .map(drop)?
                    }
                    _ => return fail(format!("{at}[{k}].type"), "must be text or image_url"),
                }
            }
            Ok(())
        }
        _ => fail(at, "must be a string or an array of parts"),
    }
}

fn check_anthropic(body: &Value) -> Check {
    if body.get("max_tokens").and_then(Value::as_u64).is_none() {
        return fail("max_tokens", "is required (a positive integer)");
    }
    match body.get("system") {
        None | Some(Value::String(_)) | Some(Value::Array(_)) => {}
        Some(_) => return fail("system", "must be a string or an array of text blocks"),
    }
    let messages = array(body, "messages")?;
    let mut calls = Calls::new();
    let mut last_role = "";
    for (i, m) in messages.iter().enumerate() {
        let at = format!("messages[{i}]");
        let role = string(&m["role"], &format!("{at}.role"))?;
        if role != "user" && role != "assistant" {
            return fail(format!("{at}.role"), "must be user or assistant");
        }
        if role == last_role {
            return fail(format!("{at}.role"), "roles must alternate");
        }
        last_role = role;
        let blocks = match &m["content"] {
            Value::String(_) => continue,
            Value::Array(blocks) if !blocks.is_empty() => blocks,
            _ => {
                return fail(
                    format!("{at}.content"),
                    "must be a string or a non-empty array",
                )
            }
        };
        for (j, b) in blocks.iter().enumerate() {
            let at = format!("{at}.content[{j}]");
            match (b["type"].as_str(), role) {
                (Some("text"), _) => string(&b["text"], &format!("{at}.text")).map(drop)?,
                (Some("image"), "user") => {
                    string(&b["source"]["type"], &format!("{at}.source.type")).map(drop)?
                }
                (Some("thinking"), "assistant") => {
                    string(&b["signature"], &format!("{at}.signature")).map(drop)?
                }
                (Some("redacted_thinking"), "assistant") => {
                    string(&b["data"], &format!("{at}.data")).map(drop)?
                }
                (Some("tool_use"), "assistant") => {
                    string(&b["name"], &format!("{at}.name"))?;
                    if !b["input"].is_object() {
                        return fail(format!("{at}.input"), "must be an object");
                    }
                    calls.call(string(&b["id"], &format!("{at}.id"))?);
                }
                (Some("tool_result"), "user") => calls.result(
                    string(&b["tool_use_id"], &format!("{at}.tool_use_id"))?,
                    &at,
                )?,
                (kind, role) => {
                    return fail(
                        format!("{at}.type"),
                        format!("{kind:?} is not allowed in a {role} message"),
                    )
                }
            }
        }
    }
    calls.end("messages")
}

fn check_gemini(body: &Value) -> Check {
    let contents = array(body, "contents")?;
    let mut pending = 0usize;
    for (i, c) in contents.iter().enumerate() {
        let at = format!("contents[{i}]");
        let role = string(&c["role"], &format!("{at}.role"))?;
        if role != "user" && role != "model" {
            return fail(format!("{at}.role"), "must be user or model");
        }
        let parts = array(c, "parts").map_err(|(k, m)| (format!("{at}.{k}"), m))?;
        for (j, p) in parts.iter().enumerate() {
            let at = format!("{at}.parts[{j}]");
            let kinds = [
                "text",
                "inlineData",
                "fileData",
                "functionCall",
                "functionResponse",
            ];
            let found: Vec<&str> = kinds
                .iter()
                .copied()
                .filter(|k| p.get(*k).is_some())
                .collect();
            if found.len() != 1 {
                return fail(at, "must hold exactly one of text, inlineData, fileData, functionCall, functionResponse");
            }
            match found[0] {
                "functionCall" if role == "model" => {
                    string(
                        &p["functionCall"]["name"],
                        &format!("{at}.functionCall.name"),
                    )?;
                    pending += 1;
                }
                "functionResponse" if role == "user" => {
                    string(
                        &p["functionResponse"]["name"],
                        &format!("{at}.functionResponse.name"),
                    )?;
                    if !p["functionResponse"]["response"].is_object() {
                        return fail(
                            format!("{at}.functionResponse.response"),
                            "must be an object",
                        );
                    }
                    pending = pending.saturating_sub(1);
                }
                "functionCall" | "functionResponse" => {
                    return fail(at, format!("{} is not allowed in a {role} turn", found[0]))
                }
                _ => {}
            }
        }
    }
    match pending {
        0 => Ok(()),
        n => fail(
            "contents",
            format!("{n} function calls have no functionResponse"),
        ),
    }
}

fn check_responses(body: &Value) -> Check {
    let input = match body.get("input") {
        Some(Value::String(_)) => return Ok(()),
        _ => array(body, "input")?,
    };
    let mut calls = Calls::new();
    for (i, item) in input.iter().enumerate() {
        let at = format!("input[{i}]");
        match item["type"].as_str() {
            Some("message") | None => {
                let role = string(&item["role"], &format!("{at}.role"))?;
                if !["user", "assistant", "system", "developer"].contains(&role) {
                    return fail(format!("{at}.role"), "is not a message role");
                }
            }
            Some("function_call") => {
                string(&item["name"], &format!("{at}.name"))?;
                string(&item["arguments"], &format!("{at}.arguments"))?;
                calls.call(string(&item["call_id"], &format!("{at}.call_id"))?);
            }
            Some("function_call_output") => {
                string(&item["output"], &format!("{at}.output"))?;
                calls.result(string(&item["call_id"], &format!("{at}.call_id"))?, &at)?;
            }
            Some("reasoning") => {}
            Some(other) => {
                return fail(format!("{at}.type"), format!("unknown item type {other:?}"))
            }
        }
    }
    calls.end("input")
}
