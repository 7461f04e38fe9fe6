//! An agent ready to send: its protocol, its resolved model and endpoint, and its compiled
//! `[body]`. [`AgentRenderer::chat_body`] renders a chat request from history (the first
//! request and every tool-loop continuation alike), or uses the protocol's default encoder
//! when the profile has no `[body]`.
//!
//! Promises: `${MODEL}` in the endpoint is the resolved model; the same history and tools
//! give the same bytes; a render failure is an `ErrorInfo` of category `Validation` naming
//! the profile file and body key, and nothing is sent.

use std::sync::Arc;

use qore_client::{BodyRenderer, ChatRequest, Protocol, RequestOptions};
use qore_core::{ErrorInfo, History, Message, ToolSpec};
use serde_json::Value;

use crate::body::BodyTemplate;
use crate::catalog::Agent;
use crate::context::{CacheSettings, TemplateContext};
use crate::error::AgentError;
use crate::partials::Partials;
use crate::profile::{CacheBreakpoint, CacheTtl};

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

    /// Whether the answer streams: the body's literal `stream` when it has one, else not for
    /// an endpoint naming Gemini's whole-answer `:generateContent`, else yes.
    pub fn streams(&self) -> bool {
        match self.agent.body.as_ref().and_then(|b| b.get("stream")) {
            Some(toml::Value::Boolean(stream)) => *stream,
            _ => !self
                .endpoint
                .as_deref()
                .is_some_and(|e| e.contains(":generateContent")),
        }
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
                let bytes = self.render(body, &self.chat_context(history, tools))?;
                with_extra(bytes, &options.extra)
            }
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

impl BodyRenderer for AgentRenderer {
    fn render(&self, request: &ChatRequest<'_>) -> Result<Vec<u8>, ErrorInfo> {
        self.chat_body(request.history, request.tools, request.options)
    }
}

/// `body` with `extra`'s fields at the top level (they win), edited as text so every byte
/// before an edit stays as it was (the conversation prefix stays byte-identical): a field
/// the body has gets its value replaced in place, the others are appended before the
/// closing brace.
fn with_extra(body: Vec<u8>, extra: &serde_json::Map<String, Value>) -> Result<Vec<u8>, ErrorInfo> {
    if extra.is_empty() {
        return Ok(body);
    }
    let not_object = || ErrorInfo::validation("the rendered body is not a JSON object");
    let members = top_level_members(&body).ok_or_else(not_object)?;
    let close = body
        .iter()
        .rposition(|b| *b == b'}')
        .ok_or_else(not_object)?;
    let json = |v: &Value| serde_json::to_vec(v).unwrap_or_default();
    // Replacements, in body order, then appends.
    let mut edits: Vec<(usize, usize, Vec<u8>)> = Vec::new();
    let mut appended = Vec::new();
    for (key, value) in extra {
        match members.iter().find(|(k, _, _)| k == key) {
            Some((_, start, end)) => edits.push((*start, *end, json(value))),
            None => {
                if !members.is_empty() || !appended.is_empty() {
                    appended.push(b',');
                }
                appended.extend(json(&Value::String(key.clone())));
                appended.push(b':');
                appended.extend(json(value));
            }
        }
    }
    edits.push((close, close, appended));
    edits.sort_by_key(|(start, _, _)| *start);
    let mut out = Vec::with_capacity(body.len() + 64);
    let mut last = 0;
    for (start, end, text) in edits {
        out.extend_from_slice(&body[last..start]);
        out.extend(text);
        last = end;
    }
    out.extend_from_slice(&body[last..]);
    Ok(out)
}

/// The members of a JSON object: (key, value start, value end), or `None` when `body` is
/// not an object. String-aware; values are skipped by bracket depth.
fn top_level_members(body: &[u8]) -> Option<Vec<(String, usize, usize)>> {
    let skip_ws = |mut i: usize| {
        while i < body.len() && body[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let string_end = |start: usize| {
        let mut i = start + 1;
        while i < body.len() {
            match body[i] {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    };
    let mut i = skip_ws(0);
    if body.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(i + 1);
    let mut members = Vec::new();
    while body.get(i) == Some(&b'"') {
        let key_end = string_end(i)?;
        let key: String = serde_json::from_slice(&body[i..key_end]).ok()?;
        i = skip_ws(key_end);
        if body.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_ws(i + 1);
        let mut depth = 0usize;
        let mut j = start;
        while j < body.len() {
            match body[j] {
                b'"' => {
                    j = string_end(j)?;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => break,
                b'}' | b']' => depth -= 1,
                b',' if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        let mut end = j;
        while end > start && body[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        members.push((key, start, end));
        i = skip_ws(j);
        if body.get(i) == Some(&b',') {
            i = skip_ws(i + 1);
        }
    }
    (body.get(i) == Some(&b'}')).then_some(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_follows_the_body_then_the_endpoint() {
        use crate::profile::ProfileFile;
        use crate::Catalog;
        let variant =
            |text: &str| ProfileFile::parse(std::path::Path::new("v.toml"), text).unwrap();
        let catalog = Catalog::with_user_files(vec![
            variant("name = \"whole\"\nextends = \"gemini-chat\"\nendpoint = \"/v1beta/models/${MODEL}:generateContent\"\n"),
            variant("name = \"quiet\"\nextends = \"openai-chat\"\n[body]\nstream = false\n"),
        ]);
        let streams = |name: &str| {
            let agent = catalog.get(name).unwrap();
            let protocol = qore_client::protocols::by_name("gemini").unwrap();
            AgentRenderer::new(agent, protocol, "m".into(), Partials::default())
                .unwrap()
                .streams()
        };
        assert!(streams("gemini-chat"));
        assert!(!streams("whole"));
        assert!(streams("openai-chat"));
        assert!(!streams("quiet"));
    }

    #[test]
    fn extra_fields_are_appended_without_touching_the_rest() {
        let mut extra = serde_json::Map::new();
        extra.insert("tool_choice".into(), "none".into());
        let out = with_extra(br#"{"b":1,"a":[2]}"#.to_vec(), &extra).unwrap();
        assert_eq!(out, br#"{"b":1,"a":[2],"tool_choice":"none"}"#);
        let out = with_extra(b"{ }".to_vec(), &extra).unwrap();
        assert_eq!(out, br#"{ "tool_choice":"none"}"#);
        let body = br#"{"m": [{"a": "}\"],"}], "tool_choice" : "auto" ,"x":1}"#;
        let out = with_extra(body.to_vec(), &extra).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"m": [{"a": "}\"],"}], "tool_choice" : "none" ,"x":1}"#
        );
        extra.insert("y".into(), serde_json::json!([1]));
        let out = with_extra(br#"{"tool_choice": {"type": "auto"}}"#.to_vec(), &extra).unwrap();
        assert_eq!(out, br#"{"tool_choice": "none","y":[1]}"#);
        assert!(with_extra(b"[1]".to_vec(), &extra).is_err());
    }
}
