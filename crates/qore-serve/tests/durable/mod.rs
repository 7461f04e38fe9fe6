//! The ledger of the durability tests: requests of each dialect, streaming and not, that ask
//! the server to keep something (`store: true` on Responses, `x-qore-session` on Chat
//! Completions and Messages), each written down as what the client was told: acknowledged
//! (a 200, or the dialect's success ending: `response.completed`, `[DONE]`,
//! `message_stop`), refused (a 5xx with `Retry-After` for a 503, or the dialect's error
//! event), or something else (which fails the test). [`check_kept`] then proves every
//! acknowledged one is in the store.
#![allow(dead_code)]

use std::time::Duration;

use serde_json::{json, Value};

use super::fleet::Fleet;

/// One kind of request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Chat,
    Messages,
    Responses,
}

/// Every dialect, streaming and not.
pub const CASES: [(Dialect, bool); 6] = [
    (Dialect::Chat, false),
    (Dialect::Chat, true),
    (Dialect::Messages, false),
    (Dialect::Messages, true),
    (Dialect::Responses, false),
    (Dialect::Responses, true),
];

/// What the client was told it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// A stored response's id.
    Response(String),
    /// A named session holding a turn whose prompt is this.
    Session { name: String, prompt: String },
}

/// How one request ended, for its client.
#[derive(Debug, Clone)]
pub enum Told {
    Acknowledged(Kept),
    /// Refused: the status (200 when the stream began) and the error's message.
    Refused {
        status: u16,
        message: String,
    },
    /// Neither: a bug (or a client failure).
    Other(String),
}

/// Send one request of `dialect` to server `n`, tagged `tag` (unique in the test); what the
/// client was told.
pub async fn one(
    fleet: &Fleet,
    n: usize,
    key: &str,
    dialect: Dialect,
    stream: bool,
    tag: &str,
) -> Told {
    let prompt = format!("prompt {tag}");
    let name = format!("s-{tag}");
    let (path, body) = match dialect {
        Dialect::Chat => (
            "/v1/chat/completions",
            json!({"model": "up/m", "stream": stream,
                   "messages": [{"role": "user", "content": prompt}]}),
        ),
        Dialect::Messages => (
            "/v1/messages",
            json!({"model": "up/m", "max_tokens": 50, "stream": stream,
                   "messages": [{"role": "user", "content": prompt}]}),
        ),
        Dialect::Responses => (
            "/v1/responses",
            json!({"model": "up/m", "input": prompt, "store": true, "stream": stream}),
        ),
    };
    let url = format!("{}{path}", fleet.servers[n].url());
    let sent = (fleet.http.post(&url))
        .header("x-api-key", key)
        .header("anthropic-version", "2023-06-01")
        .header("x-qore-session", &name)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await;
    let response = match sent {
        Ok(response) => response,
        Err(e) => return Told::Other(format!("{path}: {e}")),
    };
    let status = response.status().as_u16();
    let retry_after = response.headers().get("retry-after").is_some();
    let text = match response.text().await {
        Ok(text) => text,
        Err(e) => return Told::Other(format!("{path}: reading the body: {e}")),
    };
    let session = Kept::Session { name, prompt };
    if status != 200 {
        if status == 503 && !retry_after {
            return Told::Other(format!("{path}: 503 without Retry-After: {text}"));
        }
        let ids = ["\"id\":\"resp_", "\"id\":\"msg_", "\"id\":\"chatcmpl-"];
        if ids.iter().any(|id| text.contains(id)) {
            return Told::Other(format!("{path}: a refusal carries an id: {text}"));
        }
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        return match body["error"]["message"].as_str() {
            Some(message) if status >= 500 => Told::Refused {
                status,
                message: message.to_owned(),
            },
            _ => Told::Other(format!("{path}: {status} {text}")),
        };
    }
    if !stream {
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        return match (dialect, body["id"].as_str()) {
            (Dialect::Responses, Some(id)) => Told::Acknowledged(Kept::Response(id.to_owned())),
            (_, Some(_)) => Told::Acknowledged(session),
            _ => Told::Other(format!("{path}: 200 without an id: {text}")),
        };
    }
    ending(dialect, &text, session)
}

/// What a whole SSE body ended with.
fn ending(dialect: Dialect, text: &str, session: Kept) -> Told {
    let frames = frames(text);
    let Some((event, data)) = frames.last() else {
        return Told::Other(format!("an empty stream: {text:?}"));
    };
    let refused = |message: &Value| Told::Refused {
        status: 200,
        message: message.as_str().unwrap_or_default().to_owned(),
    };
    match dialect {
        Dialect::Responses => match event.as_str() {
            "response.completed" => match data["response"]["id"].as_str() {
                Some(id) => Told::Acknowledged(Kept::Response(id.to_owned())),
                None => Told::Other(format!("completed without an id: {data}")),
            },
            "response.failed" => refused(&data["response"]["error"]["message"]),
            _ => Told::Other(format!("the stream ended with {event}: {text}")),
        },
        Dialect::Messages => match event.as_str() {
            "message_stop" => Told::Acknowledged(session),
            "error" => refused(&data["error"]["message"]),
            _ => Told::Other(format!("the stream ended with {event}: {text}")),
        },
        Dialect::Chat => match (event.as_str(), data) {
            ("[DONE]", _) if !text.contains("\"error\"") => Told::Acknowledged(session),
            (_, data) if data["error"].is_object() => refused(&data["error"]["message"]),
            _ => Told::Other(format!("the stream ended with {event}: {text}")),
        },
    }
}

/// The frames of an SSE body: (event name, or `[DONE]`, or "" ; data as JSON). Comments
/// (`: keep-alive`) are skipped, as every dialect's client does.
pub fn frames(text: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut event = String::new();
        let mut data = String::new();
        for line in block.lines() {
            if let Some(name) = line.strip_prefix("event: ") {
                event = name.to_owned();
            } else if let Some(rest) = line.strip_prefix("data: ") {
                data.push_str(rest);
            }
        }
        if data == "[DONE]" {
            out.push(("[DONE]".to_owned(), Value::Null));
        } else if !data.is_empty() {
            out.push((event, serde_json::from_str(&data).unwrap_or(Value::Null)));
        }
    }
    out
}

/// Whether `kept` is in the store behind server `n`: a response id a GET finds (the same id),
/// or a session holding a turn with its prompt. Retried while the store still answers 503.
pub async fn check_kept(fleet: &Fleet, n: usize, key: &str, kept: &Kept) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let found = match kept {
            Kept::Response(id) => {
                let answer = fleet
                    .get(n, &format!("/v1/responses/{id}"), Some(key))
                    .await;
                match answer.status {
                    200 if answer.body["id"] == id.as_str() => Ok(()),
                    503 => Err(None),
                    _ => Err(Some(format!("GET {id}: {answer:?}"))),
                }
            }
            Kept::Session { name, prompt } => match fleet.stores[n].session(name).await {
                Ok(info) => match fleet.stores[n].turns(&info.id).await {
                    Ok(turns) if turns.len() == 1 && format!("{turns:?}").contains(prompt) => {
                        Ok(())
                    }
                    Ok(turns) => Err(Some(format!("session {name}: {turns:?}"))),
                    Err(e) if e.is_unavailable() => Err(None),
                    Err(e) => Err(Some(format!("session {name}: {e}"))),
                },
                Err(e) if e.is_unavailable() => Err(None),
                Err(e) => Err(Some(format!("session {name}: {e}"))),
            },
        };
        match found {
            Ok(()) => return Ok(()),
            Err(Some(why)) => return Err(why),
            Err(None) if tokio::time::Instant::now() > deadline => {
                return Err(format!("{kept:?}: the store never answered"))
            }
            Err(None) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}
