//! Pieces several protocol modules use the same way, kept here so each exists once:
//! request-body helpers of the OpenAI-shaped wires (tool results' text among them), [`one_field`] (what a request setting
//! adds), the reading of `{"error": …}` members, stream error frames, undecodable
//! frames and streams cut short ([`stream_end`]), the borrowed-string visitors of the wire shapes ([`visit_strings!`],
//! [`LooseText`], [`Arguments`]), and [`delegate_chat!`], the chat side of a protocol that
//! speaks Chat Completions for chat.
//!
//! Promise: each helper does exactly what the modules using it did inline before; a wire
//! whose rule differs (another key, another fallback) keeps its own code.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use base64::Engine as _;
use qore_core::{
    ContentBlock, ErrorInfo, ImageData, ImageSource, ProviderDetail, ToolResultPart, ToolSpec,
};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
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

/// The text of a tool result as the Chat-shaped wires send it: `Error: ` first when it
/// failed, then its parts in order, each image replaced by the text `image` returns for it
/// (having kept the image its own way), or by the error `image` gives.
pub fn tool_result_text<E>(
    content: &[ToolResultPart],
    is_error: bool,
    mut image: impl FnMut(&ImageSource) -> Result<&'static str, E>,
) -> Result<String, E> {
    let mut text = String::new();
    if is_error {
        text.push_str("Error: ");
    }
    for part in content {
        match part {
            ToolResultPart::Text { text: t } => text.push_str(t),
            ToolResultPart::Image(source) => text.push_str(image(source)?),
        }
    }
    Ok(text)
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

/// The end of a stream: fine when it `ended` (its last event came, or an error did), else
/// a network error naming the `missing` last event.
pub fn stream_end(ended: bool, missing: &str) -> Result<(), ErrorInfo> {
    if ended {
        Ok(())
    } else {
        Err(ErrorInfo::network(format!(
            "the stream ended before the response was complete (no {missing})"
        )))
    }
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

/// The string methods of a borrowing [`Visitor`] whose value wraps a `Cow<'a, str>`: a
/// string borrowed from the frame when it holds no escapes, owned otherwise, each passed
/// through `$wrap` (a function from the `Cow` to the visitor's value).
macro_rules! visit_strings {
    ($wrap:expr) => {
        fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok($wrap(std::borrow::Cow::Borrowed(v)))
        }

        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok($wrap(std::borrow::Cow::Owned(v.to_owned())))
        }

        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok($wrap(std::borrow::Cow::Owned(v)))
        }
    };
}

pub(crate) use visit_strings;

/// A string field that never fails its frame: a JSON string (borrowed when it can be);
/// `null`, absence, a number, a boolean or an array read as no text. An object reads as its
/// own `text` field when `TEXT_OF_OBJECT` (the Responses wire's early reasoning events), as
/// no text otherwise.
#[derive(Debug, Default)]
pub struct LooseText<'a, const TEXT_OF_OBJECT: bool = false>(pub Option<Cow<'a, str>>);

impl<'a, const TEXT_OF_OBJECT: bool> LooseText<'a, TEXT_OF_OBJECT> {
    /// The string, if there is one and it is not empty.
    pub fn non_empty(&self) -> Option<&str> {
        self.0.as_deref().filter(|s| !s.is_empty())
    }

    /// The string, if there is one.
    pub fn take(self) -> Option<Cow<'a, str>> {
        self.0
    }
}

struct LooseTextVisitor<'a, const TEXT_OF_OBJECT: bool>(PhantomData<&'a ()>);

impl<'de: 'a, 'a, const TEXT_OF_OBJECT: bool> Visitor<'de>
    for LooseTextVisitor<'a, TEXT_OF_OBJECT>
{
    type Value = LooseText<'a, TEXT_OF_OBJECT>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string (other values read as no text)")
    }

    visit_strings!(|text| LooseText(Some(text)));

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut text = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if TEXT_OF_OBJECT && key == "text" {
                text = map.next_value::<LooseText<'a, true>>()?.0;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(LooseText(text))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(LooseText(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(LooseText(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(LooseText(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(LooseText(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(LooseText(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(LooseText(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(LooseText(None))
    }
}

impl<'de: 'a, 'a, const TEXT_OF_OBJECT: bool> Deserialize<'de> for LooseText<'a, TEXT_OF_OBJECT> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LooseTextVisitor(PhantomData))
    }
}

/// Tool-call arguments: a JSON-encoded string on the wire (borrowed when it can be), but
/// some servers send the object (or array) itself; it becomes its JSON text.
pub struct Arguments<'a>(pub Cow<'a, str>);

struct ArgumentsVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ArgumentsVisitor<'a> {
    type Value = Arguments<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("tool-call arguments as a string or a JSON value")
    }

    visit_strings!(Arguments);

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let value = Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(Arguments(Cow::Owned(value.to_string())))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        let value = Value::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
        Ok(Arguments(Cow::Owned(value.to_string())))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Arguments<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ArgumentsVisitor(PhantomData))
    }
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

        fn conversation<'h>(
            &'h self,
            history: &'h [qore_core::Message],
        ) -> Option<Box<dyn $crate::Conversation + 'h>> {
            self.$chat.conversation(history)
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

#[cfg(test)]
#[path = "shared_tests.rs"]
mod tests;
