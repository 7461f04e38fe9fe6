//! The server's settings, from `initializationOptions` and `workspace/didChangeConfiguration`.
//!
//! Schema (the `qore` section, or the object itself; every key optional):
//! `{"enabled": bool, "completion": {"agent": string|null, "prefixLines": n, "suffixLines": n,
//! "mode": "multi"|"single", "debounceMs": n, "openDocuments": bool, "openDocumentsBudget": n},
//! "refactor": {"agent": string|null, "actions": [{"title": s, "instruction": s}, ...]}}`.
//!
//! Promises:
//! - [`Settings::apply`] merges what a message carries over the current settings: a key left
//!   out keeps its value, an unknown key is ignored, a bad value keeps the old one and gives a
//!   warning naming the key (`completion.mode`); a `null` message changes nothing;
//! - an agent of `null` (or absent) means "the roster, routed by file";
//! - refactor actions default to [`default_actions`], or to `[[refactor.actions]]` of the
//!   config dir's `config.toml` ([`actions_from_config`], through qore-config's loader);
//!   settings from the editor win.

use std::path::Path;

use qore_config::ConfigFile;
use qore_session::completion::clean::Mode;
use serde_json::{Map, Value};

/// One quick-refactor code action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    pub title: String,
    pub instruction: String,
}

/// Completion settings.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionSettings {
    pub agent: Option<String>,
    pub prefix_lines: usize,
    pub suffix_lines: usize,
    pub mode: Mode,
    pub debounce_ms: u64,
    pub open_documents: bool,
    /// Bytes of other open documents sent along, at most.
    pub open_documents_budget: usize,
}

/// Quick-refactor settings.
#[derive(Debug, Clone, PartialEq)]
pub struct RefactorSettings {
    pub agent: Option<String>,
    pub actions: Vec<Action>,
}

/// Everything the editor can set.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub enabled: bool,
    pub completion: CompletionSettings,
    pub refactor: RefactorSettings,
}

/// "Refactor", "Add documentation", "Fix".
pub fn default_actions() -> Vec<Action> {
    let action = |title: &str, instruction: &str| Action {
        title: title.into(),
        instruction: instruction.into(),
    };
    vec![
        action(
            "Refactor",
            "Refactor this code to be clearer and simpler, keeping what it does.",
        ),
        action(
            "Add documentation",
            "Add documentation comments in the language's usual style; change no code.",
        ),
        action(
            "Fix",
            "Fix the bugs in this code, changing as little as possible.",
        ),
    ]
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            enabled: true,
            completion: CompletionSettings {
                agent: None,
                prefix_lines: 50,
                suffix_lines: 30,
                mode: Mode::Multi,
                debounce_ms: 150,
                open_documents: true,
                open_documents_budget: 8192,
            },
            refactor: RefactorSettings {
                agent: None,
                actions: default_actions(),
            },
        }
    }
}

/// `[[refactor.actions]]` (title, instruction) of `<dir>/config.toml`, read through
/// qore-config's loader: `Ok(None)` when the file or the table is absent, `Err` naming the
/// file (and the line, when known) when it cannot be used.
pub fn actions_from_config(dir: &Path) -> Result<Option<Vec<Action>>, String> {
    let Some(file) = ConfigFile::read(dir).map_err(|err| err.to_string())? else {
        return Ok(None);
    };
    let refactor = file
        .section::<Value>("refactor")
        .map_err(|err| err.to_string())?;
    let Some(actions) = refactor.as_ref().and_then(|r| r.get("actions")) else {
        return Ok(None);
    };
    parse_actions(actions).map(Some).map_err(|why| {
        file.invalid("refactor", format!("refactor.actions {why}"))
            .to_string()
    })
}

/// Actions from a JSON array of `{title, instruction}`.
fn parse_actions(value: &Value) -> Result<Vec<Action>, &'static str> {
    let items = value.as_array().ok_or("is not a list")?;
    let action = |item: &Value| {
        let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(Action {
            title: text("title").filter(|t| !t.trim().is_empty())?,
            instruction: text("instruction").filter(|t| !t.trim().is_empty())?,
        })
    };
    items
        .iter()
        .map(action)
        .collect::<Option<Vec<_>>>()
        .ok_or("needs a non-empty title and instruction in each entry")
}

/// Reads keys of one JSON object, collecting a warning per bad value.
struct Reader<'a> {
    object: &'a Map<String, Value>,
    prefix: &'static str,
    warnings: &'a mut Vec<String>,
}

impl Reader<'_> {
    /// Set `slot` from key `key` through `parse`; `expected` names the valid values.
    fn set<T>(
        &mut self,
        key: &str,
        slot: &mut T,
        expected: &str,
        parse: impl Fn(&Value) -> Option<T>,
    ) {
        if let Some(value) = self.object.get(key) {
            match parse(value) {
                Some(parsed) => *slot = parsed,
                None => self.warnings.push(format!(
                    "qore: setting \"{}{key}\" ignored: expected {expected}, got {value}",
                    self.prefix
                )),
            }
        }
    }
}

fn agent(value: &Value) -> Option<Option<String>> {
    match value {
        Value::Null => Some(None),
        Value::String(s) if s.trim().is_empty() => Some(None),
        Value::String(s) => Some(Some(s.clone())),
        _ => None,
    }
}

fn count(value: &Value) -> Option<usize> {
    value.as_u64().and_then(|n| usize::try_from(n).ok())
}

fn mode(value: &Value) -> Option<Mode> {
    match value.as_str()? {
        "multi" => Some(Mode::Multi),
        "single" => Some(Mode::Single),
        _ => None,
    }
}

impl Settings {
    /// Merge `message` (see the module doc); the warnings, one line each.
    pub fn apply(&mut self, message: &Value) -> Vec<String> {
        let mut warnings = Vec::new();
        let root = match message.get("qore") {
            Some(section) if section.is_object() => section,
            _ => message,
        };
        let Some(object) = root.as_object() else {
            if !root.is_null() {
                warnings.push(format!(
                    "qore: settings ignored: expected an object, got {root}"
                ));
            }
            return warnings;
        };
        let mut top = Reader {
            object,
            prefix: "",
            warnings: &mut warnings,
        };
        top.set(
            "enabled",
            &mut self.enabled,
            "true or false",
            Value::as_bool,
        );
        let mut sections = Vec::new();
        for key in ["completion", "refactor"] {
            match object.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::Object(section)) => sections.push((key, section)),
                Some(other) => top.warnings.push(format!(
                    "qore: setting \"{key}\" ignored: expected an object, got {other}"
                )),
            }
        }
        for (key, section) in sections {
            let mut reader = Reader {
                object: section,
                prefix: if key == "completion" {
                    "completion."
                } else {
                    "refactor."
                },
                warnings: &mut warnings,
            };
            match key {
                "completion" => self.completion.read(&mut reader),
                _ => self.refactor.read(&mut reader),
            }
        }
        warnings
    }
}

impl CompletionSettings {
    fn read(&mut self, r: &mut Reader<'_>) {
        let number = "a whole number";
        r.set("agent", &mut self.agent, "a string or null", agent);
        r.set("prefixLines", &mut self.prefix_lines, number, count);
        r.set("suffixLines", &mut self.suffix_lines, number, count);
        r.set("mode", &mut self.mode, "\"multi\" or \"single\"", mode);
        r.set("debounceMs", &mut self.debounce_ms, number, Value::as_u64);
        let open = &mut self.open_documents;
        r.set("openDocuments", open, "true or false", Value::as_bool);
        let budget = &mut self.open_documents_budget;
        r.set("openDocumentsBudget", budget, number, count);
    }
}

impl RefactorSettings {
    fn read(&mut self, r: &mut Reader<'_>) {
        r.set("agent", &mut self.agent, "a string or null", agent);
        let expected = "a list of {\"title\", \"instruction\"}";
        r.set("actions", &mut self.actions, expected, |v| {
            parse_actions(v).ok()
        });
    }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
