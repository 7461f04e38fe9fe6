//! Whether a project's `.mcp.json` may start its servers: asked once, remembered per
//! project and per content of that file.
//!
//! Promises: a decision is kept under the project's canonical path with the SHA-256 of its
//! `.mcp.json`, so any change to the file asks again; the store is one JSON file (written
//! atomically, other projects' decisions kept); a missing store is no decisions, an
//! unreadable or malformed one is an error naming it (nothing is trusted by accident).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::error::McpError;

/// The store's file name in qore's data dir.
pub const TRUST_FILE: &str = "mcp-trust.json";

/// One project's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Decision {
    /// SHA-256 (hex) of the `.mcp.json` the decision was about.
    sha256: String,
    trusted: bool,
}

/// A project's `.mcp.json` as the decisions see it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectServers {
    /// The canonical project directory.
    pub project: PathBuf,
    pub sha256: String,
}

impl ProjectServers {
    /// `project`'s `.mcp.json`, or `None` when it has none.
    pub fn of(project: &Path) -> Option<ProjectServers> {
        let project = project.canonicalize().ok()?;
        let bytes = std::fs::read(project.join(".mcp.json")).ok()?;
        let sha256 = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Some(ProjectServers { project, sha256 })
    }
}

/// The decisions in one file.
pub struct TrustStore {
    path: PathBuf,
    decisions: BTreeMap<String, Decision>,
}

impl TrustStore {
    /// The store at `path` (see the module doc).
    pub fn open(path: &Path) -> Result<TrustStore, McpError> {
        let decisions = match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| McpError::Parse {
                path: path.into(),
                message: e.to_string(),
            })?,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(source) => {
                return Err(McpError::Read {
                    path: path.into(),
                    source,
                })
            }
        };
        Ok(TrustStore {
            path: path.into(),
            decisions,
        })
    }

    fn key(servers: &ProjectServers) -> String {
        servers.project.to_string_lossy().into_owned()
    }

    /// The decision about exactly this `.mcp.json`, if one was made.
    pub fn decision(&self, servers: &ProjectServers) -> Option<bool> {
        self.decisions
            .get(&Self::key(servers))
            .filter(|d| d.sha256 == servers.sha256)
            .map(|d| d.trusted)
    }

    /// Remember `trusted` for this `.mcp.json` (replacing any earlier decision).
    pub fn remember(&mut self, servers: &ProjectServers, trusted: bool) -> Result<(), McpError> {
        self.decisions.insert(
            Self::key(servers),
            Decision {
                sha256: servers.sha256.clone(),
                trusted,
            },
        );
        let fail = |message: String| McpError::Write {
            path: self.path.clone(),
            message,
        };
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
        let text =
            serde_json::to_string_pretty(&self.decisions).map_err(|e| fail(e.to_string()))?;
        let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(e.to_string()))?;
        temp.write_all(text.as_bytes())
            .map_err(|e| fail(e.to_string()))?;
        temp.persist(&self.path)
            .map_err(|e| fail(e.error.to_string()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_hold_for_one_project_and_one_content() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        for p in [&a, &b] {
            std::fs::create_dir_all(p).unwrap();
            std::fs::write(p.join(".mcp.json"), r#"{"mcpServers": {}}"#).unwrap();
        }
        assert_eq!(ProjectServers::of(dir.path()), None, "no .mcp.json");
        let store_path = dir.path().join("data/mcp-trust.json");
        let mut store = TrustStore::open(&store_path).unwrap();
        let servers_a = ProjectServers::of(&a).unwrap();
        assert_eq!(store.decision(&servers_a), None);
        store.remember(&servers_a, true).unwrap();
        store
            .remember(&ProjectServers::of(&b).unwrap(), false)
            .unwrap();

        let store = TrustStore::open(&store_path).unwrap();
        assert_eq!(store.decision(&ProjectServers::of(&a).unwrap()), Some(true));
        assert_eq!(
            store.decision(&ProjectServers::of(&b).unwrap()),
            Some(false)
        );
        // The same path spelled differently is the same project; a changed file asks again.
        assert_eq!(
            store.decision(&ProjectServers::of(&a.join("../a")).unwrap()),
            Some(true)
        );
        std::fs::write(
            a.join(".mcp.json"),
            r#"{"mcpServers": {"x": {"command": "rm"}}}"#,
        )
        .unwrap();
        assert_eq!(store.decision(&ProjectServers::of(&a).unwrap()), None);

        std::fs::write(&store_path, "not json").unwrap();
        let err = TrustStore::open(&store_path)
            .err()
            .expect("malformed store");
        assert!(err.to_string().contains("mcp-trust.json"), "{err}");
    }
}
