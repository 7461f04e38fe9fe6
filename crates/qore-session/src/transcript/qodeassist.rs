//! QodeAssist chat history files (Qt Creator's QodeAssist plugin), read as a flat
//! conversation.
//!
//! Version 0.4: `{"version": "0.4", "messages": [{"role": "user"|"assistant"|"system", "id",
//! "blocks": [...], "usage": {"promptTokens", "completionTokens", "cachedPromptTokens",
//! "reasoningTokens"}}]}`. Blocks: `text` (`text`), `thinking` (`thinking` or `text`,
//! `signature`, `redacted`), `tool_call` (`id`, `name`, `arguments`, `result`, `status`…:
//! the call and its result in one block); `attachment`, `image`, `file_edit`, `permission`
//! and `plan` have no qore form and are dropped, as are unknown blocks (all counted).
//!
//! Legacy 0.1 and 0.2: rows `{"role": 0..5, "id", "content", …}` with integer roles (0
//! system, 1 user, 2 assistant, 3 tool: `toolName`, `toolArguments`, `toolResult`; 4 file
//! edit, dropped; 5 thinking: `content`, `signature`, `isRedacted`). Consecutive tool rows
//! become one assistant message of calls and one message of their results.
//!
//! Promises: a file whose structure is wrong is refused with the place (`messages[3].blocks[1]`)
//! and what is wrong; version 0.3 (which QodeAssist itself refuses) and unknown versions are
//! refused; a call without a result gets an error result saying so, so the conversation stays
//! well-formed. Messages carry no times: the session and its turns are timed by the file
//! name's `_yyyy-MM-dd_HH-mm` (read as UTC: QodeAssist writes local time without its zone),
//! else at the import.

use std::time::SystemTime;

use qore_core::{ContentBlock, Message, Role, ToolResultPart, Usage};
use serde_json::{Map, Value};

use super::turns::{into_turns, FlatMessage};
use super::Parsed;
use qore_store::{NewSession, SessionImport};

type Object = Map<String, Value>;

/// Read a QodeAssist history (already known to have `version` and `messages`).
pub(super) fn parse(root: &Object, file_name: &str) -> Result<Parsed, String> {
    let version = match root.get("version") {
        Some(Value::String(v)) => v.as_str(),
        other => {
            return Err(format!(
                "\"version\" must be a string, found {}",
                shown(other)
            ))
        }
    };
    let Some(Value::Array(rows)) = root.get("messages") else {
        return Err("\"messages\" must be an array".into());
    };
    let mut dropped = Dropped::default();
    let messages = match version {
        "0.4" => current(rows, &mut dropped)?,
        "0.1" | "0.2" => legacy(rows, &mut dropped)?,
        other => {
            return Err(format!(
                "QodeAssist history version '{other}' is not supported (0.4, 0.2 and 0.1 are)"
            ))
        }
    };
    let mut notes = dropped.notes();
    let saved = saved_at(file_name);
    let turns = into_turns(messages, saved.unwrap_or_else(SystemTime::now), &mut notes);
    let import = SessionImport {
        session: NewSession::default(),
        title: None,
        created_at: saved,
        turns,
    };
    Ok(Parsed {
        source: format!("QodeAssist {version}"),
        import,
        notes,
    })
}

/// When the history was saved, from a file name ending `_yyyy-MM-dd_HH-mm.json`.
fn saved_at(file_name: &str) -> Option<SystemTime> {
    let stem = file_name.strip_suffix(".json")?;
    let at = stem.len().checked_sub(17)?;
    let (date, time) = stem.get(at..)?.strip_prefix('_')?.split_once('_')?;
    let time = time.replace('-', ":");
    humantime::parse_rfc3339_weak(&format!("{date} {time}:00")).ok()
}

/// What was left out, by kind.
#[derive(Default)]
struct Dropped(std::collections::BTreeMap<String, usize>);

impl Dropped {
    fn add(&mut self, kind: &str) {
        *self.0.entry(kind.to_owned()).or_default() += 1;
    }

    fn notes(self) -> Vec<String> {
        (self.0.into_iter())
            .map(|(kind, n)| format!("dropped {n} {kind} block(s): qore has no form for them"))
            .collect()
    }
}

fn current(rows: &[Value], dropped: &mut Dropped) -> Result<Vec<FlatMessage>, String> {
    let mut out = Vec::new();
    for (at, row) in rows.iter().enumerate() {
        let here = format!("messages[{at}]");
        let row = object(row, &here)?;
        let role = match row.get("role").and_then(Value::as_str) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("system") => Role::System,
            _ => {
                return Err(format!(
                    "{here}.role must be \"user\", \"assistant\" or \"system\", found {}",
                    shown(row.get("role"))
                ))
            }
        };
        let Some(Value::Array(blocks)) = row.get("blocks") else {
            return Err(format!("{here}.blocks must be an array"));
        };
        let usage = row.get("usage").map(|u| usage(u, &here)).transpose()?;
        let mut message = Message::new(role, Vec::new());
        let mut results = Vec::new();
        for (b, block) in blocks.iter().enumerate() {
            let here = format!("{here}.blocks[{b}]");
            let block = object(block, &here)?;
            let kind = text_field(block, "type", &here)?;
            if kind != "tool_call" && !results.is_empty() {
                // Text after calls answers their results: the calls' turn ends here.
                flush(&mut out, &mut message, &mut results, role);
            }
            match kind {
                "text" => message
                    .blocks
                    .push(ContentBlock::text(text_field(block, "text", &here)?)),
                "thinking" => message.blocks.push(thinking(block, &here)?),
                "tool_call" => {
                    let (call, result) = tool_call(block, &here)?;
                    message.blocks.push(call);
                    results.push(result);
                }
                other => dropped.add(other),
            }
        }
        flush(&mut out, &mut message, &mut results, role);
        if let Some(last) = out.last_mut() {
            last.usage = usage;
        }
    }
    Ok(out)
}

/// Move the message built so far (and, when calls were made, their results) to `out`.
fn flush(
    out: &mut Vec<FlatMessage>,
    message: &mut Message,
    results: &mut Vec<ContentBlock>,
    role: Role,
) {
    let built = std::mem::replace(message, Message::new(role, Vec::new()));
    if !built.blocks.is_empty() {
        out.push(FlatMessage {
            message: built,
            usage: None,
        });
    }
    if !results.is_empty() {
        out.push(FlatMessage {
            message: Message::new(Role::User, std::mem::take(results)),
            usage: None,
        });
    }
}

fn thinking(block: &Object, here: &str) -> Result<ContentBlock, String> {
    let signature = optional_text(block, "signature", here)?.map(str::to_owned);
    if block.get("redacted").and_then(Value::as_bool) == Some(true) {
        return Ok(ContentBlock::RedactedThinking {
            data: signature.unwrap_or_default(),
        });
    }
    let text = match optional_text(block, "thinking", here)? {
        Some(text) => text,
        None => text_field(block, "text", here)?,
    };
    Ok(ContentBlock::Thinking {
        text: text.to_owned(),
        signature: signature.filter(|s| !s.is_empty()),
    })
}

/// A call and its result from one `tool_call` block (or legacy tool row).
fn tool_call(block: &Object, here: &str) -> Result<(ContentBlock, ContentBlock), String> {
    let id = text_field(block, "id", here)?.to_owned();
    let name = match optional_text(block, "toolName", here)? {
        Some(name) => name,
        None => text_field(block, "name", here)?,
    }
    .to_owned();
    let arguments = block
        .get("arguments")
        .or_else(|| block.get("toolArguments"));
    let (input, raw_input) = match arguments {
        None | Some(Value::Null) => (Value::Object(Map::new()), None),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(value @ Value::Object(_)) => (value, None),
            _ => (Value::Null, Some(text.clone())),
        },
        Some(value @ Value::Object(_)) => (value.clone(), None),
        Some(other) => {
            return Err(format!(
                "{here}.arguments must be an object or a string, found {}",
                shown(Some(other))
            ))
        }
    };
    let result = match block.get("result").or_else(|| block.get("toolResult")) {
        Some(Value::String(text)) => Ok(text.clone()),
        None | Some(Value::Null) => Err("(no result was recorded)".to_owned()),
        Some(other) => Ok(other.to_string()),
    };
    let failed = block.get("status").and_then(Value::as_str) == Some("failed");
    let call = ContentBlock::ToolUse {
        id: id.clone(),
        name,
        input,
        raw_input,
        signature: None,
    };
    let (text, is_error) = match result {
        Ok(text) => (text, failed),
        Err(text) => (text, true),
    };
    let result = ContentBlock::ToolResult {
        tool_use_id: id,
        content: vec![ToolResultPart::Text { text }],
        is_error,
    };
    Ok((call, result))
}

fn legacy(rows: &[Value], dropped: &mut Dropped) -> Result<Vec<FlatMessage>, String> {
    let mut out = Vec::new();
    let (mut calls, mut results) = (Message::new(Role::Assistant, Vec::new()), Vec::new());
    for (at, row) in rows.iter().enumerate() {
        let here = format!("messages[{at}]");
        let row = object(row, &here)?;
        let role = row.get("role").and_then(Value::as_u64);
        if role != Some(3) {
            flush(&mut out, &mut calls, &mut results, Role::Assistant);
        }
        let content = || optional_text(row, "content", &here).map(Option::unwrap_or_default);
        let message = match role {
            Some(0) => Message::system(content()?),
            Some(1) => Message::user(content()?),
            Some(2) if content()?.trim().is_empty() => continue,
            Some(2) => Message::assistant(content()?),
            Some(3) => {
                let (call, result) = tool_call(row, &here)?;
                calls.blocks.push(call);
                results.push(result);
                continue;
            }
            Some(4) => {
                dropped.add("file_edit");
                continue;
            }
            Some(5) => {
                let mut block = row.clone();
                block.insert(
                    "redacted".into(),
                    row.get("isRedacted").cloned().unwrap_or(Value::Null),
                );
                let text = content()?;
                let text = text.split("\n[Signature:").next().unwrap_or_default();
                block.insert("thinking".into(), Value::from(text));
                Message::new(Role::Assistant, vec![thinking(&block, &here)?])
            }
            _ => {
                return Err(format!(
                    "{here}.role must be a number from 0 to 5, found {}",
                    shown(row.get("role"))
                ))
            }
        };
        let usage = row.get("usage").map(|u| usage(u, &here)).transpose()?;
        out.push(FlatMessage { message, usage });
    }
    flush(&mut out, &mut calls, &mut results, Role::Assistant);
    Ok(out)
}

fn usage(value: &Value, here: &str) -> Result<Usage, String> {
    let usage = object(value, &format!("{here}.usage"))?;
    let count = |key: &str| match usage.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("{here}.usage.{key} must be a whole number, found {v}")),
    };
    Ok(Usage {
        input_tokens: count("promptTokens")?,
        output_tokens: count("completionTokens")?,
        cached_input_tokens: count("cachedPromptTokens")?,
        reasoning_tokens: count("reasoningTokens")?,
        ..Usage::default()
    })
}

fn object<'a>(value: &'a Value, here: &str) -> Result<&'a Object, String> {
    value
        .as_object()
        .ok_or_else(|| format!("{here} must be an object, found {}", shown(Some(value))))
}

fn text_field<'a>(object: &'a Object, key: &str, here: &str) -> Result<&'a str, String> {
    optional_text(object, key, here)?.ok_or_else(|| format!("{here} has no \"{key}\""))
}

fn optional_text<'a>(object: &'a Object, key: &str, here: &str) -> Result<Option<&'a str>, String> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(format!(
            "{here}.{key} must be a string, found {}",
            shown(Some(other))
        )),
    }
}

/// A JSON value for an error message: its kind, and the value itself when it is short.
fn shown(value: Option<&Value>) -> String {
    match value {
        None => "nothing".to_owned(),
        Some(v) => {
            let text = v.to_string();
            if text.chars().count() <= 40 {
                text
            } else {
                format!("a long {}", kind(v))
            }
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
#[path = "qodeassist_tests.rs"]
mod tests;
