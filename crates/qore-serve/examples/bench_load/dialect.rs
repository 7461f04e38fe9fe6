//! The three inbound dialects `bench_load` speaks: where a request goes, what its body is,
//! and how an answer is checked.
//!
//! - `chat`: `POST {base}/chat/completions`; a stream's content deltas are
//!   `choices[0].delta.content` events and it ends with `data: [DONE]`; a short answer's text
//!   is `choices[0].message.content`.
//! - `responses`: `POST {base}/responses` with `store: false` (a stored response adds a
//!   commit per request: the relay is what is compared); deltas are
//!   `response.output_text.delta` events and the stream ends with `response.completed`; a
//!   short answer's text is the `output_text` parts of `output`.
//! - `messages`: `POST {base}/messages` (with `anthropic-version`); deltas are
//!   `content_block_delta` events holding a `text_delta`, the stream ends with `message_stop`;
//!   a short answer's text is its `text` content blocks.
//!
//! An in-stream error of any dialect (`error`, `response.failed`) fails the request.

use serde_json::{json, Value};

/// An inbound wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Chat,
    Responses,
    Messages,
}

impl std::str::FromStr for Dialect {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "chat" => Ok(Dialect::Chat),
            "responses" => Ok(Dialect::Responses),
            "messages" => Ok(Dialect::Messages),
            _ => Err(format!("--dialect chat|responses|messages, not {s}")),
        }
    }
}

impl Dialect {
    pub fn label(self) -> &'static str {
        match self {
            Dialect::Chat => "chat",
            Dialect::Responses => "responses",
            Dialect::Messages => "messages",
        }
    }

    /// The request's path under the base URL (which ends in `/v1`).
    pub fn path(self) -> &'static str {
        match self {
            Dialect::Chat => "/chat/completions",
            Dialect::Responses => "/responses",
            Dialect::Messages => "/messages",
        }
    }

    /// Headers the dialect needs besides `content-type`.
    pub fn headers(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Dialect::Messages => &[("anthropic-version", "2023-06-01")],
            _ => &[],
        }
    }

    /// The one request body every worker sends.
    pub fn body(self, model: &str, stream: bool) -> Value {
        let ask = "Say something.";
        match self {
            Dialect::Chat => json!({"model": model, "stream": stream, "max_tokens": 64,
                "messages": [{"role": "user", "content": ask}]}),
            // Not stored: the relay's cost, comparable with the other dialects (a stored
            // response adds a commit to the store per request).
            Dialect::Responses => json!({"model": model, "stream": stream, "store": false,
                "max_output_tokens": 64, "input": ask}),
            Dialect::Messages => json!({"model": model, "stream": stream, "max_tokens": 64,
                "messages": [{"role": "user", "content": ask}]}),
        }
    }

    /// What one SSE `data:` payload says: a content delta, the end, an error, or nothing.
    pub fn event(self, data: &[u8]) -> Result<Event, String> {
        if self == Dialect::Chat && data == b"[DONE]" {
            return Ok(Event::End);
        }
        let v: Value = serde_json::from_slice(data).map_err(|e| format!("event: {e}"))?;
        let kind = v["type"].as_str().unwrap_or("");
        if v.get("error").is_some_and(|e| !e.is_null()) && kind != "response.completed" {
            return Err(format!("in-stream error: {}", cut(&v.to_string())));
        }
        let text = match (self, kind) {
            (Dialect::Chat, _) => v["choices"][0]["delta"]["content"].as_str(),
            (Dialect::Responses, "response.output_text.delta") => v["delta"].as_str(),
            (Dialect::Responses, "response.completed") => return Ok(Event::End),
            (Dialect::Responses, "response.failed" | "error") => {
                return Err(format!("in-stream error: {}", cut(&v.to_string())))
            }
            (Dialect::Messages, "content_block_delta") => v["delta"]["text"].as_str(),
            (Dialect::Messages, "message_stop") => return Ok(Event::End),
            (Dialect::Messages, "error") => {
                return Err(format!("in-stream error: {}", cut(&v.to_string())))
            }
            _ => None,
        };
        Ok(match text {
            Some(t) if !t.is_empty() => Event::Delta,
            _ => Event::Other,
        })
    }

    /// The text of a non-streaming answer (empty when it has none).
    pub fn answer_text(self, v: &Value) -> String {
        match self {
            Dialect::Chat => v["choices"][0]["message"]["content"]
                .as_str()
                .unwrap_or("")
                .to_owned(),
            Dialect::Responses => texts(&v["output"], |item| {
                item["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["type"] == "output_text")
                    .filter_map(|p| p["text"].as_str())
                    .collect()
            }),
            Dialect::Messages => texts(&v["content"], |block| {
                block["text"].as_str().into_iter().collect()
            }),
        }
    }
}

/// What an event meant to the count.
#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    Delta,
    End,
    Other,
}

fn texts<'a>(list: &'a Value, each: impl Fn(&'a Value) -> Vec<&'a str>) -> String {
    list.as_array()
        .into_iter()
        .flatten()
        .flat_map(each)
        .collect::<Vec<_>>()
        .concat()
}

pub fn cut(text: &str) -> String {
    text.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_per_dialect() {
        let cases: &[(Dialect, &str, Result<Event, ()>)] = &[
            (Dialect::Chat, "[DONE]", Ok(Event::End)),
            (
                Dialect::Chat,
                r#"{"choices":[{"delta":{"content":"a"}}]}"#,
                Ok(Event::Delta),
            ),
            (
                Dialect::Chat,
                r#"{"choices":[{"delta":{"content":""}}]}"#,
                Ok(Event::Other),
            ),
            (Dialect::Chat, r#"{"error":{"message":"x"}}"#, Err(())),
            (
                Dialect::Responses,
                r#"{"type":"response.output_text.delta","delta":"a"}"#,
                Ok(Event::Delta),
            ),
            (
                Dialect::Responses,
                r#"{"type":"response.completed","response":{"error":null}}"#,
                Ok(Event::End),
            ),
            (Dialect::Responses, r#"{"type":"response.failed"}"#, Err(())),
            (
                Dialect::Messages,
                r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}"#,
                Ok(Event::Delta),
            ),
            (
                Dialect::Messages,
                r#"{"type":"message_stop"}"#,
                Ok(Event::End),
            ),
            (Dialect::Messages, r#"{"type":"ping"}"#, Ok(Event::Other)),
            (Dialect::Messages, r#"{"type":"error","error":{}}"#, Err(())),
        ];
        for (dialect, data, want) in cases {
            let got = dialect.event(data.as_bytes()).map_err(|_| ());
            assert_eq!(&got, want, "{dialect:?} {data}");
        }
    }

    #[test]
    fn short_answers_are_read_per_dialect() {
        let cases = [
            (
                Dialect::Chat,
                json!({"choices":[{"message":{"content":"hi"}}]}),
                "hi",
            ),
            (
                Dialect::Responses,
                json!({"output":[{"type":"message","content":[{"type":"output_text","text":"hi"}]}]}),
                "hi",
            ),
            (
                Dialect::Messages,
                json!({"content":[{"type":"text","text":"h"},{"type":"text","text":"i"}]}),
                "hi",
            ),
            (Dialect::Messages, json!({"content":[]}), ""),
        ];
        for (dialect, answer, want) in cases {
            assert_eq!(dialect.answer_text(&answer), want, "{dialect:?}");
        }
    }
}
