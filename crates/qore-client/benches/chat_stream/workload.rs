//! The streamed answers the bench replays: realistic Chat Completions chunks and Anthropic
//! Messages events, as SSE.

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

/// The wire protocol a workload is written in.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Wire {
    /// OpenAI Chat Completions chunks (`data:` lines only).
    #[default]
    OpenAiChat,
    /// Anthropic Messages events (`event:` + `data:` lines, a `ping` after the block start).
    Anthropic,
}

impl Wire {
    pub fn name(self) -> &'static str {
        match self {
            Wire::OpenAiChat => "openai",
            Wire::Anthropic => "anthropic",
        }
    }

    /// qore's protocol name.
    pub fn protocol(self) -> &'static str {
        match self {
            Wire::OpenAiChat => "openai-chat",
            Wire::Anthropic => "anthropic",
        }
    }

    /// The base URL under the replay server's address.
    pub fn base_path(self) -> &'static str {
        match self {
            Wire::OpenAiChat => "/v1",
            Wire::Anthropic => "",
        }
    }

    pub fn model(self) -> &'static str {
        match self {
            Wire::OpenAiChat => "gpt-4o",
            Wire::Anthropic => "claude-sonnet-4-5",
        }
    }

    /// The request body both clients send.
    pub fn request(self) -> &'static [u8] {
        match self {
            Wire::OpenAiChat => REQUEST,
            Wire::Anthropic => ANTHROPIC_REQUEST,
        }
    }

    /// The call id the workload's tool call carries.
    pub fn tool_id(self) -> &'static str {
        match self {
            Wire::OpenAiChat => TOOL_ID,
            Wire::Anthropic => ANTHROPIC_TOOL_ID,
        }
    }
}

pub struct Workload {
    pub wire: Wire,
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
/// A real Anthropic tool-use id is `toolu_` and 24 characters.
pub const ANTHROPIC_TOOL_ID: &str = "toolu_01A09q90qw90lq917835lq9";

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
        .chain(std::iter::repeat_n("ab", n - 2))
        .chain(std::iter::once(r#""}"#))
}

pub fn build(wire: Wire, kind: Kind, n: usize) -> Workload {
    match wire {
        Wire::OpenAiChat => build_chat(kind, n),
        Wire::Anthropic => build_anthropic(kind, n),
    }
}

fn build_chat(kind: Kind, n: usize) -> Workload {
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
        wire: Wire::OpenAiChat,
        kind,
        n,
        body: Bytes::from(body),
        expected,
    }
}

fn event(body: &mut String, name: &str, data: &str) {
    body.push_str("event: ");
    body.push_str(name);
    body.push_str("\ndata: ");
    body.push_str(data);
    body.push_str("\n\n");
}

/// The same answers as Anthropic sends them: `message_start`, one content block (text, or a
/// `tool_use` whose input arrives as `input_json_delta` fragments), a `ping`, the deltas,
/// `content_block_stop`, `message_delta` with the stop reason and usage, `message_stop`.
fn build_anthropic(kind: Kind, n: usize) -> Workload {
    let mut body = String::with_capacity(n * 120 + 1024);
    let mut expected = String::new();
    event(
        &mut body,
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}"#,
    );
    let (block, stop) = match kind {
        Kind::Text => (r#"{"type":"text","text":""}"#.to_owned(), "end_turn"),
        Kind::Tool => (
            format!(
                r#"{{"type":"tool_use","id":"{ANTHROPIC_TOOL_ID}","name":"{TOOL_NAME}","input":{{}}}}"#
            ),
            "tool_use",
        ),
    };
    event(
        &mut body,
        "content_block_start",
        &format!(r#"{{"type":"content_block_start","index":0,"content_block":{block}}}"#),
    );
    event(&mut body, "ping", r#"{"type": "ping"}"#);
    let pieces: Box<dyn Iterator<Item = &'static str>> = match kind {
        Kind::Text => Box::new(std::iter::repeat_n(TEXT_PIECE, n)),
        Kind::Tool => Box::new(fragments(n)),
    };
    for piece in pieces {
        let encoded = serde_json::to_string(piece).unwrap();
        let delta = match kind {
            Kind::Text => format!(r#"{{"type":"text_delta","text":{encoded}}}"#),
            Kind::Tool => format!(r#"{{"type":"input_json_delta","partial_json":{encoded}}}"#),
        };
        event(
            &mut body,
            "content_block_delta",
            &format!(r#"{{"type":"content_block_delta","index":0,"delta":{delta}}}"#),
        );
        expected.push_str(piece);
    }
    event(
        &mut body,
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#,
    );
    event(
        &mut body,
        "message_delta",
        &format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":"{stop}","stop_sequence":null}},"usage":{{"output_tokens":{n}}}}}"#
        ),
    );
    event(&mut body, "message_stop", r#"{"type":"message_stop"}"#);
    Workload {
        wire: Wire::Anthropic,
        kind,
        n,
        body: Bytes::from(body),
        expected,
    }
}

/// The request body both clients send (Chat Completions).
pub const REQUEST: &[u8] = br#"{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Write it."}]}"#;

/// The request body both clients send (Anthropic Messages).
pub const ANTHROPIC_REQUEST: &[u8] = br#"{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Write it."}]}"#;
