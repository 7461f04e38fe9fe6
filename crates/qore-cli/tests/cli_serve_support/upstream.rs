//! Upstream answers the tests script (Chat Completions and Anthropic SSE), and reading the
//! text back out of what `qore serve` answers in each dialect (whole or streamed).

use std::time::Duration;

use qore_testkit::Reply;
use serde_json::{json, Value};

fn chunk(delta: Value, finish: Value) -> String {
    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {chunk}\n\n")
}

/// The words `w0 w1 …` of a drip of `n` frames.
pub fn drip_text(n: usize) -> String {
    (0..n).map(|i| format!("w{i} ")).collect()
}

/// A Chat Completions stream of `n` one-word frames, `pace` apart, then a stop.
pub fn drip(n: usize, pace: Duration) -> Reply {
    let mut body = String::new();
    for i in 0..n {
        body += &chunk(json!({"content": format!("w{i} ")}), Value::Null);
    }
    body += &chunk(json!({}), json!("stop"));
    body += "data: [DONE]\n\n";
    Reply::sse(body).with_pace(pace)
}

/// A Chat Completions answer of `text` that reports `input`/`output` tokens.
pub fn answer_with_usage(text: &str, input: u64, output: u64) -> Reply {
    let usage = json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
        "choices": [], "usage": {"prompt_tokens": input, "completion_tokens": output,
        "total_tokens": input + output}});
    let body = chunk(json!({"role": "assistant", "content": text}), Value::Null)
        + &chunk(json!({}), json!("stop"))
        + &format!("data: {usage}\n\n")
        + "data: [DONE]\n\n";
    Reply::sse(body)
}

/// A Chat Completions stream that says `text`, then fails in-stream (a server error frame).
pub fn fails_after(text: &str) -> Reply {
    let error =
        json!({"error": {"message": "upstream broke", "type": "server_error", "code": 500}});
    let body = chunk(json!({"role": "assistant", "content": text}), Value::Null)
        + &format!("data: {error}\n\n");
    Reply::sse(body)
}

/// An Anthropic Messages stream saying `text`, as api.anthropic.com writes one.
pub fn anthropic_answer(text: &str) -> Reply {
    let frames = [
        json!({"type": "message_start", "message": {"id": "msg_01", "type": "message",
            "role": "assistant", "model": "claude-x", "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 12, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn",
            "stop_sequence": null}, "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ];
    let body: String = (frames.iter())
        .map(|f| format!("event: {}\ndata: {f}\n\n", f["type"].as_str().unwrap()))
        .collect();
    Reply::sse(body)
}

/// The `data:` payloads of an SSE body that are JSON.
pub fn sse_data(body: &str) -> Vec<Value> {
    (body.lines())
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// The answer's text in the dialect of `path`, whole (JSON) or streamed (SSE).
pub fn text_of(path: &str, body: &str) -> String {
    if let Ok(whole) = serde_json::from_str::<Value>(body) {
        return match path {
            "/v1/chat/completions" => whole["choices"][0]["message"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            "/v1/messages" => (whole["content"].as_array().into_iter().flatten())
                .filter_map(|b| b["text"].as_str())
                .collect(),
            _ => (whole["output"].as_array().into_iter().flatten())
                .flat_map(|o| o["content"].as_array().cloned().unwrap_or_default())
                .filter_map(|c| c["text"].as_str().map(str::to_owned))
                .collect(),
        };
    }
    (sse_data(body).iter())
        .filter_map(|d| match path {
            "/v1/chat/completions" => d["choices"][0]["delta"]["content"].as_str(),
            "/v1/messages" => d["delta"]["text"].as_str(),
            _ => (d["type"] == "response.output_text.delta")
                .then(|| d["delta"].as_str())
                .flatten(),
        })
        .collect()
}

/// Whether a streamed answer in the dialect of `path` ended as a finished turn.
pub fn finished(path: &str, body: &str) -> bool {
    match path {
        "/v1/chat/completions" => body.trim_end().ends_with("data: [DONE]"),
        "/v1/messages" => body.contains("event: message_stop"),
        _ => body.contains("response.completed"),
    }
}
