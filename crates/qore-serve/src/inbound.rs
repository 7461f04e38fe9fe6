//! A request as any dialect decodes it, wire-neutral: the conversation in qore-core's
//! messages, the caller's tools, and the settings the turn passes on to whichever wire
//! answers. What the dialect received but no qore-core type carries is named in
//! [`Inbound::dropped`], so the server can say so (a response header, a log line, a metric):
//! a hint is never dropped silently.

use qore_core::{History, ResponseFormat, ToolChoice, ToolSpec};

/// One decoded request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inbound {
    /// The client wire this dialect mirrors (`openai-chat`, `anthropic`,
    /// `openai-responses`): vendor-only content (thinking signatures, vendor headers) goes
    /// on only to that wire. Set by the server.
    pub wire: &'static str,
    /// The `model` the caller named: an agent, or `provider/model`. Echoed back as is.
    pub model: String,
    /// The conversation, system messages included (first, as [`qore_core::Role::System`]).
    pub history: History,
    /// The tools the caller offers; their calls go back to the caller.
    pub tools: Vec<ToolSpec>,
    pub tool_choice: Option<ToolChoice>,
    pub response_format: Option<ResponseFormat>,
    /// Stream the answer (SSE in the dialect's shape) or answer with one JSON body.
    pub stream: bool,
    /// Chat Completions' `stream_options.include_usage`: a last chunk with usage.
    pub include_usage: bool,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub stop: Vec<String>,
    /// Hints received and not passed on, by their wire names (`cache_control`,
    /// `prompt_cache_key`, `thinking`, `anthropic-beta`, `web_search` …), each once.
    pub dropped: Vec<String>,
    /// Responses: keep this exchange as a stored session (`store`, default true there).
    pub store: bool,
    /// Responses: continue from this stored response.
    pub previous_response_id: Option<String>,
    /// Caller headers to pass on unchanged when the upstream speaks the same dialect
    /// (`anthropic-version`, `anthropic-beta`).
    pub passthrough_headers: Vec<(String, String)>,
}

impl Inbound {
    /// Name a hint that is not passed on (once).
    pub fn drop_hint(&mut self, name: &str) {
        if !self.dropped.iter().any(|d| d == name) {
            self.dropped.push(name.to_owned());
        }
    }
}

/// What a reply is labelled with: the same in every chunk of a stream and in the final body.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplyMeta {
    /// The reply's id in the dialect's form (`chatcmpl-…`, `msg_…`, `resp_…`).
    pub id: String,
    /// The model name the caller asked for, echoed back.
    pub model: String,
    /// Unix seconds.
    pub created: u64,
    /// Chat Completions: end the stream with a usage chunk.
    pub include_usage: bool,
}
