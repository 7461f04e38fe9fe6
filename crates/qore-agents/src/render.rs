//! An agent ready to send: its protocol, its resolved model and endpoint, and its compiled
//! `[body]`. [`AgentRenderer::chat_body`] renders a chat request from history (the first
//! request and every tool-loop continuation alike), or uses the protocol's default encoder
//! when the profile has no `[body]`.
//!
//! Promises: `${MODEL}` in the endpoint is the resolved model; the same history and tools
//! give the same bytes; a render failure is an `ErrorInfo` of category `Validation` naming
//! the profile file and body key, and nothing is sent.

use std::sync::Arc;

use qore_client::{ChatRequest, Protocol, RequestOptions};
use qore_core::{ErrorInfo, History, Message, ToolSpec};
use serde_json::Value;

use crate::body::BodyTemplate;
use crate::catalog::Agent;
use crate::context::TemplateContext;
use crate::error::AgentError;
use crate::partials::Partials;

/// Tool definitions in `protocol`'s dialect: what its encoder sends as `tools`.
pub fn tool_definitions(protocol: &dyn Protocol, tools: &[ToolSpec]) -> Vec<Value> {
    if tools.is_empty() {
        return Vec::new();
    }
    let history = History::from(vec![Message::user("-")]);
    let request = ChatRequest {
        model: "m",
        history: &history,
        tools,
        options: &RequestOptions::default(),
    };
    match protocol.encode(&request) {
        Ok(Value::Object(mut body)) => match body.remove("tools") {
            Some(Value::Array(defs)) => defs,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// A concrete agent bound to its protocol and model.
pub struct AgentRenderer {
    pub agent: Agent,
    pub protocol: Arc<dyn Protocol>,
    pub model: String,
    /// The request path or URL, `${MODEL}` filled in; `None`: the protocol's own.
    pub endpoint: Option<String>,
    body: Option<BodyTemplate>,
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
        Ok(AgentRenderer {
            agent: agent.clone(),
            protocol,
            model,
            endpoint,
            body,
        })
    }

    /// Whether requests come from the profile's `[body]` (else the default encoder).
    pub fn is_templated(&self) -> bool {
        self.body.is_some()
    }

    /// The template context of a chat request.
    pub fn chat_context<'a>(
        &'a self,
        history: &'a History,
        tools: &[ToolSpec],
    ) -> TemplateContext<'a> {
        let mut ctx = TemplateContext::chat(history, tool_definitions(&*self.protocol, tools));
        ctx.model = Some(&self.model);
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
            Some(body) => self.render(body, &self.chat_context(history, tools)),
            None => {
                let request = ChatRequest {
                    model: &self.model,
                    history,
                    tools,
                    options,
                };
                let body = self.protocol.encode(&request)?;
                serde_json::to_vec(&body).map_err(|err| {
                    ErrorInfo::validation(format!("cannot serialize the request: {err}"))
                })
            }
        }
    }

    /// Render `body` for `ctx`.
    pub fn render(
        &self,
        body: &BodyTemplate,
        ctx: &TemplateContext<'_>,
    ) -> Result<Vec<u8>, ErrorInfo> {
        body.render(ctx).map_err(|err| {
            ErrorInfo::validation(format!(
                "{}: [body] {}: {}",
                self.agent.sources[0].display(),
                err.key,
                err.message
            ))
        })
    }

    /// The compiled body, when the profile has one.
    pub fn body(&self) -> Option<&BodyTemplate> {
        self.body.as_ref()
    }
}
