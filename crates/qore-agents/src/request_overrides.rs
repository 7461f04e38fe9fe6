//! What a front end asks of one run beside the conversation (`--max-tokens`,
//! `--temperature`, `--no-stream` on the command line; an editor's or a chat's settings),
//! written into an agent's `[body]`.
//!
//! Promises: the request carries each override under the key its wire uses (the key the
//! `[body]` already has, else the one the protocol's encoder writes: `max_tokens`,
//! `max_completion_tokens`, `max_output_tokens`, `generationConfig.maxOutputTokens`,
//! `options.num_predict`, …), or [`apply`] refuses with an error saying why — an override is
//! never dropped.

use qore_client::{Protocol, RequestOptions};
use qore_core::ErrorInfo;
use serde_json::Value;

use crate::partials::Partials;
use crate::render::{probe_body, AgentRenderer};

/// What the run's flags set on the request; `None`: the profile's choice.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RequestOverrides {
    /// `--max-tokens`: the output token limit.
    pub max_tokens: Option<u32>,
    /// `--temperature`: the sampling temperature.
    pub temperature: Option<f64>,
    /// `--no-stream` (or a caller's `stream`): whether the answer streams.
    pub stream: Option<bool>,
}

/// Where bodies keep the answer's token cap, whatever their wire.
const MAX_TOKEN_KEYS: &[&[&str]] = &[
    &["max_tokens"],
    &["max_completion_tokens"],
    &["max_output_tokens"],
    &["n_predict"],
    &["generationConfig", "maxOutputTokens"],
    &["options", "num_predict"],
];

/// Whether `body` sets the answer's token cap itself (under any of the wires' keys).
pub fn caps_tokens(body: &toml::Table) -> bool {
    MAX_TOKEN_KEYS
        .iter()
        .any(|path| lookup(body, path).is_some())
}

/// A change to a body: the key path and its new value (`None`: remove the key).
type Edit = (Vec<String>, Option<Value>);

/// `renderer` with `overrides` applied, or `None` when nothing in its body changes (no
/// override, or no `[body]`: the protocol's encoder then reads the request options).
pub fn apply(
    renderer: &AgentRenderer,
    overrides: &RequestOverrides,
    partials: &Partials,
) -> Result<Option<AgentRenderer>, ErrorInfo> {
    let name = &renderer.agent.name;
    let protocol = &*renderer.protocol;
    if let (Some(stream), Some(endpoint)) = (overrides.stream, &renderer.endpoint) {
        if renderer.endpoint_decides_streaming() && stream != renderer.streams() {
            return Err(ErrorInfo::config(format!(
                "--no-stream: agent {name:?} sets its endpoint ({endpoint}), which decides \
                 whether the answer streams; use an agent without `endpoint`"
            )));
        }
    }
    let Some(body) = &renderer.agent.body else {
        return Ok(None);
    };
    let mut edits: Vec<Edit> = Vec::new();
    let with = |set: &dyn Fn(&mut RequestOptions)| {
        let mut options = RequestOptions::default();
        set(&mut options);
        options
    };
    if let Some(max) = overrides.max_tokens {
        let present: Vec<Edit> = (MAX_TOKEN_KEYS.iter())
            .filter(|path| lookup(body, path).is_some())
            .map(|path| {
                (
                    path.iter().map(|k| k.to_string()).collect(),
                    Some(max.into()),
                )
            })
            .collect();
        edits.extend(match present.is_empty() {
            true => wire_edits(
                protocol,
                &with(&|_| ()),
                &with(&|o| o.max_tokens = Some(max)),
            )?,
            false => present,
        });
    }
    if let Some(temperature) = overrides.temperature {
        let after = with(&|o| o.temperature = Some(temperature));
        edits.extend(wire_edits(protocol, &with(&|_| ()), &after)?);
    }
    if let Some(stream) = overrides.stream {
        let before = with(&|o| o.stream = !stream);
        edits.extend(wire_edits(
            protocol,
            &before,
            &with(&|o| o.stream = stream),
        )?);
    }
    if edits.is_empty() {
        return Ok(None);
    }
    let mut agent = renderer.agent.clone();
    let body = agent.body.get_or_insert_with(toml::Table::new);
    for (path, value) in &edits {
        edit(body, path, value.as_ref()).map_err(|key| {
            ErrorInfo::config(format!(
                "agent {name:?}: its [body] builds `{key}` with a template, so the run's \
                 flags cannot be written into it; set them in the profile instead"
            ))
        })?;
    }
    let renderer = AgentRenderer::new(
        &agent,
        renderer.protocol.clone(),
        renderer.model.clone(),
        partials.clone(),
    )
    .map_err(|err| ErrorInfo::config(err.to_string()))?;
    Ok(Some(renderer))
}

/// The edits that turn the body `protocol`'s encoder writes with `before` into the one it
/// writes with `after`.
fn wire_edits(
    protocol: &dyn Protocol,
    before: &RequestOptions,
    after: &RequestOptions,
) -> Result<Vec<Edit>, ErrorInfo> {
    let encode = |options: &RequestOptions| probe_body(protocol, &[], options);
    let mut edits = Vec::new();
    diff(
        &encode(before)?,
        &encode(after)?,
        &mut Vec::new(),
        &mut edits,
    );
    Ok(edits)
}

/// The leaves where `after` differs from `before`, with `after`'s values (a table only
/// `after` has is walked too: its leaves are edits, so a body's own table is kept).
fn diff(before: &Value, after: &Value, path: &mut Vec<String>, out: &mut Vec<Edit>) {
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                path.push(key.clone());
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => diff(x, y, path, out),
                    (None, Some(y @ Value::Object(_))) => {
                        diff(&Value::Object(Default::default()), y, path, out);
                    }
                    (_, y) => out.push((path.clone(), y.cloned())),
                }
                path.pop();
            }
        }
        _ if before != after => out.push((path.clone(), Some(after.clone()))),
        _ => {}
    }
}

fn lookup<'a>(table: &'a toml::Table, path: &[&str]) -> Option<&'a toml::Value> {
    let (last, parents) = path.split_last()?;
    let mut table = table;
    for key in parents {
        table = table.get(*key)?.as_table()?;
    }
    table.get(*last)
}

/// Set (or remove) `path` in `table`, creating tables on the way; `Err(key)` when a key on
/// the way is not a table (a template builds it).
fn edit(table: &mut toml::Table, path: &[String], value: Option<&Value>) -> Result<(), String> {
    let Some((last, parents)) = path.split_last() else {
        return Ok(());
    };
    let mut table = table;
    for key in parents {
        let entry = table
            .entry(key.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = entry.as_table_mut().ok_or_else(|| key.clone())?;
    }
    match value.map(toml::Value::try_from) {
        Some(Ok(value)) => {
            table.insert(last.clone(), value);
        }
        Some(Err(_)) => return Err(last.clone()),
        None => {
            table.remove(last);
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "request_overrides_tests.rs"]
mod tests;
