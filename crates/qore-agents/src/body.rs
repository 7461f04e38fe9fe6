//! The `[body]` engine: a TOML table that is the request body, some of whose strings are
//! Jinja templates.
//!
//! Promises, per value, recursively through tables and arrays:
//! - a string containing `{{` or `{%` is a template: rendered with minijinja, passed
//!   through [`strip_trailing_commas`], and spliced in as raw JSON (array, object, string,
//!   number…); a render that is empty or only whitespace drops the key (or, in an array,
//!   the element);
//! - any other string, number, boolean, table or array is a literal (a TOML date becomes
//!   its string);
//! - keys keep the profile's order; the output is the same bytes for the same input, so a
//!   continuation's prefix is byte-identical to the previous request's;
//! - a template that does not compile is refused by [`BodyTemplate::compile`]; one that
//!   fails to render or renders invalid JSON is a [`RenderError`] naming the key path and
//!   showing where the JSON broke — never a silently dropped field;
//! - [`BodyTemplate::render_cached`] gives the same bytes, the conversation of a body that
//!   splits rendered once per message into the caller's cache ([`crate::body_split`]).
//!
//! Functions and filters available to templates: `tojson` (compact JSON, no HTML
//! escaping), `filter_by_type(blocks, type)`, `filter_skip_role(messages, role)`,
//! Templates written for inja (the seed's profiles) carry over: `{% else if %}`,
//! `loop.is_last` and `loop.is_first` are read as minijinja's `elif`, `loop.last`,
//! `loop.first` ([`from_inja`]).
//!
//! `existsIn(object, key)`, `length(x)`, `fail(message)` (the render fails with it: for a
//! conversation the wire cannot carry); plus minijinja's builtins. `{% include %}`
//! resolves through [`Partials`].

use minijinja::{Environment, Error as JinjaError, Value as J};
use serde::Serialize;

use qore_client::EncodeCache;

pub use crate::body_env::environment;
use crate::body_split::{find, reads_history, Fragments, Frame, Split};
use crate::json_commas::strip_trailing_commas;
use crate::native_fragments::Dialect;
use crate::partials::Partials;
pub use crate::template_text::from_inja;

/// A compiled `[body]`.
#[derive(Debug)]
pub struct BodyTemplate {
    pub(crate) env: Environment<'static>,
    pub(crate) root: Node,
    /// The body key whose template renders per message ([`crate::body_split`]), if any.
    pub(crate) split: Option<(String, Split)>,
}

/// A render through a split: the context without history, the conversation, the cache.
pub(crate) struct SplitRun<'r> {
    pub ctx: &'r J,
    pub fragments: &'r dyn Fragments,
    pub cache: &'r mut EncodeCache,
    /// The split did not render: the whole template must, from the whole history.
    pub failed: bool,
    /// Its frame and where its text went in the output.
    pub placed: Option<(Frame, usize, usize)>,
}

#[derive(Debug)]
pub(crate) enum Node {
    /// Pre-serialized JSON.
    Literal(String),
    /// A template (its name in the environment) at `key`.
    Render {
        key: String,
    },
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
}

/// Why a body could not be rendered: the key path and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct RenderError {
    /// The `[body]` key whose template failed (dotted for nested tables).
    pub key: String,
    /// What went wrong, from minijinja or the JSON check.
    pub message: String,
}

impl BodyTemplate {
    /// Compile `body`; includes resolve through `partials` when rendered.
    pub fn compile(body: &toml::Table, partials: Partials) -> Result<Self, RenderError> {
        let mut env = environment(partials.clone());
        let mut templates = Vec::new();
        let root = node_of_table(body, "", &mut templates)?;
        // Only when no other template reads the history (the split's context has none).
        let split = (templates.iter()).find_map(|(key, source)| {
            let others = templates.iter().filter(|(k, _)| k != key);
            let others_ok = others.clone().all(|(_, s)| !reads_history(s, &partials));
            others_ok.then(|| Some((key.clone(), find(key, source, &partials, &mut env)?)))?
        });
        for (key, source) in templates {
            env.add_template_owned(key.clone(), source)
                .map_err(|err| RenderError {
                    key,
                    message: describe(&err),
                })?;
        }
        Ok(BodyTemplate { env, root, split })
    }

    /// Whether any field is a template (a body without one is a constant).
    pub fn has_templates(&self) -> bool {
        fn any(node: &Node) -> bool {
            match node {
                Node::Literal(_) => false,
                Node::Render { .. } => true,
                Node::Object(fields) => fields.iter().any(|(_, n)| any(n)),
                Node::Array(items) => items.iter().any(any),
            }
        }
        any(&self.root)
    }

    /// Render the body for `ctx` (serialized once, seen by templates as `ctx`).
    pub fn render(&self, ctx: &impl Serialize) -> Result<Vec<u8>, RenderError> {
        let ctx = minijinja::context! { ctx => J::from_serialize(ctx) };
        let mut out = Vec::with_capacity(4096);
        self.write(&self.root, &ctx, &mut None, &mut out)?;
        Ok(out)
    }

    /// Whether a template of this body renders per message ([`crate::body_split`]).
    pub fn splits(&self) -> bool {
        self.split.is_some()
    }

    /// The native writer of the split conversation's messages, when one is used
    /// ([`crate::native_fragments`]).
    pub fn native_dialect(&self) -> Option<Dialect> {
        self.split.as_ref().and_then(|(_, split)| split.native)
    }

    /// Render every message of a split conversation by its template, never natively (tests
    /// and benchmarks compare the two).
    pub fn without_native_fragments(&mut self) {
        if let Some((_, split)) = &mut self.split {
            split.native = None;
        }
    }

    /// Write `node`; `Ok(false)` when it rendered to nothing (the key is dropped).
    pub(crate) fn write(
        &self,
        node: &Node,
        ctx: &J,
        run: &mut Option<SplitRun<'_>>,
        out: &mut Vec<u8>,
    ) -> Result<bool, RenderError> {
        match node {
            Node::Literal(json) => out.extend_from_slice(json.as_bytes()),
            Node::Render { key } => {
                if let (Some((at, split)), Some(run)) = (&self.split, run.as_mut()) {
                    if at == key {
                        let start = out.len();
                        let frame = split.frame(&self.env, run.ctx);
                        let joined = frame.as_ref().and_then(|frame| {
                            let mut ctx = || run.ctx.clone();
                            let (fragments, cache) = (run.fragments, &mut *run.cache);
                            split.join(&self.env, frame, &mut ctx, fragments, cache, out)
                        });
                        let (Some(frame), Some(())) = (frame, joined) else {
                            out.truncate(start);
                            run.failed = true;
                            return Ok(true);
                        };
                        if out.len() == start {
                            return Ok(false);
                        }
                        run.placed = Some((frame, start, out.len()));
                        return Ok(true);
                    }
                }
                let fail = |message: String| RenderError {
                    key: key.clone(),
                    message,
                };
                let template = self.env.get_template(key).map_err(|e| fail(describe(&e)))?;
                let text = template.render(ctx).map_err(|e| fail(describe(&e)))?;
                let json = strip_trailing_commas(&text);
                let trimmed = json.trim();
                if trimmed.is_empty() {
                    return Ok(false);
                }
                if let Err(err) = serde_json::from_str::<serde::de::IgnoredAny>(trimmed) {
                    return Err(fail(invalid_json(trimmed, &err)));
                }
                out.extend_from_slice(trimmed.as_bytes());
            }
            Node::Object(fields) => {
                out.push(b'{');
                let mut first = true;
                for (name, child) in fields {
                    let mark = out.len();
                    if !first {
                        out.push(b',');
                    }
                    out.extend_from_slice(json(name).as_bytes());
                    out.push(b':');
                    if self.write(child, ctx, run, out)? {
                        first = false;
                    } else {
                        out.truncate(mark);
                    }
                }
                out.push(b'}');
            }
            Node::Array(items) => {
                out.push(b'[');
                let mut first = true;
                for child in items {
                    let mark = out.len();
                    if !first {
                        out.push(b',');
                    }
                    if self.write(child, ctx, run, out)? {
                        first = false;
                    } else {
                        out.truncate(mark);
                    }
                }
                out.push(b']');
            }
        }
        Ok(true)
    }
}

fn is_template(s: &str) -> bool {
    s.contains("{{") || s.contains("{%")
}

fn node_of_table(
    table: &toml::Table,
    path: &str,
    templates: &mut Vec<(String, String)>,
) -> Result<Node, RenderError> {
    let mut fields = Vec::with_capacity(table.len());
    for (name, value) in table {
        let key = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}.{name}")
        };
        fields.push((name.clone(), node_of(value, &key, templates)?));
    }
    Ok(Node::Object(fields))
}

fn node_of(
    value: &toml::Value,
    key: &str,
    templates: &mut Vec<(String, String)>,
) -> Result<Node, RenderError> {
    Ok(match value {
        toml::Value::String(s) if is_template(s) => {
            templates.push((key.to_owned(), from_inja(s)));
            Node::Render {
                key: key.to_owned(),
            }
        }
        toml::Value::Table(table) => node_of_table(table, key, templates)?,
        toml::Value::Array(items) => Node::Array(
            (items.iter().enumerate())
                .map(|(i, v)| node_of(v, &format!("{key}[{i}]"), templates))
                .collect::<Result<_, _>>()?,
        ),
        toml::Value::Datetime(d) => Node::Literal(json(&d.to_string())),
        toml::Value::String(s) => Node::Literal(json(s)),
        toml::Value::Integer(n) => Node::Literal(n.to_string()),
        toml::Value::Float(f) => Node::Literal(match serde_json::Number::from_f64(*f) {
            Some(n) => n.to_string(),
            None => {
                return Err(RenderError {
                    key: key.to_owned(),
                    message: format!("{f} is not a JSON number"),
                })
            }
        }),
        toml::Value::Boolean(b) => Node::Literal(b.to_string()),
    })
}

/// `s` as a JSON string (serializing a `&str` cannot fail).
fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A minijinja error with its cause chain and template line.
fn describe(err: &JinjaError) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

fn invalid_json(text: &str, err: &serde_json::Error) -> String {
    let line = text.lines().nth(err.line().saturating_sub(1)).unwrap_or("");
    let at = err.column().saturating_sub(1).min(line.len());
    let mut start = at.saturating_sub(60);
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + 20).min(line.len());
    while !line.is_char_boundary(end) {
        end += 1;
    }
    format!(
        "the rendered text is not valid JSON ({err}), near: {}",
        &line[start..end]
    )
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
