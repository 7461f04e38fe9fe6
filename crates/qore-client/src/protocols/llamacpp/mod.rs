//! llama.cpp's server (`llama-server`, also the local xllamacpp server): chat over its
//! OpenAI-compatible Chat Completions, fill-in-the-middle over its native `/infill` or
//! `/completion`, and the `/health` and `/props` probes.
//!
//! Base URL convention: the OpenAI-style base ending in `/v1`, as for every
//! OpenAI-compatible server (`http://127.0.0.1:18080/v1`, what [`crate::local::base_url`]
//! gives). Chat goes to `chat/completions` and the listing to `models` below it; the native
//! endpoints live at the server root and are addressed as `../infill`, `../completion`,
//! `../health`, `../props` (the URL parser resolves the dot segment: `…/v1/../infill` is
//! `…/infill`, and a server behind a path prefix keeps its prefix). A base without `/v1`
//! (the bare root) works too: the dot segment cannot climb above the root, and llama.cpp
//! serves chat and models at `/chat/completions` and `/models` as well.
//!
//! Promises: chat requests, answers, errors and listings are exactly those of
//! [`crate::protocols::openai_chat`]; fill-in-the-middle goes to the endpoint
//! [`LlamaCpp::fim`] names (see [`LlamaFim`] for how `/completion` builds its prompt) and
//! streams as text deltas with usage and a stop reason ([`CompletionDecoder`]); a model
//! without FIM tokens answers `/infill` with 501, which comes out as a provider error that
//! keeps the status and body. [`health`] and [`props`] are typed probes. Request settings
//! are Chat Completions' fields, except that a tool cannot be named in `tool_choice`.

mod error;
mod fast;
mod probe;
mod request;
mod stream;
mod wire;

use qore_core::{ErrorInfo, ResponseFormat, ToolChoice};
use serde_json::{Map, Value};

use crate::codec::{FimRequest, Protocol, StreamDecoder};
use crate::protocols::openai_chat::{settings, OpenAiChat};
use crate::protocols::shared::delegate_chat;

pub use probe::{health, parse_props, props, supports_tools, Health, Props};
pub use request::{fill_template, LlamaFim};
pub use stream::CompletionDecoder;

/// The name of this protocol on the command line.
pub const NAME: &str = "llamacpp";

/// llama.cpp's server.
#[derive(Debug, Clone, Default)]
pub struct LlamaCpp {
    /// Where fill-in-the-middle requests go.
    pub fim: LlamaFim,
    /// The Chat Completions dialect used for chat.
    pub chat: OpenAiChat,
}

impl LlamaCpp {
    /// Fill-in-the-middle through `fim`, chat as usual.
    pub fn with_fim(fim: LlamaFim) -> Self {
        LlamaCpp {
            fim,
            ..LlamaCpp::default()
        }
    }
}

impl Protocol for LlamaCpp {
    fn name(&self) -> &'static str {
        NAME
    }

    // Chat: paths, credentials, encoding, decoding, errors and listings of Chat Completions.
    delegate_chat!(chat);

    /// `GET /props` (see [`props`]).
    fn server_props(&self) -> bool {
        true
    }

    /// The server reads `tool_choice` as a string only (`auto`, `none`, `required`); an
    /// object naming a tool is not understood (the server falls back to `auto`), so a
    /// named tool is refused.
    fn tool_choice_fields(&self, choice: &ToolChoice) -> Option<Map<String, Value>> {
        match choice {
            ToolChoice::Tool { .. } => None,
            _ => Some(settings::tool_choice(choice, "required")),
        }
    }

    /// `response_format` as on Chat Completions: the server turns `json_object` and
    /// `json_schema` into a grammar.
    fn response_format_fields(&self, format: &ResponseFormat) -> Option<Map<String, Value>> {
        Some(settings::response_format(format))
    }

    fn stop_fields(&self, stop: &[String]) -> Option<Map<String, Value>> {
        Some(settings::stop(stop))
    }

    fn fim_path(&self, _model: &str, _stream: bool) -> Option<String> {
        Some(match self.fim {
            LlamaFim::Infill => "../infill".to_owned(),
            LlamaFim::Completion { .. } => "../completion".to_owned(),
        })
    }

    fn encode_fim(&self, request: &FimRequest<'_>) -> Result<serde_json::Value, ErrorInfo> {
        request::encode_fim(&self.fim, request)
    }

    fn fim_decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(CompletionDecoder::new())
    }
}
