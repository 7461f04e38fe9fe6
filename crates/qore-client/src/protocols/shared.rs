//! Pieces several protocol modules use the same way, kept here so each exists once:
//! request-body helpers of the OpenAI-shaped wires, [`one_field`] (what a request setting
//! adds), the reading of `{"error": …}` members, stream error frames and undecodable
//! frames, and [`delegate_chat!`], the chat side of a protocol that speaks Chat Completions
//! for chat.
//!
//! Promise: each helper does exactly what the modules using it did inline before; a wire
//! whose rule differs (another key, another fallback) keeps its own code.

use base64::Engine as _;
use qore_core::{ContentBlock, ErrorInfo, ImageData, ImageSource, ProviderDetail, ToolSpec};
use serde_json::{json, Map, Value};

use crate::codec::{FimRequest, RequestOptions};

/// Queue the `MessageStart` of an answer whose chunks name only the model, unless `started`
/// (then set): the first chunk's model, or none.
pub fn start_once(
    started: &mut bool,
    model: Option<std::borrow::Cow<'_, str>>,
    out: &mut std::collections::VecDeque<qore_core::ResponseEvent>,
) {
    if !*started {
        *started = true;
        out.push_back(qore_core::ResponseEvent::MessageStart {
            id: None,
            model: model.map(std::borrow::Cow::into_owned),
        });
    }
}

/// The text blocks of a message, joined by newlines (what a system or plain-text turn
/// sends).
pub fn joined_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// An image as the OpenAI wires take it by URL: its URL, or its bytes as a base64 `data:`
/// URL (`application/octet-stream` when the media type is unknown).
pub fn image_url(image: &ImageSource) -> String {
    match &image.data {
        ImageData::Url(url) => url.clone(),
        ImageData::Bytes(bytes) => format!(
            "data:{};base64,{}",
            image
                .media_type
                .as_deref()
                .unwrap_or("application/octet-stream"),
            base64::engine::general_purpose::STANDARD.encode(bytes)
        ),
    }
}

/// Tools in the Chat Completions shape: `{"type": "function", "function": {"name",
/// "description", "parameters"}}` (OpenAI Chat Completions and Ollama).
pub fn function_tools(tools: &[ToolSpec]) -> Value {
    let tools = tools
        .iter()
        .map(|tool| {
            json!({"type": "function", "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            }})
        })
        .collect();
    Value::Array(tools)
}

/// The start of a fill-in-the-middle body on the wires that take the prefix as `prompt`
/// (Mistral, Completions, Ollama's generate): `{"model", "prompt", "suffix"}`; an empty model
/// is a config error.
pub fn fim_prompt_body(request: &FimRequest<'_>) -> Result<Map<String, Value>, ErrorInfo> {
    if request.model.is_empty() {
        return Err(ErrorInfo::config("no model given for the request"));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("prompt".into(), json!(request.prefix));
    body.insert("suffix".into(), json!(request.suffix));
    Ok(body)
}

/// The end of a flat request body: the token bound under `max_tokens_key` and the
/// temperature when set, then `options.extra` merged last at the top level (it wins).
pub fn finish_body(
    mut body: Map<String, Value>,
    options: &RequestOptions,
    max_tokens_key: &str,
) -> Value {
    if let Some(max_tokens) = options.max_tokens {
        body.insert(max_tokens_key.into(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    for (key, value) in &options.extra {
        body.insert(key.clone(), value.clone());
    }
    Value::Object(body)
}

/// Body fields holding the one field `key: value` (what one request setting adds to
/// [`RequestOptions::extra`]).
pub fn one_field(key: &str, value: Value) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert(key.into(), value);
    fields
}

/// The message and type of an `error` member that is a string (the message) or an object
/// (its `message` and `type` strings); `None` for any other shape, which each wire reads
/// its own way.
pub fn message_and_type(error: &Value) -> Option<(Option<String>, Option<String>)> {
    let text = |inner: &Map<String, Value>, key: &str| {
        inner.get(key).and_then(Value::as_str).map(str::to_owned)
    };
    match error {
        Value::String(text) => Some((Some(text.clone()), None)),
        Value::Object(inner) => Some((text(inner, "message"), text(inner, "type"))),
        _ => None,
    }
}

/// The HTTP status an error object's numeric `code` names, when it names one.
pub fn code_status(error: &Value) -> Option<u16> {
    error
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
}

/// An error object that arrived inside a 200 answer: a provider error with the envelope's
/// `message` (else the object's JSON text), `error_type` and `status`, keeping the frame
/// (or line) it came in verbatim.
pub fn in_stream_error(
    error: &Value,
    frame: &str,
    (message, error_type): (Option<String>, Option<String>),
    status: Option<u16>,
) -> ErrorInfo {
    ErrorInfo::provider(message.unwrap_or_else(|| error.to_string())).with_detail(ProviderDetail {
        status,
        error_type,
        body: Some(frame.to_owned()),
    })
}

/// A frame (or body) that is not the JSON its wire promises: a provider error naming `what`
/// could not be read and why, keeping the raw text verbatim.
pub fn undecodable(what: &str, err: &serde_json::Error, raw: &str) -> ErrorInfo {
    ErrorInfo::provider(format!("undecodable {what}: {err}")).with_detail(ProviderDetail {
        status: None,
        error_type: None,
        body: Some(raw.to_owned()),
    })
}

/// The chat side of a [`crate::Protocol`] that speaks Chat Completions for chat: paths,
/// credentials, encoding, decoding, error envelopes and listings delegate to the
/// [`crate::protocols::openai_chat::OpenAiChat`] in `self.$chat`. Used inside the
/// `impl Protocol`, next to the methods the protocol has of its own.
macro_rules! delegate_chat {
    ($chat:ident) => {
        fn chat_path(&self, model: &str, stream: bool) -> String {
            self.$chat.chat_path(model, stream)
        }

        fn models_path(&self) -> &'static str {
            self.$chat.models_path()
        }

        fn auth_headers(&self, api_key: &str) -> Vec<(String, String)> {
            self.$chat.auth_headers(api_key)
        }

        fn encode(
            &self,
            request: &$crate::codec::ChatRequest<'_>,
        ) -> Result<serde_json::Value, qore_core::ErrorInfo> {
            self.$chat.encode(request)
        }

        fn conversation_key(&self) -> Option<&'static str> {
            self.$chat.conversation_key()
        }

        fn encode_message(&self, message: &qore_core::Message, out: &mut Vec<serde_json::Value>) {
            self.$chat.encode_message(message, out)
        }

        fn encoding_tag(&self) -> String {
            self.$chat.encoding_tag()
        }

        fn decoder(&self) -> Box<dyn $crate::codec::StreamDecoder> {
            self.$chat.decoder()
        }

        fn error(&self, status: u16, body: &str) -> qore_core::ErrorInfo {
            self.$chat.error(status, body)
        }

        fn models(&self, body: &[u8]) -> Result<Vec<$crate::ModelInfo>, qore_core::ErrorInfo> {
            self.$chat.models(body)
        }
    };
}

pub(crate) use delegate_chat;
