//! System prompt layers: what a session tells the model before the conversation.
//!
//! Promises: the system prompt is the layers joined by a blank line, in this order:
//! 1. the agent's prompt (qore-agents renders it; or the prompt given instead of it),
//! 2. the project's rules: `AGENTS.md` at the project root, then `.qore/rules/*.md` sorted
//!    by file name (byte order); a rule whose text the agent's prompt already holds (a
//!    template that includes `{{ agents_md }}`) is not repeated; blank files add nothing,
//! 3. the per-session additions, in the order they were added.
//!
//! Later layers are more specific, so they come last (closest to the conversation). No
//! layer at all: no system message. A rules file that exists but cannot be read is an error
//! naming it.

use std::path::{Path, PathBuf};

use qore_core::ErrorInfo;

/// A rules file of the project and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The rules file.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

/// A session's system prompt layers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layers {
    /// The agent's rendered prompt, or the one given instead of it.
    pub agent: Option<String>,
    /// The project's rules, in order.
    pub rules: Vec<Rule>,
    /// Per-session additions, in order.
    pub additions: Vec<String>,
}

impl Layers {
    /// Layers with the agent's prompt only.
    pub fn new(agent: Option<String>) -> Layers {
        Layers {
            agent,
            ..Layers::default()
        }
    }

    /// These layers with the rules of `project` (see the module doc).
    pub fn with_project_rules(mut self, project: &Path) -> Result<Layers, ErrorInfo> {
        self.rules = project_rules(project)?;
        Ok(self)
    }

    /// Add a per-session layer.
    pub fn add(&mut self, text: impl Into<String>) {
        self.additions.push(text.into());
    }

    /// The system prompt, or `None` when every layer is empty.
    pub fn system_prompt(&self) -> Option<String> {
        let agent = self.agent.as_deref().filter(|t| !t.trim().is_empty());
        let rules = (self.rules.iter())
            .map(|rule| rule.text.as_str())
            .filter(|text| !agent.is_some_and(|agent| agent.contains(text.trim())));
        let additions = self.additions.iter().map(String::as_str);
        let parts: Vec<&str> = (agent.into_iter().chain(rules).chain(additions))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }
}

/// The rules of `project`: `AGENTS.md`, then `.qore/rules/*.md` sorted by name. Missing
/// files and a missing rules directory are no rules.
pub fn project_rules(project: &Path) -> Result<Vec<Rule>, ErrorInfo> {
    let mut paths = vec![project.join("AGENTS.md")];
    let dir = project.join(".qore").join("rules");
    match std::fs::read_dir(&dir) {
        Ok(entries) => {
            let mut found: Vec<PathBuf> = entries
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
                .collect();
            found.sort();
            paths.extend(found);
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(unreadable(&dir, &err)),
    }
    let mut rules = Vec::new();
    for path in paths {
        match std::fs::read_to_string(&path) {
            Ok(text) if text.trim().is_empty() => {}
            Ok(text) => rules.push(Rule { path, text }),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(unreadable(&path, &err)),
        }
    }
    Ok(rules)
}

fn unreadable(path: &Path, err: &std::io::Error) -> ErrorInfo {
    ErrorInfo::config(format!(
        "cannot read the project rules {}: {err}",
        path.display()
    ))
}

#[cfg(test)]
#[path = "layers_tests.rs"]
mod tests;
