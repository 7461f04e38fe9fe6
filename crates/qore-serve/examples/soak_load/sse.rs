//! What an answer in each dialect told its client: acknowledged (the dialect's success, with
//! the response id and the answer's text), refused (the dialect's error event), or neither (a
//! stream cut before its end). This is the soak's definition of "the client was told".
//!
//! - Chat Completions: acknowledged by `data: [DONE]` with no error object before it; the
//!   text is the `choices[0].delta.content` deltas (streamed) or `choices[0].message.content`.
//! - Messages: acknowledged by `message_stop`; refused by an `error` event; the text is the
//!   `content_block_delta` texts (streamed) or the `content` text blocks.
//! - Responses: acknowledged by `response.completed` (its `response.id` is the id); refused
//!   by `response.failed`, `response.incomplete` or `error`; the text is the
//!   `response.output_text.delta` deltas (streamed) or the `output` text parts.

use serde_json::Value;

/// The three inbound dialects of `qore serve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Chat,
    Messages,
    Responses,
}

impl Dialect {
    pub fn path(self) -> &'static str {
        match self {
            Dialect::Chat => "/v1/chat/completions",
            Dialect::Messages => "/v1/messages",
            Dialect::Responses => "/v1/responses",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Chat => "chat",
            Dialect::Messages => "messages",
            Dialect::Responses => "responses",
        }
    }
}

/// What a streamed answer ended as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The dialect's success event: the response id (Responses) and the answer's text.
    Acknowledged { id: Option<String>, text: String },
    /// The dialect's error event, with its message.
    Refused(String),
    /// Neither: the stream ended or broke before its last event.
    Cut,
}

/// The `data` of each event of an SSE body, with its `event:` name when it has one.
fn events(body: &str) -> Vec<(Option<String>, String)> {
    let body = body.replace("\r\n", "\n");
    let mut out = Vec::new();
    for block in body.split("\n\n") {
        let (mut name, mut data) = (None, Vec::new());
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event:") {
                name = Some(v.trim().to_owned());
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v));
            }
        }
        if !data.is_empty() || name.is_some() {
            out.push((name, data.join("\n")));
        }
    }
    out
}

fn error_text(value: &Value) -> String {
    let error = if value["error"].is_null() {
        value
    } else {
        &value["error"]
    };
    error["message"]
        .as_str()
        .unwrap_or("(no message)")
        .to_owned()
}

/// A streamed answer's body (as far as it came) in `dialect`, read to its end or its break.
pub fn streamed(dialect: Dialect, body: &str) -> Verdict {
    let (mut text, mut id, mut done) = (String::new(), None, false);
    for (name, data) in events(body) {
        if dialect == Dialect::Chat && data.trim() == "[DONE]" {
            done = true;
            continue;
        }
        let value: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
        let kind = value["type"].as_str().or(name.as_deref()).unwrap_or("");
        match dialect {
            Dialect::Chat => {
                if !value["error"].is_null() {
                    return Verdict::Refused(error_text(&value));
                }
                if let Some(t) = value["choices"][0]["delta"]["content"].as_str() {
                    text.push_str(t);
                }
            }
            Dialect::Messages => match kind {
                "error" => return Verdict::Refused(error_text(&value)),
                "content_block_delta" => {
                    text.push_str(value["delta"]["text"].as_str().unwrap_or(""));
                }
                "message_stop" => done = true,
                _ => {}
            },
            Dialect::Responses => match kind {
                "error" | "response.failed" | "response.incomplete" => {
                    let detail = &value["response"]["error"];
                    let message = if detail.is_null() {
                        error_text(&value)
                    } else {
                        error_text(detail)
                    };
                    return Verdict::Refused(format!("{kind}: {message}"));
                }
                "response.output_text.delta" => {
                    text.push_str(value["delta"].as_str().unwrap_or(""));
                }
                "response.created" | "response.completed" => {
                    if let Some(v) = value["response"]["id"].as_str() {
                        id = Some(v.to_owned());
                    }
                    done |= kind == "response.completed";
                }
                _ => {}
            },
        }
    }
    if done {
        Verdict::Acknowledged { id, text }
    } else {
        Verdict::Cut
    }
}

/// A whole (non-streamed) 200 answer in `dialect`: its id (Responses) and text, or `None`
/// when it is not the dialect's answer object.
pub fn whole(dialect: Dialect, body: &str) -> Option<(Option<String>, String)> {
    let value: Value = serde_json::from_str(body).ok()?;
    match dialect {
        Dialect::Chat => {
            let text = value["choices"][0]["message"]["content"].as_str()?;
            Some((None, text.to_owned()))
        }
        Dialect::Messages => {
            let blocks = value["content"].as_array()?;
            let text = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
            Some((None, text))
        }
        Dialect::Responses => {
            let id = value["id"].as_str()?.to_owned();
            Some((Some(id), output_text(&value)))
        }
    }
}

/// The text of a Responses object's `output` (its `output_text` parts, in order).
pub fn output_text(response: &Value) -> String {
    (response["output"].as_array().into_iter().flatten())
        .flat_map(|o| o["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["text"].as_str().map(str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(id: Option<&str>, text: &str) -> Verdict {
        Verdict::Acknowledged {
            id: id.map(str::to_owned),
            text: text.into(),
        }
    }

    #[test]
    fn streamed_answers_are_classified_as_each_dialect_says() {
        let chat_delta =
            |t: &str| format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{t}\"}}}}]}}\n\n");
        let chat_ok = format!("{}{}data: [DONE]\n\n", chat_delta("re: "), chat_delta("a"));
        let chat_error = format!(
            "{}data: {{\"error\":{{\"message\":\"store down\",\"type\":\"server_error\"}}}}\n\ndata: [DONE]\n\n",
            chat_delta("re: ")
        );
        let msg_delta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"re: a\"}}\n\n";
        let msg_stop = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let msg_error = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"store down\"}}\n\n";
        let created = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\"}}\n\n";
        let delta = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"re: a\"}\n\n";
        let completed = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\"}}\n\n";
        let failed = "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"resp_1\",\"error\":{\"code\":\"server_error\",\"message\":\"not stored\"}}}\n\n";
        let cases: Vec<(Dialect, String, Verdict)> = vec![
            (Dialect::Chat, chat_ok.clone(), ack(None, "re: a")),
            (
                Dialect::Chat,
                chat_ok.replace("\n", "\r\n"),
                ack(None, "re: a"),
            ),
            (Dialect::Chat, chat_delta("re: "), Verdict::Cut),
            (
                Dialect::Chat,
                chat_error,
                Verdict::Refused("store down".into()),
            ),
            (
                Dialect::Messages,
                format!("{msg_delta}{msg_stop}"),
                ack(None, "re: a"),
            ),
            (Dialect::Messages, msg_delta.into(), Verdict::Cut),
            (
                Dialect::Messages,
                format!("{msg_delta}{msg_error}"),
                Verdict::Refused("store down".into()),
            ),
            (
                Dialect::Responses,
                format!("{created}{delta}{completed}"),
                ack(Some("resp_1"), "re: a"),
            ),
            (
                Dialect::Responses,
                format!("{created}{delta}"),
                Verdict::Cut,
            ),
            (
                Dialect::Responses,
                format!("{created}{delta}{failed}"),
                Verdict::Refused("response.failed: not stored".into()),
            ),
            (Dialect::Responses, String::new(), Verdict::Cut),
        ];
        for (i, (dialect, body, want)) in cases.into_iter().enumerate() {
            assert_eq!(streamed(dialect, &body), want, "case {i}: {body}");
        }
    }

    #[test]
    fn whole_answers_give_their_id_and_text() {
        let cases = [
            (
                Dialect::Chat,
                r#"{"choices":[{"message":{"role":"assistant","content":"re: a"}}]}"#,
                Some((None, "re: a")),
            ),
            (
                Dialect::Messages,
                r#"{"type":"message","content":[{"type":"text","text":"re: "},{"type":"text","text":"a"}]}"#,
                Some((None, "re: a")),
            ),
            (
                Dialect::Responses,
                r#"{"id":"resp_2","output":[{"type":"message","content":[{"type":"output_text","text":"re: a"}]}]}"#,
                Some((Some("resp_2"), "re: a")),
            ),
            (Dialect::Responses, r#"{"error":{"message":"x"}}"#, None),
            (Dialect::Chat, "<html>503</html>", None),
        ];
        for (dialect, body, want) in cases {
            let want = want.map(|(id, t)| (id.map(str::to_owned), t.to_owned()));
            assert_eq!(whole(dialect, body), want, "{body}");
        }
    }
}
