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
//!   showing where the JSON broke — never a silently dropped field.
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

use std::sync::Arc;

use minijinja::{Environment, Error as JinjaError, ErrorKind, UndefinedBehavior, Value as J};
use serde::Serialize;

use crate::json_commas::strip_trailing_commas;
use crate::partials::Partials;

/// A compiled `[body]`.
#[derive(Debug)]
pub struct BodyTemplate {
    env: Environment<'static>,
    root: Node,
}

#[derive(Debug)]
enum Node {
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
    pub key: String,
    pub message: String,
}

impl BodyTemplate {
    /// Compile `body`; includes resolve through `partials` when rendered.
    pub fn compile(body: &toml::Table, partials: Partials) -> Result<Self, RenderError> {
        let mut env = environment(partials);
        let mut templates = Vec::new();
        let root = node_of_table(body, "", &mut templates)?;
        for (key, source) in templates {
            env.add_template_owned(key.clone(), source)
                .map_err(|err| RenderError {
                    key,
                    message: describe(&err),
                })?;
        }
        Ok(BodyTemplate { env, root })
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
        let mut out = String::with_capacity(4096);
        self.write(&self.root, &ctx, &mut out)?;
        Ok(out.into_bytes())
    }

    /// Write `node`; `Ok(false)` when it rendered to nothing (the key is dropped).
    fn write(&self, node: &Node, ctx: &J, out: &mut String) -> Result<bool, RenderError> {
        match node {
            Node::Literal(json) => out.push_str(json),
            Node::Render { key } => {
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
                out.push_str(trimmed);
            }
            Node::Object(fields) => {
                out.push('{');
                let mut first = true;
                for (name, child) in fields {
                    let mark = out.len();
                    if !first {
                        out.push(',');
                    }
                    out.push_str(&json(name));
                    out.push(':');
                    if self.write(child, ctx, out)? {
                        first = false;
                    } else {
                        out.truncate(mark);
                    }
                }
                out.push('}');
            }
            Node::Array(items) => {
                out.push('[');
                let mut first = true;
                for child in items {
                    let mark = out.len();
                    if !first {
                        out.push(',');
                    }
                    if self.write(child, ctx, out)? {
                        first = false;
                    } else {
                        out.truncate(mark);
                    }
                }
                out.push(']');
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

/// The inja spellings the seed's profiles use, in minijinja's: `{% else if` is `{% elif`,
/// `loop.is_last`/`loop.is_first` are `loop.last`/`loop.first`.
pub fn from_inja(template: &str) -> String {
    if !template.contains("else if") && !template.contains("loop.is_") {
        return template.to_owned();
    }
    let mut out = template
        .replace("loop.is_last", "loop.last")
        .replace("loop.is_first", "loop.first");
    for open in ["{%", "{%-", "{%+"] {
        for gap in [" ", ""] {
            out = out.replace(
                &format!("{open}{gap}else if "),
                &format!("{open}{gap}elif "),
            );
        }
    }
    out
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

/// The environment `[body]` templates render in: includes through `partials`, the
/// functions and filters of the module doc, semi-strict undefined values.
pub fn environment(partials: Partials) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
    env.set_keep_trailing_newline(false);
    let partials = Arc::new(partials);
    env.set_loader(move |name| match partials.load(name) {
        Ok(text) => Ok(Some(from_inja(&text))),
        // Not `TemplateNotFound`: minijinja replaces that one's message with its own.
        Err(message) => Err(JinjaError::new(ErrorKind::InvalidOperation, message)),
    });
    env.add_function("tojson", tojson);
    env.add_filter("tojson", tojson);
    env.add_function("filter_by_type", filter_by_type);
    env.add_function("filter_skip_role", filter_skip_role);
    env.add_function("existsIn", exists_in);
    env.add_function("length", length);
    env.add_function("fail", fail);
    env
}

/// `fail(message)`: refuse to render (a conversation the wire cannot carry).
fn fail(message: &str) -> Result<J, JinjaError> {
    Err(JinjaError::new(
        ErrorKind::InvalidOperation,
        message.to_owned(),
    ))
}

fn tojson(value: J) -> Result<J, JinjaError> {
    serde_json::to_string(&value)
        .map(J::from_safe_string)
        .map_err(|err| JinjaError::new(ErrorKind::InvalidOperation, err.to_string()))
}

fn filter_by_type(items: J, kind: &str) -> Result<J, JinjaError> {
    filter_items(items, |item| attr_is(item, "type", kind))
}

fn filter_skip_role(items: J, role: &str) -> Result<J, JinjaError> {
    filter_items(items, |item| !attr_is(item, "role", role))
}

fn attr_is(item: &J, attr: &str, expected: &str) -> bool {
    item.get_attr(attr)
        .ok()
        .is_some_and(|v| v.as_str() == Some(expected))
}

fn filter_items(items: J, keep: impl Fn(&J) -> bool) -> Result<J, JinjaError> {
    if items.is_undefined() || items.is_none() {
        return Ok(J::from(Vec::<J>::new()));
    }
    let kept: Vec<J> = items.try_iter()?.filter(|item| keep(item)).collect();
    Ok(J::from(kept))
}

fn exists_in(object: J, key: &str) -> bool {
    object.get_attr(key).ok().is_some_and(|v| !v.is_undefined())
}

fn length(value: J) -> Result<usize, JinjaError> {
    if value.is_undefined() || value.is_none() {
        return Ok(0);
    }
    value.len().ok_or_else(|| {
        JinjaError::new(
            ErrorKind::InvalidOperation,
            format!("length() of a {} value", value.kind()),
        )
    })
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
