//! The environment `[body]` templates render in: includes through [`Partials`] (inja
//! spellings read as minijinja's), semi-strict undefined values, and the functions and
//! filters of [`crate::body`]'s module doc.

use std::sync::Arc;

use minijinja::{Environment, Error as JinjaError, ErrorKind, UndefinedBehavior, Value as J};

use crate::partials::Partials;
use crate::template_text::from_inja;

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
