//! Hand-written Chat Completions streams: a model turn with text and tool calls, cut into
//! small irregular pieces on the wire.

use serde_json::{json, Value};

use qore_testkit::Reply;

use super::{content_text, IRREGULAR};

/// The model id the streams name.
pub const MODEL: &str = "m";

/// One streamed Chat Completions chunk.
pub fn chunk(delta: Value, finish: Value) -> String {
    let data = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {data}\n\n")
}

/// A streamed turn: optional text, then tool calls `(id, name, arguments)`, cut into small
/// irregular pieces on the wire.
pub fn turn(text: &str, calls: &[(&str, &str, Value)]) -> Reply {
    let mut body = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    if !text.is_empty() {
        body += &chunk(json!({"content": text}), Value::Null);
    }
    for (index, (id, name, arguments)) in calls.iter().enumerate() {
        body += &chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        );
        let arguments = arguments.to_string();
        let (a, b) = arguments.split_at(arguments.len() / 2);
        for piece in [a, b] {
            body += &chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                Value::Null,
            );
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    body += &chunk(json!({}), json!(finish));
    body += &format!(
        "data: {}\n\n",
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
               "model": MODEL, "choices": [],
               "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    );
    body += "data: [DONE]\n\n";
    Reply::sse(body).with_slicing(IRREGULAR)
}

pub fn answer(text: &str) -> Reply {
    turn(text, &[])
}

/// The tool results a Chat Completions request carries: `(tool_call_id, content)`.
pub fn tool_results(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().expect("tool_call_id").to_owned(),
                content_text(&m["content"]),
            )
        })
        .collect()
}

/// The names of the tools a request offers.
pub fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().expect("name").to_owned())
        .collect()
}
