//! An agent ready to send: its protocol, its resolved model and endpoint, and its compiled
//! `[body]`. [`AgentRenderer::chat_body`] renders a chat request from history (the first
//! request and every tool-loop continuation alike), [`AgentRenderer::fim_body`] a
//! fill-in-the-middle request (`ctx.prefix`, `ctx.suffix`, `ctx.extra`, `ctx.model`); each
//! uses the protocol's default encoder when the profile has no `[body]`.
//!
//! Promises:
//! - `${MODEL}` in the endpoint is the resolved model; the same history and tools give the
//!   same bytes;
//! - what the seed says the session adds, the renderer adds to every request of a run, as
//!   defaults a `[body]` that sets the field keeps: `model` (the resolved model) when the
//!   protocol carries it in the body (not Gemini: its model is in the URL), and `tools`
//!   (the offered definitions in the protocol's dialect) when the profile has
//!   `enable_tools`; with `enable_tools = false` no tool definition reaches the request;
//! - prompt caching (`cache_prompt` / `cache_breakpoints`, `cache_ttl`) on a wire that has
//!   cache marks ([`Protocol::with_cache_marks`]: Anthropic Messages): a rendered `system` that is a plain string becomes one text block carrying the
//!   `cache_control` mark, and the added `tools` carry it on the last definition (the
//!   bundled partials mark what they render themselves);
//! - a render failure is an `ErrorInfo` of category `Validation` naming the profile file
//!   and body key, and nothing is sent.

use std::sync::Arc;

use qore_client::{
    body_bytes, BodyRenderer, ChatRequest, EncodeCache, FimRequest, Protocol, RequestOptions,
};
use qore_core::{ErrorInfo, History, Message, ToolSpec};
use serde_json::Value;

use crate::body::{BodyTemplate, RenderError};
use crate::body_edit::{not_object, set_members_of, top_level_members, When};
use crate::catalog::Agent;
use crate::context::{CacheSettings, TemplateContext};
use crate::error::AgentError;
use crate::partials::Partials;
use crate::profile::{CacheBreakpoint, CacheTtl};

/// The body `protocol`'s encoder writes for a one-word conversation with `tools` and
/// `options`: how the wire spells what the session adds (tools, model, request options).
pub fn probe_body(
    protocol: &dyn Protocol,
    tools: &[ToolSpec],
    options: &RequestOptions,
) -> Result<Value, ErrorInfo> {
    let history = History::from(vec![Message::user("-")]);
    protocol.encode(&ChatRequest {
        model: "m",
        history: &history,
        tools,
        options,
    })
}

/// Tool definitions in `protocol`'s dialect: what its encoder sends as `tools`.
pub fn tool_definitions(protocol: &dyn Protocol, tools: &[ToolSpec]) -> Vec<Value> {
    if tools.is_empty() {
        return Vec::new();
    }
    match probe_body(protocol, tools, &RequestOptions::default()) {
        Ok(Value::Object(mut body)) => match body.remove("tools") {
            Some(Value::Array(defs)) => defs,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The profile's cache fields as templates see them.
pub fn cache_settings(agent: &Agent) -> CacheSettings {
    CacheSettings {
        prompt: agent.cache_prompt,
        ttl: agent.cache_ttl.map(|ttl| match ttl {
            CacheTtl::FiveMinutes => "5m",
            CacheTtl::OneHour => "1h",
        }),
        breakpoints: (agent.cache_breakpoints.iter())
            .map(|b| match b {
                CacheBreakpoint::System => "system",
                CacheBreakpoint::Tools => "tools",
                CacheBreakpoint::LastUserMessage => "last_user_message",
            })
            .collect(),
    }
}

/// One value kept under the key of what it was made from.
pub type Memo<T> = std::sync::Mutex<Option<(u64, T)>>;

/// A concrete agent bound to its protocol and model.
pub struct AgentRenderer {
    /// The profile, resolved (`extends` merged).
    pub agent: Agent,
    /// The wire the body is written for.
    pub protocol: Arc<dyn Protocol>,
    /// The model the body names.
    pub model: String,
    /// The request path or URL, `${MODEL}` filled in; `None`: the protocol's own.
    pub endpoint: Option<String>,
    pub(crate) body: Option<BodyTemplate>,
    /// Whether the protocol's requests carry the model in the body.
    carries_model: bool,
    /// Whether the wire has prompt-cache marks ([`Protocol::with_cache_marks`]).
    cache_marks: bool,
    /// The last offered tools' definitions, and the last context of a cached render as
    /// templates see it (its history empty), by a key of what they come from.
    pub(crate) definitions: Memo<Arc<Vec<Value>>>,
    pub(crate) header: Memo<minijinja::Value>,
}

impl AgentRenderer {
    /// Bind `agent` to `protocol` with `model`; compiles the body.
    pub fn new(
        agent: &Agent,
        protocol: Arc<dyn Protocol>,
        model: String,
        partials: Partials,
    ) -> Result<Self, AgentError> {
        let body =
            match &agent.body {
                Some(table) => Some(BodyTemplate::compile(table, partials).map_err(|err| {
                    AgentError::Body {
                        file: agent.sources[0].clone(),
                        key: err.key,
                        message: err.message,
                    }
                })?),
                None => None,
            };
        let endpoint = (agent.endpoint.as_deref()).map(|e| e.replace("${MODEL}", &model));
        let probe = probe_body(&*protocol, &[], &RequestOptions::default());
        let carries_model = matches!(probe, Ok(Value::Object(o)) if o.contains_key("model"));
        let protocol_marks = protocol.with_cache_marks().is_some();
        Ok(AgentRenderer {
            agent: agent.clone(),
            protocol,
            model,
            endpoint,
            body,
            carries_model,
            cache_marks: protocol_marks,
            definitions: Default::default(),
            header: Default::default(),
        })
    }

    /// The same renderer with every message of a split conversation rendered by its
    /// template, never by a native writer ([`crate::native_fragments`]): tests and
    /// benchmarks compare the two.
    pub fn without_native_fragments(mut self) -> Self {
        if let Some(body) = &mut self.body {
            body.without_native_fragments();
        }
        self
    }

    /// Whether requests come from the profile's `[body]` (else the default encoder).
    pub fn is_templated(&self) -> bool {
        self.body.is_some()
    }

    /// The tools a request of this agent offers: none without `enable_tools`.
    pub(crate) fn offered<'t>(&self, tools: &'t [ToolSpec]) -> &'t [ToolSpec] {
        if self.agent.enable_tools {
            tools
        } else {
            &[]
        }
    }

    /// The template context of a chat request.
    pub fn chat_context<'a>(
        &'a self,
        history: &'a History,
        tools: &[ToolSpec],
    ) -> TemplateContext<'a> {
        let definitions = tool_definitions(&*self.protocol, self.offered(tools));
        let mut ctx = TemplateContext::chat(history, definitions);
        ctx.model = Some(&self.model);
        ctx.cache = cache_settings(&self.agent);
        ctx
    }

    /// The body of a chat request from `history` offering `tools`.
    pub fn chat_body(
        &self,
        history: &History,
        tools: &[ToolSpec],
        options: &RequestOptions,
    ) -> Result<Vec<u8>, ErrorInfo> {
        match &self.body {
            Some(body) => {
                let ctx = self.chat_context(history, tools);
                let bytes = self.render(body, &ctx)?;
                self.complete(bytes, &ctx.tools, &ctx.cache, &options.extra)
            }
            None => {
                let request = ChatRequest {
                    model: &self.model,
                    history,
                    tools: self.offered(tools),
                    options,
                };
                body_bytes(&self.protocol.encode(&request)?)
            }
        }
    }

    /// The template context of a fill-in-the-middle request.
    pub fn fim_context<'a>(&'a self, request: &FimRequest<'a>) -> TemplateContext<'a> {
        TemplateContext {
            model: Some(&self.model),
            prefix: Some(request.prefix),
            suffix: Some(request.suffix),
            extra: request.extra,
            cache: cache_settings(&self.agent),
            ..TemplateContext::default()
        }
    }

    /// The body of a fill-in-the-middle request: the `[body]` rendered from
    /// [`AgentRenderer::fim_context`] with the model and `options.extra` added as for chat,
    /// else the protocol's encoder's with the resolved model.
    pub fn fim_body(&self, request: &FimRequest<'_>) -> Result<Vec<u8>, ErrorInfo> {
        match &self.body {
            Some(body) => {
                let ctx = self.fim_context(request);
                let bytes = self.render(body, &ctx)?;
                self.complete(bytes, &[], &ctx.cache, &request.options.extra)
            }
            None => {
                let request = FimRequest {
                    model: &self.model,
                    ..*request
                };
                body_bytes(&self.protocol.encode_fim(&request)?)
            }
        }
    }

    /// A rendered body with what the session adds (see the module doc): the offered
    /// `tools`' definitions and the profile's `cache` settings; then `extra`'s fields (they
    /// win).
    pub fn complete(
        &self,
        bytes: Vec<u8>,
        tools: &[Value],
        cache: &CacheSettings,
        extra: &serde_json::Map<String, Value>,
    ) -> Result<Vec<u8>, ErrorInfo> {
        let mark = |key: &str| self.cache_marks && cache.breakpoints.contains(&key);
        let cache_control = || {
            let mut control = serde_json::json!({"type": "ephemeral"});
            if let Some(ttl) = cache.ttl {
                control["ttl"] = ttl.into();
            }
            control
        };
        let Some(existing) = top_level_members(&bytes) else {
            // Not an object: refused, unless there is nothing to set.
            let nothing = !self.carries_model && tools.is_empty() && extra.is_empty();
            return if nothing {
                Ok(bytes)
            } else {
                Err(not_object())
            };
        };
        // A default the body has is not even built (the offered tools are large).
        let absent = |key: &str| !existing.iter().any(|(k, _, _)| k == key);
        let mut members = Vec::new();
        if self.carries_model && absent("model") {
            members.push(("model", Value::from(self.model.as_str()), When::Absent));
        }
        if !tools.is_empty() && absent("tools") {
            let mut tools = tools.to_vec();
            if let (true, Some(Value::Object(last))) = (mark("tools"), tools.last_mut()) {
                last.insert("cache_control".into(), cache_control());
            }
            members.push(("tools", Value::Array(tools), When::Absent));
        }
        if mark("system") {
            let system = (existing.iter()).find(|(key, _, _)| key == "system");
            let text = system.and_then(|(_, start, end)| {
                serde_json::from_slice::<String>(&bytes[*start..*end]).ok()
            });
            if let Some(text) = text {
                let block = serde_json::json!([{"type": "text", "text": text, "cache_control": cache_control()}]);
                members.push(("system", block, When::Always));
            }
        }
        members.extend(
            extra
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone(), When::Always)),
        );
        set_members_of(bytes, &existing, &members)
    }

    /// Render `body` for `ctx`.
    pub fn render(
        &self,
        body: &BodyTemplate,
        ctx: &TemplateContext<'_>,
    ) -> Result<Vec<u8>, ErrorInfo> {
        body.render(ctx).map_err(|err| self.render_error(err))
    }

    pub(crate) fn render_error(&self, err: RenderError) -> ErrorInfo {
        ErrorInfo::validation(format!(
            "{}: [body] {}: {}",
            self.agent.sources[0].display(),
            err.key,
            err.message
        ))
    }

    /// The compiled body, when the profile has one.
    pub fn body(&self) -> Option<&BodyTemplate> {
        self.body.as_ref()
    }
}

impl BodyRenderer for AgentRenderer {
    fn render(&self, request: &ChatRequest<'_>) -> Result<Vec<u8>, ErrorInfo> {
        self.chat_body(request.history, request.tools, request.options)
    }

    fn render_cached(
        &self,
        request: &ChatRequest<'_>,
        cache: &mut EncodeCache,
    ) -> Result<Vec<u8>, ErrorInfo> {
        self.chat_body_cached(request.history, request.tools, request.options, cache)
    }

    fn render_fim(&self, request: &FimRequest<'_>) -> Option<Result<Vec<u8>, ErrorInfo>> {
        Some(self.fim_body(request))
    }
}
