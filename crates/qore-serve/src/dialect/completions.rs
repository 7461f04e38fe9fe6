//! `POST /v1/completions` (OpenAI's legacy completions with `prompt` and `suffix`): code
//! completion through the agent's fill-in-the-middle body, for editors such as Continue.
//!
//! Promises:
//! - [`decode`]: a body -> [`FimInbound`]: `model` (required), `prompt` (a string, or an
//!   array of one string) as the text before the cursor, `suffix` as the text after it,
//!   `max_tokens`, `temperature`, `stop`, `stream`, `stream_options.include_usage`; what
//!   would change the answer if lost is a 400 naming it (`n` or `best_of` other than 1,
//!   `echo`, several prompts, token prompts); every other field is named in
//!   [`FimInbound::dropped`]; malformed JSON or a wrong type is a 400 naming the field;
//! - [`response`]: a finished turn -> one `text_completion` body (`choices[0].text`,
//!   `finish_reason`, `usage`);
//! - [`TextCompletionEncoder`]: text deltas -> `text_completion` chunks, then a chunk with
//!   `finish_reason`, the usage chunk when asked (`choices: []`), `data: [DONE]`; a failed
//!   turn ends with `data: {"error": …}` and no `[DONE]`, as Chat Completions does;
//! - errors are Chat Completions' envelope ([`error_body`]); ids are `cmpl-` and a ULID.

use qore_core::{ContentBlock, ResponseEvent, StreamOutcome};
use serde_json::{json, Value};

use super::openai_chat::{error, json as field, response as chat};
use super::{sse, StreamEncoder};
use crate::{ReplyMeta, ServeError};

/// One decoded fill-in-the-middle request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FimInbound {
    /// The `model` the caller named: an agent, or `provider/model`. Echoed back as is.
    pub model: String,
    /// The text before the cursor.
    pub prompt: String,
    /// The text after the cursor (empty when not given).
    pub suffix: String,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub stop: Vec<String>,
    pub stream: bool,
    /// `stream_options.include_usage`: a last chunk with usage.
    pub include_usage: bool,
    /// Fields received and not passed on, by their wire names, each once.
    pub dropped: Vec<String>,
}

impl FimInbound {
    /// Name a field that is not passed on (once).
    pub fn drop_hint(&mut self, name: &str) {
        if !self.dropped.iter().any(|d| d == name) {
            self.dropped.push(name.to_owned());
        }
    }
}

/// A short name for logs and metric labels.
pub const NAME: &str = "completions";

/// A fresh reply id.
pub fn new_id() -> String {
    format!("cmpl-{}", ulid::Ulid::generate())
}

pub fn decode(body: &[u8]) -> Result<FimInbound, ServeError> {
    let object = field::parse_object(body)?;
    let mut fim = FimInbound::default();
    for (key, value) in &object {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "model" => fim.model = field::as_str(value, key)?.to_owned(),
            "prompt" => fim.prompt = prompt(value)?,
            "suffix" => fim.suffix = field::as_str(value, key)?.to_owned(),
            "max_tokens" => fim.max_tokens = field::opt_count(&object, key, "")?,
            "temperature" => fim.temperature = field::opt_f64(&object, key, "")?,
            "stop" => fim.stop = field::strings(&object, key, "")?,
            "stream" => fim.stream = field::opt_bool(&object, key, "")?.unwrap_or(false),
            "stream_options" => {
                let options = field::as_object(value, key)?;
                fim.include_usage =
                    field::opt_bool(options, "include_usage", key)?.unwrap_or(false);
                for (inner, v) in options {
                    if inner != "include_usage" && !v.is_null() {
                        fim.drop_hint(&field::join(key, inner));
                    }
                }
            }
            "n" | "best_of" => {
                if value.as_u64() != Some(1) {
                    return Err(ServeError::invalid(
                        key.as_str(),
                        format!("only one completion per request is supported (`{key}` must be 1)"),
                    ));
                }
            }
            "echo" => {
                if field::opt_bool(&object, key, "")? == Some(true) {
                    return Err(ServeError::invalid("echo", "`echo` is not supported"));
                }
            }
            // `top_p`, `logprobs`, `logit_bias`, `seed`, `user`, penalties, unknown keys.
            _ => fim.drop_hint(key),
        }
    }
    if !object.get("model").is_some_and(Value::is_string) {
        return Err(field::missing("model"));
    }
    if object.get("prompt").is_none_or(Value::is_null) {
        return Err(field::missing("prompt"));
    }
    Ok(fim)
}

/// `prompt`: a string, or an array holding one string.
fn prompt(value: &Value) -> Result<String, ServeError> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Array(items) => match items.as_slice() {
            [Value::String(text)] => Ok(text.clone()),
            [other] => Err(field::wrong_type("prompt[0]", "a string", other)),
            _ => Err(ServeError::invalid(
                "prompt",
                "`prompt` must be one string (several prompts are not supported)",
            )),
        },
        other => Err(field::wrong_type("prompt", "a string", other)),
    }
}

/// The error envelope (Chat Completions' shape).
pub fn error_body(error: &ServeError) -> Value {
    error::body(error)
}

fn choice(text: &str, finish_reason: Option<&str>) -> Value {
    json!([{"text": text, "index": 0, "logprobs": null, "finish_reason": finish_reason}])
}

fn envelope(meta: &ReplyMeta, choices: Value) -> Value {
    json!({
        "id": meta.id,
        "object": "text_completion",
        "created": meta.created,
        "model": meta.model,
        "choices": choices,
    })
}

/// The whole reply of a finished turn (another outcome gives empty text).
pub fn response(meta: &ReplyMeta, outcome: &StreamOutcome) -> Value {
    let (text, reason, usage) = match outcome {
        StreamOutcome::Finished {
            message,
            stop_reason,
            usage,
        } => {
            let text: String = (message.blocks.iter())
                .filter_map(ContentBlock::as_text)
                .collect();
            (text, stop_reason.as_ref(), *usage)
        }
        StreamOutcome::Failed { usage, .. } | StreamOutcome::Cancelled { usage } => {
            (String::new(), None, *usage)
        }
    };
    let mut body = envelope(
        meta,
        choice(&text, Some(chat::finish_reason(reason, false))),
    );
    body["usage"] = chat::usage_json(&usage);
    body
}

/// The encoder of one streamed completion.
pub struct TextCompletionEncoder {
    meta: ReplyMeta,
}

impl TextCompletionEncoder {
    pub fn new(meta: ReplyMeta) -> Self {
        TextCompletionEncoder { meta }
    }
}

impl StreamEncoder for TextCompletionEncoder {
    fn start(&mut self, _out: &mut Vec<u8>) {}

    fn event(&mut self, event: &ResponseEvent, out: &mut Vec<u8>) {
        if let ResponseEvent::TextDelta { text } = event {
            if !text.is_empty() {
                sse::frame(out, None, &envelope(&self.meta, choice(text, None)));
            }
        }
    }

    fn finish(&mut self, outcome: &StreamOutcome, error: Option<&ServeError>, out: &mut Vec<u8>) {
        let finish = |reason: &str| envelope(&self.meta, choice("", Some(reason)));
        let usage = (self.meta.include_usage).then(|| envelope(&self.meta, json!([])));
        super::openai_chat::stream::write_end(out, outcome, error, false, finish, usage);
    }
}

#[cfg(test)]
#[path = "completions_tests.rs"]
mod tests;
