//! Which files the ignore rules exclude: `.qoreignore` and `.gitignore` under the workspace
//! folder (or `rootUri`) holding the file, judged by qore-tools' [`Sandbox`] rules (the same
//! as the agent's tools obey).
//!
//! Promises: a file is ignored when any root containing it refuses it as ignored or as inside
//! `.git` (nested roots: the outer root's rules reach into the inner one); a file under no
//! root, or a root that cannot be opened, has no rules to obey (not ignored). Never a panic.
//! [`Roots::change`] follows `workspace/didChangeWorkspaceFolders`: removed folders' rules
//! stop applying, added ones' start.

use std::path::{Path, PathBuf};

use qore_tools::{Sandbox, SandboxError};

/// The workspace roots and their rules.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    sandboxes: Vec<Sandbox>,
}

impl Roots {
    /// The roots among `dirs` that can be opened.
    pub fn new(dirs: impl IntoIterator<Item = PathBuf>) -> Roots {
        let sandboxes: Vec<Sandbox> = dirs
            .into_iter()
            .filter_map(|dir| match Sandbox::new(&dir) {
                Ok(sandbox) => Some(sandbox),
                Err(err) => {
                    tracing::warn!("workspace root {} ignored: {err}", dir.display());
                    None
                }
            })
            .collect();
        Roots { sandboxes }
    }

    /// Drop the roots at `removed` (compared as canonical paths), then add the ones among
    /// `added` that can be opened and are not roots already.
    pub fn change(&mut self, added: Vec<PathBuf>, removed: &[PathBuf]) {
        let canonical = |dir: &Path| std::fs::canonicalize(dir).unwrap_or_else(|_| dir.into());
        let gone: Vec<PathBuf> = removed.iter().map(|dir| canonical(dir)).collect();
        self.sandboxes
            .retain(|s| !gone.iter().any(|dir| dir == s.root()));
        for sandbox in Roots::new(added).sandboxes {
            if !self.sandboxes.iter().any(|s| s.root() == sandbox.root()) {
                self.sandboxes.push(sandbox);
            }
        }
    }

    /// Whether the rules exclude the file at `path` (absolute).
    pub fn ignores(&self, path: &Path) -> bool {
        let Some(text) = path.to_str() else {
            return false;
        };
        self.sandboxes.iter().any(|sandbox| {
            matches!(
                sandbox.resolve(text),
                Err(SandboxError::Ignored { .. } | SandboxError::GitDir { .. })
            )
        })
    }
}

#[cfg(test)]
#[path = "ignored_tests.rs"]
mod tests;
