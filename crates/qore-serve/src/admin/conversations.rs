//! `/admin/v1/conversations`: the conversations the server stored (named sessions of
//! `x-qore-session`, the Responses API's stored responses: both are sessions of the store),
//! listed in pages and one in full with its tool calls.
//!
//! Promises: a page is at most `limit` conversations (default 50, 1–500), newest first (by
//! creation), after the cursor `after` (the last id of the previous page); `next` is the
//! cursor of the next page or null; `search` keeps those whose title, name or id contains it
//! (case-insensitive for ASCII letters); the store filters and pages
//! ([`qore_store::Store::session_page`]). `messages` in a listing is the count of stored
//! messages. One conversation in full (`/conversations/{id}`: an id, a name, or a unique id
//! prefix) holds its messages in order, each `{"role", "text", "tool_calls", "tool_call_id",
//! "is_error"}`: a tool result is a message of role `tool` of its own (one per result), so a
//! call and its result read as in Chat Completions; 404 when there is none. Stored text is
//! given as it is (JSON strings): the page shows it as text.

use axum::extract::Path;
use qore_core::{ContentBlock, Message, Role, ToolResultPart};
use qore_store::{SessionInfo, SessionQuery};
use serde_json::{json, Value};

use super::call::Admin;
use super::http::{ok, Answer};

fn header(info: &SessionInfo) -> Value {
    json!({
        "id": info.id, "name": info.name, "title": info.title, "agent": info.agent,
        "model": info.model, "created_at_ms": info.created_at,
        "updated_at_ms": info.updated_at,
    })
}

pub async fn list(call: Admin) -> Answer {
    let params = call.params(&["search", "after", "limit"])?;
    let limit = params.number("limit", 1..=500)?.unwrap_or(50) as u32;
    let query = SessionQuery {
        search: params.text("search").filter(|s| !s.is_empty()),
        before: params.text("after").filter(|s| !s.is_empty()),
        // One more than the page: whether there is a next one.
        limit: limit + 1,
    };
    let mut found = call.store().session_page(&query).await?;
    let more = found.len() > limit as usize;
    found.truncate(limit as usize);
    let next = more.then(|| found.last().map(|s| s.id.clone())).flatten();
    let shown: Vec<Value> = (found.iter())
        .map(|info| {
            let mut row = header(info);
            row["messages"] = json!(info.message_count);
            row
        })
        .collect();
    ok(json!({"conversations": shown, "next": next}))
}

pub async fn one(call: Admin, Path(id): Path<String>) -> Answer {
    let info = call.store().session(&id).await?;
    let history = call.store().history(&info.id).await?;
    let mut shown = header(&info);
    let messages: Vec<Value> = history.iter().flat_map(message).collect();
    shown["messages"] = Value::Array(messages);
    ok(shown)
}

/// A stored message as the console shows it: its text and tool calls, and each tool result
/// as a `tool` message of its own.
fn message(message: &Message) -> Vec<Value> {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for block in &message.blocks {
        match block {
            ContentBlock::Text { text: part, .. } => text.push_str(part),
            ContentBlock::ToolUse {
                id,
                name,
                input,
                raw_input,
                ..
            } => {
                let arguments = match raw_input {
                    Some(raw) => raw.clone(),
                    None => input.to_string(),
                };
                calls.push(json!({"id": id, "name": name, "arguments": arguments}));
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let text: String = (content.iter())
                    .filter_map(|part| match part {
                        ToolResultPart::Text { text } => Some(text.as_str()),
                        ToolResultPart::Image(_) => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                results.push(json!({
                    "role": "tool", "text": text, "tool_calls": [],
                    "tool_call_id": tool_use_id, "is_error": is_error,
                }));
            }
            ContentBlock::Image(_)
            | ContentBlock::Thinking { .. }
            | ContentBlock::RedactedThinking { .. } => {}
        }
    }
    let mut shown = Vec::new();
    if !text.is_empty() || !calls.is_empty() || results.is_empty() {
        shown.push(json!({
            "role": role, "text": text, "tool_calls": calls, "tool_call_id": null,
            "is_error": false,
        }));
    }
    shown.extend(results);
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_calls_and_results_read_as_chat_messages() {
        let call = Message {
            role: Role::Assistant,
            blocks: vec![
                ContentBlock::text("looking"),
                ContentBlock::ToolUse {
                    id: "c1".into(),
                    name: "weather".into(),
                    input: json!({"city": "Oslo"}),
                    raw_input: None,
                    signature: None,
                },
            ],
        };
        let result = Message {
            role: Role::User,
            blocks: vec![ContentBlock::ToolResult {
                tool_use_id: "c1".into(),
                content: vec![ToolResultPart::Text {
                    text: "<b>rain</b>".into(),
                }],
                is_error: true,
            }],
        };
        // (message, what the console gets)
        let cases = [
            (
                call,
                vec![
                    json!({"role": "assistant", "text": "looking", "tool_calls": [
                    {"id": "c1", "name": "weather", "arguments": "{\"city\":\"Oslo\"}"}],
                    "tool_call_id": null, "is_error": false}),
                ],
            ),
            (
                result,
                vec![
                    json!({"role": "tool", "text": "<b>rain</b>", "tool_calls": [],
                    "tool_call_id": "c1", "is_error": true}),
                ],
            ),
        ];
        for (given, want) in cases {
            assert_eq!(message(&given), want, "{given:?}");
        }
    }
}
