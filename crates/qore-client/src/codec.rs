//! The codec abstraction every wire protocol implements.
//!
//! A [`Protocol`] knows its paths and headers, encodes a request body from history (and, where
//! the wire has one, a fill-in-the-middle request), makes a [`StreamDecoder`] per response
//! that turns streamed frames or a whole body into [`ResponseEvent`]s, reads its provider's
//! error envelope and its model listing. It does no I/O: [`crate::Client`] owns the bytes, and
//! [`crate::transport`] cuts them into frames ([`Framing`]).

use std::collections::VecDeque;

use qore_core::{ErrorInfo, History, Message, ResponseEvent, ResponseFormat, ToolChoice, ToolSpec};

use crate::transport::sse::SseFrame;
use crate::ModelInfo;

/// `body` as the bytes a request sends (compact JSON).
pub fn body_bytes(body: &serde_json::Value) -> Result<Vec<u8>, ErrorInfo> {
    serde_json::to_vec(body)
        .map_err(|err| ErrorInfo::validation(format!("cannot serialize the request: {err}")))
}

/// Per-request options that every protocol understands.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestOptions {
    /// Ask for a streamed answer (default) or a single JSON body.
    pub stream: bool,
    /// The most output tokens to ask for (`None`: the provider's default).
    pub max_tokens: Option<u32>,
    /// The sampling temperature (`None`: the provider's default).
    pub temperature: Option<f64>,
    /// Extra top-level body fields, merged last (they win over what the encoder wrote).
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Default for RequestOptions {
    fn default() -> Self {
        RequestOptions {
            stream: true,
            max_tokens: None,
            temperature: None,
            extra: Default::default(),
        }
    }
}

impl RequestOptions {
    /// Merge body `fields` (what [`Protocol::tool_choice_fields`],
    /// [`Protocol::response_format_fields`] or [`Protocol::stop_fields`] gave) into
    /// [`RequestOptions::extra`]. Where a field is an object and `extra` already holds an
    /// object under its name, their members are merged one level deep, so two settings
    /// writing into the same wire object both survive (Gemini's `generationConfig` carries
    /// both the response format and the stop sequences); any other field replaces what was
    /// there.
    pub fn merge_extra(&mut self, fields: serde_json::Map<String, serde_json::Value>) {
        for (key, value) in fields {
            match (self.extra.get_mut(&key), value) {
                (Some(serde_json::Value::Object(ours)), serde_json::Value::Object(theirs)) => {
                    ours.extend(theirs);
                }
                (_, value) => {
                    self.extra.insert(key, value);
                }
            }
        }
    }
}

/// What to send: a model, the history to encode, the tools on offer, options.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    /// The model to ask, as the provider names it.
    pub model: &'a str,
    /// The conversation so far; it ends with the turn to answer.
    pub history: &'a History,
    /// The tools the model may call (empty: none offered).
    pub tools: &'a [ToolSpec],
    /// Streaming, limits, sampling and extra body fields.
    pub options: &'a RequestOptions,
}

/// Writes chat request bodies in place of the protocol's encoder (an agent profile's
/// `[body]` template, see `qore-agents`). Must be deterministic: the same request gives
/// the same bytes, so a continuation's prefix is byte-identical to the previous request.
/// It honours `request.options.extra` (fields merged at the top level, e.g. the tool-choice
/// field the tool loop adds for a final answer).
pub trait BodyRenderer: Send + Sync {
    /// The request body for `request`, as bytes, deterministic for the same request.
    fn render(&self, request: &ChatRequest<'_>) -> Result<Vec<u8>, ErrorInfo>;

    /// The same bytes as [`BodyRenderer::render`], reusing what `cache` holds from earlier
    /// requests of the same history (see [`crate::EncodeCache`]). The default renders
    /// afresh.
    fn render_cached(
        &self,
        request: &ChatRequest<'_>,
        cache: &mut crate::EncodeCache,
    ) -> Result<Vec<u8>, ErrorInfo> {
        let _ = cache;
        self.render(request)
    }

    /// The body of a fill-in-the-middle request from the renderer's template; `None` when
    /// it has none for this request (the default): the protocol's encoder writes it.
    fn render_fim(&self, request: &FimRequest<'_>) -> Option<Result<Vec<u8>, ErrorInfo>> {
        let _ = request;
        None
    }
}

/// Another open document a fill-in-the-middle request carries as context, in the shape of
/// llama.cpp's `input_extra` entries: `{"filename", "text"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FimFile<'a> {
    /// The document's name or path, as the model should see it.
    pub filename: &'a str,
    /// The document's text.
    pub text: &'a str,
}

/// A fill-in-the-middle request: complete the text between `prefix` and `suffix`, with
/// other open documents (`extra`) as context where the wire has a place for them.
#[derive(Debug, Clone, Copy)]
pub struct FimRequest<'a> {
    /// The model to ask.
    pub model: &'a str,
    /// The text before the cursor.
    pub prefix: &'a str,
    /// The text after the cursor.
    pub suffix: &'a str,
    /// Other open documents, as context where the wire has a place for them.
    pub extra: &'a [FimFile<'a>],
    /// Streaming, limits and extra body fields.
    pub options: &'a RequestOptions,
}

/// How a streamed body is cut into frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// `text/event-stream` ([`crate::transport::sse`]).
    #[default]
    Sse,
    /// One JSON document per line ([`crate::transport::ndjson`]); each line arrives as a frame
    /// with no event name.
    Ndjson,
}

/// Decodes one response, streamed or whole. Created per request by [`Protocol::decoder`]
/// (or [`Protocol::fim_decoder`]).
pub trait StreamDecoder: Send {
    /// How this response's streamed body is framed.
    fn framing(&self) -> Framing {
        Framing::Sse
    }

    /// Decode a whole (non-streamed) 2xx body.
    fn body(&mut self, body: &[u8], out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo>;

    /// Decode one frame, pushing the events it carries onto `out`. An `Err` means the
    /// frame could not be decoded at all; the stream then fails with it.
    fn frame(
        &mut self,
        frame: SseFrame<'_>,
        out: &mut VecDeque<ResponseEvent>,
    ) -> Result<(), ErrorInfo>;

    /// The body ended: flush what is pending (tool calls whose end the wire never marked).
    /// `Err` when the stream ended before the response was complete.
    fn finish(&mut self, out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo>;
}

/// One history as a wire encodes it piece by piece, for [`crate::EncodeCache`]: made by
/// [`Protocol::conversation`] per request. An entry starts at a message and covers it and
/// possibly the messages after it ([`Conversation::entry_end`]: a wire that merges
/// consecutive messages of one role into one turn); what an entry's bytes depend on besides
/// the messages it covers is [`Conversation::context`], so a cache keyed by both never
/// serves stale bytes. The entries of every message, in order, are exactly the
/// conversation [`Protocol::encode`] writes.
pub trait Conversation {
    /// Whether message `at` lies outside the conversation member (a system prompt the wire
    /// sends in a top-level field): the body's other members are encoded from these
    /// messages alone ([`Protocol::encode`] with them as the history, which must leave the
    /// conversation member empty). The default: none does.
    fn outside(&self, at: usize) -> bool {
        let _ = at;
        false
    }

    /// The end (exclusive) of the messages the entry starting at `at` covers; the default:
    /// `at` alone. Messages outside the conversation inside the range are skipped.
    fn entry_end(&self, at: usize) -> usize {
        at + 1
    }

    /// Mix into `key` what the entry starting at `at` depends on besides the content of the
    /// messages it covers (a tool result's call name read from an earlier turn, the turn
    /// being the last user turn). The default: nothing.
    fn context(&self, at: usize, key: &mut crate::KeyHasher) {
        let _ = (at, key);
    }

    /// Append the conversation items of the entry starting at `at`.
    fn encode(&self, at: usize, out: &mut Vec<serde_json::Value>) -> Result<(), ErrorInfo>;
}

/// One wire protocol.
pub trait Protocol: Send + Sync + 'static {
    /// Stable name, as used on the command line (`openai-chat`).
    fn name(&self) -> &'static str;

    /// The chat request path, relative to the base URL.
    fn chat_path(&self, model: &str, stream: bool) -> String;

    /// The model listing path, relative to the base URL.
    fn models_path(&self) -> &'static str;

    /// Credential headers for `api_key` (never called with an empty key); by default
    /// `authorization: Bearer <key>`, which the OpenAI-style wires and Ollama share.
    fn auth_headers(&self, api_key: &str) -> Vec<(String, String)> {
        vec![("authorization".to_owned(), format!("Bearer {api_key}"))]
    }

    /// Headers the wire requires on every request, credential or not (Anthropic's
    /// `anthropic-version`). Configured headers are applied after these and win.
    fn default_headers(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// This wire marking prompt-cache breakpoints (`cache_control` on the last system
    /// block, the last tool and the last block of the last user turn), when its bodies have
    /// such marks; `None` (the default): the wire has none.
    fn with_cache_marks(&self) -> Option<std::sync::Arc<dyn Protocol>> {
        None
    }

    /// Whether thinking sent back in history must carry the signature the wire gave it
    /// (unsigned thinking is refused); `false` (the default): thinking goes back as it is.
    fn thinking_needs_signature(&self) -> bool {
        false
    }

    /// Whether this wire's usage counts prompt-cache reads and writes beside
    /// `input_tokens` rather than inside it; `false` (the default): `input_tokens` is the
    /// whole prompt, cache reads included.
    fn cache_counted_beside_input(&self) -> bool {
        false
    }

    /// Whether this wire's servers say what they are at `GET /props` (llama.cpp's server:
    /// its context size, default output cap, chat template's tool support); `false` (the
    /// default): they are not asked.
    fn server_props(&self) -> bool {
        false
    }

    /// The default request body for `request`.
    fn encode(&self, request: &ChatRequest<'_>) -> Result<serde_json::Value, ErrorInfo>;

    /// The body member holding the conversation when this wire encodes it entry by entry
    /// ([`Protocol::conversation`]), so that a request reuses the bytes of messages
    /// encoded for an earlier one ([`crate::EncodeCache`]); `None` (the default): the
    /// whole body is encoded every time.
    fn conversation_key(&self) -> Option<&'static str> {
        None
    }

    /// `history` as this wire encodes it entry by entry (see [`Conversation`]). Only called
    /// when [`Protocol::conversation_key`] is `Some`; `None` (the default): no such
    /// encoder, the whole body is encoded every time.
    fn conversation<'h>(&'h self, _history: &'h [Message]) -> Option<Box<dyn Conversation + 'h>> {
        None
    }

    /// What sets this encoder's messages apart from another's: the name, and the dialect
    /// where one name has several (cached encodings are never shared across tags).
    fn encoding_tag(&self) -> String {
        self.name().to_owned()
    }

    /// A decoder for one chat response.
    fn decoder(&self) -> Box<dyn StreamDecoder>;

    /// The fill-in-the-middle request path, when this wire has one.
    fn fim_path(&self, _model: &str, _stream: bool) -> Option<String> {
        None
    }

    /// The fill-in-the-middle request body.
    fn encode_fim(&self, _request: &FimRequest<'_>) -> Result<serde_json::Value, ErrorInfo> {
        Err(ErrorInfo::config(format!(
            "the {} protocol has no fill-in-the-middle endpoint",
            self.name()
        )))
    }

    /// A decoder for one fill-in-the-middle response.
    fn fim_decoder(&self) -> Box<dyn StreamDecoder> {
        self.decoder()
    }

    /// An HTTP error answer, read from the provider's error envelope.
    fn error(&self, status: u16, body: &str) -> ErrorInfo;

    /// How long an error body asks the client to wait before retrying, when the provider
    /// says so in the body rather than in headers (Gemini's `RetryInfo`).
    fn retry_delay(&self, _body: &str) -> Option<std::time::Duration> {
        None
    }

    /// Body fields that forbid tool calls while the tool definitions stay in the request
    /// (a history with tool calls needs them on some wires). Merged into
    /// [`RequestOptions::extra`] when the tool loop asks for a final answer.
    fn forbid_tool_calls(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut fields = serde_json::Map::new();
        fields.insert("tool_choice".into(), "none".into());
        fields
    }

    /// Body fields (merged into [`RequestOptions::extra`]) that ask the model to use tools as
    /// `choice` says; `None` when this wire has no way to say it (the caller refuses the
    /// request rather than drop it).
    fn tool_choice_fields(
        &self,
        _choice: &ToolChoice,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        None
    }

    /// Body fields that ask for an answer in `format`; `None` when this wire cannot.
    fn response_format_fields(
        &self,
        _format: &ResponseFormat,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        None
    }

    /// Body fields that stop the answer at any of `stop`; `None` when this wire cannot.
    fn stop_fields(&self, _stop: &[String]) -> Option<serde_json::Map<String, serde_json::Value>> {
        None
    }

    /// The model listing body.
    fn models(&self, body: &[u8]) -> Result<Vec<ModelInfo>, ErrorInfo>;
}
