//! The rosters of `pipelines.toml` ([`Roster`]) and which of their agents a request gets:
//! the first, or the one whose `[match]` rules pick the file being worked on. Shared by the
//! manager (chat, completion, refactor) and the compressor.
//!
//! Promises: an empty roster is an error naming it; with a file, the roster's agents are
//! picked by qore-agents' routing, and none matching is an error naming the roster, its
//! agents, the file and the project.

use std::path::Path;

use qore_agents::config::Config;
use qore_agents::routing;
use qore_core::ErrorInfo;

/// A roster of `pipelines.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roster {
    /// Fill-in-the-middle completion (`code_completion`).
    CodeCompletion,
    /// Chat (`chat`).
    Chat,
    /// Session compression (`compression`).
    Compression,
    /// Quick refactors (`refactor`).
    Refactor,
}

/// The agents `roster` names, and its word in `pipelines.toml`.
pub(crate) fn roster_names(config: &Config, roster: Roster) -> (&[String], &'static str) {
    let pipelines = &config.pipelines;
    match roster {
        Roster::CodeCompletion => (&pipelines.code_completion, "code_completion"),
        Roster::Chat => (&pipelines.chat, "chat"),
        Roster::Compression => (&pipelines.compression, "compression"),
        Roster::Refactor => (&pipelines.refactor, "refactor"),
    }
}

/// The first agent of `roster`, or an error naming the empty roster.
pub(crate) fn roster_agent(config: &Config, roster: Roster) -> Result<String, ErrorInfo> {
    routed_agent(config, roster, None, None)
}

/// The agent of `roster` for `file` in the project `project` (see
/// [`crate::SessionManager::reach_completer_for`]); without a file, the roster's first.
pub(crate) fn routed_agent(
    config: &Config,
    roster: Roster,
    file: Option<&Path>,
    project: Option<&Path>,
) -> Result<String, ErrorInfo> {
    let (names, word) = roster_names(config, roster);
    let Some(first) = names.first() else {
        return Err(ErrorInfo::config(format!(
            "the {word} roster of pipelines.toml names no agent"
        )));
    };
    let Some(file) = file else {
        return Ok(first.clone());
    };
    let project_name = project.and_then(|p| p.file_name()).and_then(|n| n.to_str());
    let target = routing::Target {
        file: Some(file),
        project_name,
    };
    match routing::pick(&config.catalog, names, &target) {
        Some(agent) => Ok(agent.name.clone()),
        None => Err(ErrorInfo::config(format!(
            "no agent of the {word} roster of pipelines.toml ({}) matches {}{}",
            names.join(", "),
            file.display(),
            project_name.map_or(String::new(), |p| format!(" in project {p:?}")),
        ))),
    }
}
