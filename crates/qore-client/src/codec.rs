//! The codec abstraction every wire protocol implements.
//!
//! A [`Protocol`] knows its paths and headers, encodes a request body from history, decodes
//! a response (streamed frames through a [`StreamDecoder`], or a whole body) into
//! [`ResponseEvent`]s, reads its provider's error envelope and its model listing. It does no
//! I/O: [`crate::Client`] owns the bytes.

use std::collections::VecDeque;

use qore_core::{ErrorInfo, History, ResponseEvent, ToolSpec};

use crate::transport::sse::SseFrame;
use crate::ModelInfo;

/// Per-request options that every protocol understands.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestOptions {
    /// Ask for a streamed answer (default) or a single JSON body.
    pub stream: bool,
    pub max_tokens: Option<u32>,
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

/// What to send: a model, the history to encode, the tools on offer, options.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub history: &'a History,
    pub tools: &'a [ToolSpec],
    pub options: &'a RequestOptions,
}

/// Decodes one response stream. Created per request by [`Protocol::decoder`].
pub trait StreamDecoder: Send {
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

/// One wire protocol.
pub trait Protocol: Send + Sync + 'static {
    /// Stable name, as used on the command line (`openai-chat`).
    fn name(&self) -> &'static str;

    /// The chat request path, relative to the base URL.
    fn chat_path(&self, model: &str, stream: bool) -> String;

    /// The model listing path, relative to the base URL.
    fn models_path(&self) -> &'static str;

    /// Credential headers for `api_key` (never called with an empty key).
    fn auth_headers(&self, api_key: &str) -> Vec<(String, String)>;

    /// The default request body for `request`.
    fn encode(&self, request: &ChatRequest<'_>) -> Result<serde_json::Value, ErrorInfo>;

    /// A decoder for one streamed response.
    fn decoder(&self) -> Box<dyn StreamDecoder>;

    /// Decode a whole (non-streamed) response body.
    fn decode_body(&self, body: &[u8], out: &mut VecDeque<ResponseEvent>) -> Result<(), ErrorInfo>;

    /// An HTTP error answer, read from the provider's error envelope.
    fn error(&self, status: u16, body: &str) -> ErrorInfo;

    /// The model listing body.
    fn models(&self, body: &[u8]) -> Result<Vec<ModelInfo>, ErrorInfo>;
}
