//! One profile file: parsed, typed field by field, its unknown keys found.
//!
//! Promises:
//! - invalid TOML and a field of the wrong type are [`AgentError::Toml`] with the file, line
//!   and column;
//! - a key qore does not know (top level or in `[match]`) is a [`Warning`] with its line and,
//!   when a known key is close, the suggestion ("typo? did you mean `enable_tools`?"); the
//!   profile still loads; `[body]` keys are the provider's and are never warned about;
//! - the seed's `provider_instance` is read as `provider` (so a child's either one replaces
//!   its parent's); a file setting both is an error at the second one's line;
//! - the raw table is kept for `extends` (deep merge happens on tables, see
//!   [`crate::catalog`]), with the line of every top-level key, so later errors can point
//!   at the line that set a field.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use crate::error::line_and_column;
use crate::error::{AgentError, Warning};

/// The top-level keys of a profile.
pub const KNOWN_KEYS: &[&str] = &[
    "schema_version",
    "name",
    "description",
    "provider",
    "provider_instance",
    "model",
    "endpoint",
    "system_prompt",
    "tags",
    "enable_tools",
    "tool_protocol",
    "enable_thinking",
    "cache_prompt",
    "cache_ttl",
    "cache_breakpoints",
    "context_window",
    "pricing",
    "fallbacks",
    "extends",
    "abstract",
    "hidden",
    "match",
    "body",
    "sandbox",
    "tools",
];

/// The keys of `[match]`.
pub const MATCH_KEYS: &[&str] = &["file_patterns", "path_patterns", "project_names"];

/// The fields of one file, each optional (a child sets only what it changes). Used to
/// type-check every file on its own, so a wrong type is reported in the file that has it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Fields {
    /// `schema_version`: the profile format's version (1).
    pub schema_version: Option<u32>,
    /// `name`: what the agent is selected by (default: the file's stem).
    pub name: Option<String>,
    /// `description`: one line saying what the agent is for.
    pub description: Option<String>,
    /// `provider`: the provider instance the agent talks to.
    pub provider: Option<String>,
    /// The seed's spelling of `provider` (moved there by [`ProfileFile::parse`]).
    pub provider_instance: Option<String>,
    /// `model`: the model asked when the request names none.
    pub model: Option<String>,
    /// `endpoint`: the request path or URL overriding the protocol's own.
    pub endpoint: Option<String>,
    /// `system_prompt`: the system prompt template.
    pub system_prompt: Option<String>,
    /// `tags`: what pipelines and listings select the agent by.
    pub tags: Option<Vec<String>>,
    /// `enable_tools`: whether tools are offered to the model.
    pub enable_tools: Option<bool>,
    /// `tool_protocol`: `native` or `text`.
    pub tool_protocol: Option<ToolProtocolSetting>,
    /// `enable_thinking`: whether the model is asked to reason first.
    pub enable_thinking: Option<bool>,
    /// `cache_prompt`: whether the provider is asked to cache the prompt prefix.
    pub cache_prompt: Option<bool>,
    /// `cache_ttl`: `"5m"` or `"1h"`.
    pub cache_ttl: Option<CacheTtl>,
    /// `cache_breakpoints`: where cache marks go.
    pub cache_breakpoints: Option<Vec<CacheBreakpoint>>,
    /// The model's context window in tokens, when the model listing does not say (or says
    /// more than the server runs with).
    pub context_window: Option<u64>,
    /// `[pricing]`: dollars per million input and output tokens.
    pub pricing: Option<crate::pricing::Pricing>,
    /// What answers when this agent cannot (a 429, a 5xx or a connection failure before
    /// any output): other agents or `provider/model` names, tried in order (`qore serve`).
    pub fallbacks: Option<Vec<String>>,
    /// `extends`: the parent profile, deep-merged under this one.
    pub extends: Option<String>,
    /// `abstract`: a base for other profiles only, never run itself.
    #[serde(rename = "abstract")]
    pub is_abstract: Option<bool>,
    /// `hidden`: left out of listings.
    pub hidden: Option<bool>,
    /// `[match]`: the files, paths and projects the agent is picked for.
    #[serde(rename = "match")]
    pub matcher: Option<MatchRules>,
    /// `[body]`: the request body, Jinja strings rendered from the conversation.
    pub body: Option<toml::Table>,
    /// `[sandbox]`: the sandbox of the commands the agent's tools run.
    pub sandbox: Option<crate::tool_settings::SandboxSettings>,
    /// `[tools]`: the programs `run_command` may start.
    pub tools: Option<crate::tool_settings::ToolsSettings>,
}

/// `tool_protocol`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolProtocolSetting {
    /// The wire's own tool definitions and tool-call events.
    #[default]
    Native,
    /// Tools described in the system prompt, calls written as `<tool_call>` blocks.
    Text,
}

/// `cache_ttl`: how long a provider prompt cache entry should live (Anthropic's TTLs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
pub enum CacheTtl {
    /// Five minutes (the provider's default).
    #[serde(rename = "5m")]
    FiveMinutes,
    /// One hour.
    #[serde(rename = "1h")]
    OneHour,
}

/// `cache_breakpoints`: where cache marks go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheBreakpoint {
    /// After the system prompt.
    System,
    /// After the tool definitions.
    Tools,
    /// After the last user message.
    LastUserMessage,
}

impl CacheBreakpoint {
    /// Every breakpoint: the stable prefix of a conversation.
    pub const ALL: [CacheBreakpoint; 3] = [
        CacheBreakpoint::System,
        CacheBreakpoint::Tools,
        CacheBreakpoint::LastUserMessage,
    ];
}

/// `[match]`: which files and projects an agent is for (see [`crate::routing`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct MatchRules {
    /// Glob patterns of file names (`*.rs`).
    #[serde(default)]
    pub file_patterns: Vec<String>,
    /// Glob patterns of whole paths (`**/tests/**`).
    #[serde(default)]
    pub path_patterns: Vec<String>,
    /// Project directory names.
    #[serde(default)]
    pub project_names: Vec<String>,
}

/// A parsed profile file.
#[derive(Debug, Clone)]
pub struct ProfileFile {
    /// The file read (or the name it was parsed under).
    pub path: PathBuf,
    /// The typed fields.
    pub fields: Fields,
    /// The whole table, for `extends`.
    pub table: toml::Table,
    /// The 1-based line of each top-level key.
    pub key_lines: HashMap<String, usize>,
    /// Unknown keys and other problems that do not stop the profile from loading.
    pub warnings: Vec<Warning>,
}

impl ProfileFile {
    /// Parse `text`, read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<ProfileFile, AgentError> {
        let toml_error = |err: toml::de::Error| AgentError::toml(path, text, &err);
        let mut table: toml::Table = toml::from_str(text).map_err(toml_error)?;
        let mut fields: Fields = toml::from_str(text).map_err(toml_error)?;
        let mut key_lines = HashMap::new();
        let mut warnings = Vec::new();
        if let Ok(doc) = toml_edit::ImDocument::parse(text) {
            let line_of = |key: &toml_edit::Key| {
                key.span()
                    .map_or(1, |span| line_and_column(text, span.start).0)
            };
            for (key, item) in doc.as_table().iter() {
                if let Some(k) = doc.as_table().key(key) {
                    key_lines.insert(key.to_owned(), line_of(k));
                    if !KNOWN_KEYS.contains(&key) {
                        warnings.push(unknown(path, line_of(k), key, KNOWN_KEYS));
                    }
                }
                if key == "match" {
                    if let Some(table) = item.as_table_like() {
                        for (inner, _) in table.iter() {
                            if !MATCH_KEYS.contains(&inner) {
                                let line = table.key(inner).map_or(1, line_of);
                                let name = format!("match.{inner}");
                                warnings.push(unknown(path, line, &name, MATCH_KEYS));
                            }
                        }
                    }
                }
            }
        }
        if let Some(instance) = table.remove("provider_instance") {
            if table.contains_key("provider") {
                return Err(AgentError::Profile {
                    file: path.to_owned(),
                    line: key_lines.get("provider_instance").copied(),
                    message: "give one of provider and provider_instance".to_owned(),
                });
            }
            table.insert("provider".to_owned(), instance);
            if let Some(line) = key_lines.get("provider_instance").copied() {
                key_lines.insert("provider".to_owned(), line);
            }
        }
        fields.provider = fields.provider.or(fields.provider_instance.take());
        Ok(ProfileFile {
            path: path.to_owned(),
            fields,
            table,
            key_lines,
            warnings,
        })
    }

    /// Read and parse the file at `path`.
    pub fn read(path: &Path) -> Result<ProfileFile, AgentError> {
        let text = std::fs::read_to_string(path).map_err(|err| AgentError::Io {
            path: path.to_owned(),
            message: err.to_string(),
        })?;
        ProfileFile::parse(path, &text)
    }

    /// The profile's name: its `name`, else its file's stem.
    pub fn name(&self) -> String {
        self.fields.name.clone().unwrap_or_else(|| {
            (self.path.file_stem())
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
    }

    /// The line that sets top-level `key`, if this file sets it.
    pub fn line_of(&self, key: &str) -> Option<usize> {
        self.key_lines.get(key).copied()
    }
}

fn unknown(path: &Path, line: usize, key: &str, known: &[&str]) -> Warning {
    let last = key.rsplit('.').next().unwrap_or(key);
    let close = known
        .iter()
        .map(|k| (strsim::levenshtein(last, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min();
    let message = match close {
        Some((_, k)) => format!("unknown key `{key}` (typo? did you mean `{k}`?)"),
        None => format!("unknown key `{key}` (typo?); it is ignored"),
    };
    Warning {
        file: path.to_owned(),
        line,
        message,
    }
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
