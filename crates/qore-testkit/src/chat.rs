//! Hand-made Chat Completions answers for tests that need a plain answer or a tool call from
//! a loopback server, not a recorded one.
//!
//! Contract: each function returns a `200 text/event-stream` [`Reply`] in the wire's shape
//! (`chat.completion.chunk` frames, a finish reason, `data: [DONE]`), one chunk per frame.

use serde_json::{json, Value};

use crate::Reply;

fn chunk(delta: Value, finish: Value) -> String {
    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {chunk}\n\n")
}

/// A streamed answer of `text` that finishes with `stop`.
pub fn chat_answer(text: &str) -> Reply {
    let delta = json!({"role": "assistant", "content": text});
    Reply::sse(chunk(delta, Value::Null) + &chunk(json!({}), json!("stop")) + "data: [DONE]\n\n")
}

/// A streamed answer that calls `name` with `arguments` (JSON text) under call id `id`.
pub fn chat_tool_call(id: &str, name: &str, arguments: &str) -> Reply {
    let delta = json!({"role": "assistant", "tool_calls": [{"index": 0, "id": id,
        "type": "function", "function": {"name": name, "arguments": arguments}}]});
    let end = chunk(json!({}), json!("tool_calls"));
    Reply::sse(chunk(delta, Value::Null) + &end + "data: [DONE]\n\n")
}

/// The (role, content) of each message of a recorded Chat Completions request; content
/// that is not a string (parts) is its JSON text. Empty when the body is not such a request.
pub fn sent_messages(request: &crate::RecordedRequest) -> Vec<(String, String)> {
    let body = request.json().unwrap_or_default();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    (messages.iter())
        .map(|m| {
            let content = match &m["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (m["role"].as_str().unwrap_or_default().to_owned(), content)
        })
        .collect()
}

/// `(role, content)` pairs as owned strings, to compare with [`sent_messages`].
pub fn role_pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    (list.iter())
        .map(|(role, content)| (role.to_string(), content.to_string()))
        .collect()
}
