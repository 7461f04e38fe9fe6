//! The sandbox policy: one object that says what a command (and qore's own file tools) may
//! write, read and reach, and which environment variables it gets.
//!
//! Promises:
//! - three modes: [`Mode::ReadOnly`] (nothing writable but the session's temporary directory
//!   and `/dev/null`-like devices), [`Mode::WorkspaceWrite`] (the default: also the project
//!   root and the extra writable roots) and [`Mode::FullAccess`] (no confinement);
//! - inside the project root, the entries named in [`PROTECTED`] (`.git`, `.qore`) are never
//!   writable, in every mode but full access;
//! - the [`Policy::unreadable`] places (by default the user's secret places, see
//!   [`default_unreadable`]) are neither readable nor writable;
//! - [`Policy::check_write`] and [`Policy::check_read`] are the answers the file tools use;
//!   the helper (`exec`) enforces the same sets in the kernel, so the two cannot disagree on
//!   what is protected (see the crate docs for the one difference, new top-level entries);
//! - [`Policy::scrub_env`] drops provider keys and every `*_TOKEN`, `*_KEY`, `*_SECRET`,
//!   `*_PASSWORD` variable unless its name is in [`Policy::keep_env`];
//! - [`Policy::to_args`] gives the `qore sandbox-exec` flags that carry the policy to the
//!   helper; the helper's parser builds the same policy from them.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Entries of the project root that stay read-only: git's metadata (hooks and config run
/// code later, on the host) and qore's own project settings.
pub const PROTECTED: &[&str] = &[".git", ".qore"];

/// Variables that hold provider keys without one of the suffixes [`Policy::scrub_env`] drops.
pub const PROVIDER_KEY_VARS: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "AZURE_OPENAI_ENDPOINT",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "OPENAI_ORG_ID",
];

/// Suffixes of variable names that are taken for secrets.
pub const SECRET_SUFFIXES: &[&str] = &["_TOKEN", "_KEY", "_SECRET", "_PASSWORD"];

/// How much a command may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    ReadOnly,
    #[default]
    WorkspaceWrite,
    FullAccess,
}

impl Mode {
    /// The name used in settings and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::WorkspaceWrite => "workspace-write",
            Mode::FullAccess => "full-access",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = crate::SandboxError;
    fn from_str(s: &str) -> Result<Mode, Self::Err> {
        match s {
            "read-only" => Ok(Mode::ReadOnly),
            "workspace-write" => Ok(Mode::WorkspaceWrite),
            "full-access" => Ok(Mode::FullAccess),
            other => Err(crate::SandboxError::BadMode(other.to_string())),
        }
    }
}

/// Why the policy refuses a write or a read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    #[error("the sandbox is read-only: `{0}` cannot be written")]
    ReadOnly(String),
    #[error("`{0}` is inside `{1}`, which the sandbox keeps read-only")]
    Protected(String, String),
    #[error("`{0}` is outside the sandbox's writable places (the project root and the session's temporary directory)")]
    NotWritable(String),
    #[error("`{0}` is one of the user's secret places, which the sandbox hides")]
    Secret(String),
}

/// What a command may do. Paths are absolute; [`Policy::new`] canonicalizes the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub mode: Mode,
    /// TCP, UDP and other non-local sockets allowed.
    pub network: bool,
    /// The project root (canonical).
    pub root: PathBuf,
    /// The session's private temporary directory (writable, given to commands as `TMPDIR`).
    pub session_tmp: Option<PathBuf>,
    /// More writable roots (`[sandbox] writable`).
    pub writable: Vec<PathBuf>,
    /// Places neither readable nor writable.
    pub unreadable: Vec<PathBuf>,
    /// Variables kept although their names look like secrets (`[sandbox] env`).
    pub keep_env: Vec<String>,
}

/// The user's secret places under `home`: ssh, cloud and signing keys, keyrings, tokens of
/// command-line clients, and qore's own config and data directories (`qore_dirs`, which the
/// caller knows best).
pub fn default_unreadable(home: Option<&Path>, qore_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(home) = home {
        for rel in [
            ".ssh",
            ".aws",
            ".gnupg",
            ".local/share/keyrings",
            ".password-store",
            ".netrc",
            ".docker",
            ".kube",
            ".config/gh",
            ".config/gcloud",
            ".config/qore",
            ".local/share/qore",
        ] {
            out.push(home.join(rel));
        }
    }
    out.extend(qore_dirs.iter().cloned());
    out
}

impl Policy {
    /// A policy in `mode` for `root` (which must exist), network off, no session directory,
    /// the default secret places of `$HOME` unreadable.
    pub fn new(mode: Mode, root: &Path) -> Result<Policy, crate::SandboxError> {
        let root = std::fs::canonicalize(root).map_err(|source| crate::SandboxError::Root {
            root: root.display().to_string(),
            source,
        })?;
        let home = std::env::var_os("HOME").map(PathBuf::from);
        Ok(Policy {
            mode,
            network: false,
            root,
            session_tmp: None,
            writable: Vec::new(),
            unreadable: default_unreadable(home.as_deref(), &[]),
            keep_env: Vec::new(),
        })
    }

    /// The places writable in this mode (project root first), before the protected entries
    /// are taken out. Empty in full access, which needs no list.
    pub fn writable_roots(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if self.mode == Mode::WorkspaceWrite {
            out.push(self.root.clone());
            out.extend(self.writable.iter().cloned());
        }
        if self.mode != Mode::FullAccess {
            out.extend(self.session_tmp.iter().cloned());
        }
        out
    }

    /// May `path` (absolute) be created, changed or removed?
    pub fn check_write(&self, path: &Path) -> Result<(), Denied> {
        if self.mode == Mode::FullAccess {
            return Ok(());
        }
        let path = real_path(path);
        let shown = path.display().to_string();
        self.check_read(&path)?;
        if let Ok(rel) = path.strip_prefix(canonical(&self.root)) {
            if let Some(first) = rel.components().next() {
                let first = first.as_os_str();
                if let Some(name) = PROTECTED.iter().find(|p| OsStr::new(p) == first) {
                    return Err(Denied::Protected(shown, name.to_string()));
                }
            }
        }
        if self.mode == Mode::ReadOnly
            && !self
                .session_tmp
                .iter()
                .any(|t| path.starts_with(canonical(t)))
        {
            return Err(Denied::ReadOnly(shown));
        }
        if self
            .writable_roots()
            .iter()
            .any(|w| path.starts_with(canonical(w)))
        {
            Ok(())
        } else {
            Err(Denied::NotWritable(shown))
        }
    }

    /// May `path` (absolute) be read?
    pub fn check_read(&self, path: &Path) -> Result<(), Denied> {
        if self.mode == Mode::FullAccess {
            return Ok(());
        }
        let path = real_path(path);
        if self
            .unreadable
            .iter()
            .any(|u| path.starts_with(u) || path.starts_with(canonical(u)))
        {
            return Err(Denied::Secret(path.display().to_string()));
        }
        Ok(())
    }

    /// Is `name` a variable the command must not get?
    pub fn is_secret_var(&self, name: &str) -> bool {
        if self.mode == Mode::FullAccess || self.keep_env.iter().any(|k| k == name) {
            return false;
        }
        let upper = name.to_ascii_uppercase();
        SECRET_SUFFIXES.iter().any(|s| upper.ends_with(s))
            || PROVIDER_KEY_VARS.contains(&upper.as_str())
    }

    /// `vars` without the secrets ([`Policy::is_secret_var`]).
    pub fn scrub_env(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        vars.into_iter()
            .filter(|(name, _)| !name.to_str().is_some_and(|n| self.is_secret_var(n)))
            .collect()
    }

    /// The `qore sandbox-exec` flags carrying this policy (before `--` and the command).
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "--mode".into(),
            self.mode.name().into(),
            "--network".into(),
            if self.network { "on" } else { "off" }.into(),
            "--root".into(),
            self.root.clone().into(),
        ];
        if let Some(tmp) = &self.session_tmp {
            args.push("--tmpdir".into());
            args.push(tmp.clone().into());
        }
        for w in &self.writable {
            args.push("--writable".into());
            args.push(w.clone().into());
        }
        for u in &self.unreadable {
            args.push("--unreadable".into());
            args.push(u.clone().into());
        }
        for k in &self.keep_env {
            args.push("--keep-env".into());
            args.push(k.into());
        }
        args
    }

    /// One line for people: mode, network, writable places.
    pub fn describe(&self) -> String {
        let writable: Vec<String> = self
            .writable_roots()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        format!(
            "{} (network {}; writable: {})",
            self.mode,
            if self.network { "on" } else { "off" },
            if self.mode == Mode::FullAccess {
                "everything".to_string()
            } else if writable.is_empty() {
                "nothing".to_string()
            } else {
                writable.join(", ")
            }
        )
    }
}

/// `path` canonicalized if it exists, else as given.
pub(crate) fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `path` with its longest existing ancestor canonicalized (the rest appended), so a path
/// about to be created is judged by where its parent really is.
pub(crate) fn real_path(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = path.to_path_buf();
    loop {
        if let Ok(c) = std::fs::canonicalize(&cur) {
            let mut out = c;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (cur.file_name().map(|n| n.to_os_string()), cur.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                cur = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
