//! A profile's `[sandbox]` and `[tools]` tables: the operating-system sandbox of the commands
//! the agent's tools run, and the programs `run_command` may start.
//!
//! Promises: the tables are typed like every other field of a profile (a wrong value or an
//! unknown key is the profile's error, naming its file, line and column); every key is
//! optional, and a front end lays the ones set over `config.toml`'s ([`of_agent`] gives the
//! merged tables after `extends`, with the file and line that set them).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::catalog::Agent;

/// `[sandbox]` in a profile (the same keys as in `config.toml`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSettings {
    /// `mode`: `read-only`, `workspace-write` or `full-access`.
    pub mode: Option<SandboxModeSetting>,
    /// `network`: commands may use the network.
    pub network: Option<bool>,
    /// `writable`: more writable places (relative ones to the project root).
    pub writable: Option<Vec<PathBuf>>,
    /// `env`: secret-looking variables passed on anyway.
    pub env: Option<Vec<String>>,
    /// `escalation`: `ask` (the model may ask a person for more rights) or `never`.
    pub escalation: Option<EscalationSetting>,
    /// `unconfinable`: `refuse` or `ask` on a kernel that cannot confine commands.
    pub unconfinable: Option<UnconfinableSetting>,
}

/// `[tools]` in a profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsSettings {
    /// `allowed_commands`: the programs `run_command` may start.
    pub allowed_commands: Option<Vec<String>>,
}

/// `[sandbox] mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxModeSetting {
    /// Nothing writable but the session's temporary directory.
    ReadOnly,
    /// Also the project root (but `.git` and `.qore`).
    WorkspaceWrite,
    /// No confinement.
    FullAccess,
}

/// `[sandbox] escalation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EscalationSetting {
    /// The model may ask a person for more rights for one command.
    Ask,
    /// It may not.
    Never,
}

/// `[sandbox] unconfinable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnconfinableSetting {
    /// Commands are refused.
    Refuse,
    /// A person is asked before every command, which then runs unconfined.
    Ask,
}

impl SandboxModeSetting {
    /// The name in settings.
    pub fn name(self) -> &'static str {
        match self {
            SandboxModeSetting::ReadOnly => "read-only",
            SandboxModeSetting::WorkspaceWrite => "workspace-write",
            SandboxModeSetting::FullAccess => "full-access",
        }
    }
}

impl EscalationSetting {
    /// The name in settings.
    pub fn name(self) -> &'static str {
        match self {
            EscalationSetting::Ask => "ask",
            EscalationSetting::Never => "never",
        }
    }
}

impl UnconfinableSetting {
    /// The name in settings.
    pub fn name(self) -> &'static str {
        match self {
            UnconfinableSetting::Refuse => "refuse",
            UnconfinableSetting::Ask => "ask",
        }
    }
}

/// A table of a resolved agent and where it was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Set<T> {
    /// The table (merged over `extends`).
    pub value: T,
    /// The file and line that set it (the child's, when several do).
    pub at: (PathBuf, Option<usize>),
}

/// The agent's `[sandbox]` and `[tools]` tables, when it has them. They were type-checked
/// when the profile loaded; one that no longer fits after `extends` is an error message.
#[allow(clippy::type_complexity)]
pub fn of_agent(
    agent: &Agent,
) -> Result<(Option<Set<SandboxSettings>>, Option<Set<ToolsSettings>>), String> {
    Ok((table(agent, "sandbox")?, table(agent, "tools")?))
}

fn table<T: serde::de::DeserializeOwned>(
    agent: &Agent,
    key: &str,
) -> Result<Option<Set<T>>, String> {
    let Some(value) = agent.merged.get(key) else {
        return Ok(None);
    };
    let at = agent.where_set(key);
    let value = (value.clone().try_into()).map_err(|e: toml::de::Error| {
        let line = at.1.map_or_else(String::new, |l| format!(", line {l}"));
        format!("{}{line}: [{key}]: {}", at.0.display(), e.message().trim())
    })?;
    Ok(Some(Set { value, at }))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::profile::ProfileFile;

    /// A bad `[sandbox]` or `[tools]` value is the profile's error, at its line.
    #[test]
    fn bad_values_name_the_file_and_line() {
        // (profile text, line of the error, words the error has)
        let cases = [
            ("[sandbox]\nmode = \"wide-open\"\n", 2, "wide-open"),
            (
                "name = \"a\"\n\n[sandbox]\nnetwork = \"yes\"\n",
                4,
                "boolean",
            ),
            ("[sandbox]\nescalation = \"always\"\n", 2, "always"),
            ("[sandbox]\nunconfinable = \"run\"\n", 2, "run"),
            ("[sandbox]\nwritable = \"../out\"\n", 2, "sequence"),
            ("[sandbox]\nmodes = \"read-only\"\n", 2, "modes"),
            ("[tools]\nallowed_commands = \"git\"\n", 2, "sequence"),
            ("[tools]\nallowed = [\"git\"]\n", 2, "allowed"),
        ];
        let path = Path::new("/agents/coder.toml");
        for (text, line, word) in cases {
            let err = ProfileFile::parse(path, text).unwrap_err().to_string();
            assert!(
                err.contains(&format!("coder.toml:{line}:")),
                "{text}: {err}"
            );
            assert!(err.contains(word), "{text}: {err}");
        }
        let good = "[sandbox]\nmode = \"read-only\"\nnetwork = true\n[tools]\nallowed_commands = [\"ls\"]\n";
        let file = ProfileFile::parse(path, good).unwrap();
        assert!(file.warnings.is_empty(), "{:?}", file.warnings);
        let sandbox = file.fields.sandbox.unwrap();
        assert_eq!(sandbox.mode.map(|m| m.name()), Some("read-only"));
        assert_eq!(sandbox.network, Some(true));
        assert_eq!(
            file.fields.tools.unwrap().allowed_commands,
            Some(vec!["ls".to_owned()])
        );
    }
}
