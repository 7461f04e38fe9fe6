//! The streamed answers the bench replays: realistic Chat Completions chunk JSON as SSE.

use bytes::Bytes;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// N text deltas of `"word "`.
    Text,
    /// One tool call whose arguments arrive in N fragments.
    Tool,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Tool => "tool",
        }
    }
}

pub struct Workload {
    pub kind: Kind,
    /// Number of deltas (text pieces or argument fragments).
    pub n: usize,
    /// The SSE body, `data: [DONE]` included.
    pub body: Bytes,
    /// The folded text, or the concatenated argument text.
    pub expected: String,
}

const HEAD: &str =
    r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","#;
pub const TEXT_PIECE: &str = "word ";
pub const TOOL_NAME: &str = "write_file";
/// A real OpenAI call id is `call_` and 24 characters (longer than any inline string).
pub const TOOL_ID: &str = "call_Xk3pQm9RtV2wLs8NbY4cHd7F";

fn frame(body: &mut String, tail: &str) {
    body.push_str("data: ");
    body.push_str(HEAD);
    body.push_str(tail);
    body.push_str("\n\n");
}

/// The fragments of the arguments `{"data":"abab...ab"}`: `{"data":"`, N-2 times `ab`, `"}`.
fn fragments(n: usize) -> impl Iterator<Item = &'static str> {
    assert!(n >= 3, "a tool workload needs at least 3 fragments");
    std::iter::once(r#"{"data":""#)
        .chain(std::iter::repeat("ab").take(n - 2))
        .chain(std::iter::once(r#""}"#))
}

pub fn build(kind: Kind, n: usize) -> Workload {
    let mut body = String::with_capacity(n * 190 + 1024);
    let mut expected = String::new();
    match kind {
        Kind::Text => {
            frame(
                &mut body,
                r#""choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
            );
            for _ in 0..n {
                frame(
                    &mut body,
                    r#""choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}"#,
                );
                expected.push_str(TEXT_PIECE);
            }
            frame(
                &mut body,
                r#""choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            );
        }
        Kind::Tool => {
            frame(
                &mut body,
                &format!(
                    r#""choices":[{{"index":0,"delta":{{"role":"assistant","content":null,"tool_calls":[{{"index":0,"id":"{TOOL_ID}","type":"function","function":{{"name":"{TOOL_NAME}","arguments":""}}}}]}},"finish_reason":null}}]}}"#
                ),
            );
            for fragment in fragments(n) {
                // The arguments are a JSON string inside the chunk's JSON.
                let encoded = serde_json::to_string(fragment).unwrap();
                frame(
                    &mut body,
                    &format!(
                        r#""choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"function":{{"arguments":{encoded}}}}}]}},"finish_reason":null}}]}}"#
                    ),
                );
                expected.push_str(fragment);
            }
            frame(
                &mut body,
                r#""choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            );
        }
    }
    frame(
        &mut body,
        &format!(
            r#""choices":[],"usage":{{"prompt_tokens":12,"completion_tokens":{n},"total_tokens":{}}}}}"#,
            n + 12
        ),
    );
    body.push_str("data: [DONE]\n\n");
    Workload {
        kind,
        n,
        body: Bytes::from(body),
        expected,
    }
}

/// The request body both clients send.
pub const REQUEST: &[u8] = br#"{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Write it."}]}"#;
