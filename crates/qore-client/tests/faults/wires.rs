//! One short streamed answer per wire, written from each provider's documented stream
//! shape (and the recordings in `../shared/fixtures`), with the error envelope each one
//! sends; the fault suite breaks these bodies in every way it knows.

/// The text every answer carries: ASCII, a two-byte and a four-byte UTF-8 character.
pub const TEXT: &str = "Hello, wörld 😀";

/// A wire as the fault suite needs it.
pub struct Wire {
    pub protocol: &'static str,
    pub content_type: &'static str,
    /// The whole streamed answer, saying [`TEXT`].
    pub body: String,
    /// `true` for NDJSON (a frame is a line), `false` for SSE (a frame ends at a blank line).
    pub ndjson: bool,
    /// The provider's JSON error envelope carrying `message` under `kind`.
    pub error: fn(u16, &str, &str) -> String,
}

impl Wire {
    /// Where the first frame of `body` ends (after its blank line, or its line end for
    /// NDJSON): a body cut before this delivered nothing.
    pub fn first_frame_end(&self) -> usize {
        let end = if self.ndjson { "\n" } else { "\n\n" };
        let crlf = self.body.find("\r\n\r\n").map(|at| at + 4);
        let lf = self.body.find(end).map(|at| at + end.len());
        match (crlf, lf) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).expect("a frame end"),
        }
    }

    /// Where the first data line ends (after its line end): a body cut before this holds
    /// no whole frame, not even one a lenient end of body would dispatch, so it delivered
    /// nothing.
    pub fn first_data_line_end(&self) -> usize {
        let at = if self.ndjson {
            0
        } else {
            self.body.find("data:").expect("data")
        };
        at + self.body[at..].find('\n').expect("line end") + 1
    }

    /// Where the line holding `needle` ends (after its line end).
    pub fn end_of_line_with(&self, needle: &str) -> usize {
        let at = self.body.find(needle).expect("needle in body");
        at + self.body[at..].find('\n').expect("line end") + 1
    }

    /// A frame reporting "upstream died" inside a 200 stream, in the wire's own shape.
    pub fn stream_error(&self) -> &'static str {
        match self.protocol {
            "openai-chat" => {
                "data: {\"error\":{\"message\":\"upstream died\",\"type\":\"server_error\"}}\n\n"
            }
            "openai-responses" => {
                "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"upstream died\"}\n\n"
            }
            "anthropic" => {
                "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"upstream died\"}}\n\n"
            }
            "gemini" => {
                "data: {\"error\":{\"code\":500,\"message\":\"upstream died\",\"status\":\"INTERNAL\"}}\r\n\r\n"
            }
            _ => "{\"error\":\"upstream died\"}\n",
        }
    }

    /// A complete frame holding `data` (not valid for this wire).
    pub fn frame(&self, data: &str) -> String {
        if self.ndjson {
            format!("{data}\n")
        } else {
            format!("data: {data}\n\n")
        }
    }
}

fn openai_error(_status: u16, kind: &str, message: &str) -> String {
    serde_json::json!({"error": {"message": message, "type": kind, "code": kind}}).to_string()
}

fn anthropic_error(_status: u16, kind: &str, message: &str) -> String {
    serde_json::json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}

fn gemini_error(status: u16, kind: &str, message: &str) -> String {
    serde_json::json!({"error": {"code": status, "message": message, "status": kind}}).to_string()
}

fn ollama_error(_status: u16, _kind: &str, message: &str) -> String {
    serde_json::json!({ "error": message }).to_string()
}

fn sse(events: &[(Option<&str>, serde_json::Value)], tail: &str) -> String {
    let mut body = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    body + tail
}

pub fn all() -> Vec<Wire> {
    use serde_json::json;
    let chat = sse(
        &[
            (
                None,
                json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
            ),
            (
                None,
                json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": TEXT}}]}),
            ),
            (
                None,
                json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            ),
        ],
        "data: [DONE]\n\n",
    );
    let responses = sse(
        &[
            (
                Some("response.created"),
                json!({"type": "response.created", "response": {"id": "r1", "model": "m", "status": "in_progress"}}),
            ),
            (
                Some("response.output_item.added"),
                json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg1", "role": "assistant", "content": []}}),
            ),
            (
                Some("response.output_text.delta"),
                json!({"type": "response.output_text.delta", "item_id": "msg1", "output_index": 0, "content_index": 0, "delta": TEXT}),
            ),
            (
                Some("response.output_item.done"),
                json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "id": "msg1", "role": "assistant", "content": [{"type": "output_text", "text": TEXT}]}}),
            ),
            (
                Some("response.completed"),
                json!({"type": "response.completed", "response": {"id": "r1", "model": "m", "status": "completed", "usage": {"input_tokens": 3, "output_tokens": 4}}}),
            ),
        ],
        "",
    );
    let anthropic = sse(
        &[
            (
                Some("message_start"),
                json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "usage": {"input_tokens": 3, "output_tokens": 1}}}),
            ),
            (
                Some("content_block_start"),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            (
                Some("content_block_delta"),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": TEXT}}),
            ),
            (
                Some("content_block_stop"),
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                Some("message_delta"),
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}}),
            ),
            (Some("message_stop"), json!({"type": "message_stop"})),
        ],
        "",
    );
    let gemini = [
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello, "}]}, "index": 0}], "modelVersion": "m"}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "wörld 😀"}]}, "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 4}, "modelVersion": "m"}),
    ]
    .iter()
    .map(|data| format!("data: {data}\r\n\r\n"))
    .collect();
    let ollama = [
        json!({"model": "m", "created_at": "2025-01-01T00:00:00Z", "message": {"role": "assistant", "content": TEXT}, "done": false}),
        json!({"model": "m", "created_at": "2025-01-01T00:00:00Z", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 3, "eval_count": 4}),
    ]
    .iter()
    .map(|line| format!("{line}\n"))
    .collect();
    let sse_type = "text/event-stream; charset=utf-8";
    vec![
        Wire {
            protocol: "openai-chat",
            content_type: sse_type,
            body: chat,
            ndjson: false,
            error: openai_error,
        },
        Wire {
            protocol: "openai-responses",
            content_type: sse_type,
            body: responses,
            ndjson: false,
            error: openai_error,
        },
        Wire {
            protocol: "anthropic",
            content_type: sse_type,
            body: anthropic,
            ndjson: false,
            error: anthropic_error,
        },
        Wire {
            protocol: "gemini",
            content_type: sse_type,
            body: gemini,
            ndjson: false,
            error: gemini_error,
        },
        Wire {
            protocol: "ollama",
            content_type: "application/x-ndjson",
            body: ollama,
            ndjson: true,
            error: ollama_error,
        },
    ]
}
