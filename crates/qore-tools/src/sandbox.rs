//! The project-root sandbox every built-in tool goes through.
//!
//! Promises:
//! - the root is canonicalized once, at construction;
//! - [`Sandbox::resolve`] turns a path the model gave (relative to the root, or absolute)
//!   into a canonical absolute path inside the root, for paths that exist and for paths that
//!   are about to be created. It walks the path one component at a time on the real file
//!   system, so a symlink is judged by where it really leads:
//!   - a relative path that steps out of the root at any point (`..`, `a/../../x`) is refused;
//!   - an absolute path whose final location is outside the root is refused;
//!   - a symlink inside the root that leads out of it (file or directory) is refused, even
//!     when later `..` components would come back in; a dangling symlink is refused too;
//!   - `..` after a component that does not exist yet is refused (its meaning is unknown);
//!   - anything inside a `.git` directory is refused (writing hooks there would run code);
//!   - a path matched by a `.gitignore` or `.qoreignore` rule between the root and the path
//!     is refused (`.qoreignore` takes precedence over `.gitignore`, deeper files over
//!     shallower ones, `!` re-includes, as git and the `ignore` crate do);
//! - [`Sandbox::resolve_writable`] adds two more rules: `.qoreignore` files themselves,
//!   which define what the sandbox hides, cannot be written by a tool; and when the sandbox
//!   carries an operating-system [`Policy`] ([`Sandbox::confined`]), the path must pass
//!   [`Policy::check_write`], the same object `run_command`'s helper enforces in the kernel
//!   (so `.qore` and everything in read-only mode is refused to the file tools too);
//! - [`Sandbox::walk`] lists a directory with the same rules (the walk always starts at the
//!   root, so ignore files of every level above the listed directory apply), never follows
//!   symlinks and never enters `.git`.
//!
//! The check gives the clear refusals above; the use of its result goes through a handle on
//! the root directory (see the `rooted` module), so another process swapping a symlink into the
//! tree between the check and the use cannot lead a tool out of the root either.

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_std::fs::Dir;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, WalkBuilder};
use qore_sandbox::Policy;

/// The name of qore's own ignore file.
pub const QOREIGNORE: &str = ".qoreignore";
const GITIGNORE: &str = ".gitignore";

/// Why a path was refused. Every message says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the path is empty; give a path relative to the project root, e.g. \"src/main.rs\"")]
    EmptyPath,
    #[error("the path `{path}` contains a NUL byte")]
    InvalidPath { path: String },
    #[error(
        "`{path}` is outside the project root; use a path relative to the project root \
         without `..` steps that leave it"
    )]
    OutsideRoot { path: String },
    #[error(
        "`{path}` goes through `{link}`, a symlink that points outside the project root; \
         only files inside the project can be used"
    )]
    SymlinkEscape { path: String, link: String },
    #[error("`{path}` goes through `{link}`, a symlink whose target does not exist")]
    BrokenSymlink { path: String, link: String },
    #[error(
        "`{path}` has `..` after `{missing}`, which does not exist; give the path without `..`"
    )]
    ParentAfterMissing { path: String, missing: String },
    #[error("`{path}` is inside a .git directory, which tools may not read or change")]
    GitDir { path: String },
    #[error(
        "`{path}` is excluded by the rule `{rule}` in {file}; ignored files are not available \
         to tools"
    )]
    Ignored {
        path: String,
        rule: String,
        file: String,
    },
    #[error(
        "`{path}` is a .qoreignore file, which defines what tools may see; tools cannot change it"
    )]
    Protected { path: String },
    #[error("{denied}")]
    Policy { denied: qore_sandbox::Denied },
    #[error("cannot access `{path}`: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("the project root `{root}` cannot be used: {source}")]
    Root {
        root: String,
        #[source]
        source: io::Error,
    },
}

/// A project root and the rules for paths under it. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Sandbox {
    root: PathBuf,
    /// The root, opened once: every file read, write and metadata lookup of the tools goes
    /// through it (directory walks still open by path).
    pub(crate) dir: Arc<Dir>,
    /// The operating-system policy of commands and file writes, if confined.
    policy: Option<Arc<Policy>>,
    /// The session's private temporary directory (removed with the last clone).
    session_tmp: Option<Arc<tempfile::TempDir>>,
}

impl Sandbox {
    /// A sandbox rooted at `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Sandbox, SandboxError> {
        let given = root.as_ref();
        let root_err = |source| SandboxError::Root {
            root: given.display().to_string(),
            source,
        };
        let root = std::fs::canonicalize(given).map_err(root_err)?;
        let meta = std::fs::metadata(&root).map_err(root_err)?;
        if !meta.is_dir() {
            return Err(root_err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a directory",
            )));
        }
        let dir = Dir::open_ambient_dir(&root, cap_std::ambient_authority()).map_err(root_err)?;
        Ok(Sandbox {
            root,
            dir: Arc::new(dir),
            policy: None,
            session_tmp: None,
        })
    }

    /// This sandbox under `policy` (its root is replaced by this sandbox's), with a private
    /// temporary directory for the session (the policy's `session_tmp`), removed when the
    /// last clone of the sandbox is dropped. When no temporary directory can be made, the
    /// policy has none (commands then have no writable temporary directory): confinement
    /// never depends on it.
    pub fn confined(mut self, mut policy: Policy) -> Sandbox {
        let tmp = tempfile::Builder::new()
            .prefix("qore-session-")
            .tempdir()
            .ok();
        policy.root = self.root.clone();
        policy.session_tmp = tmp.as_ref().map(|t| t.path().to_path_buf());
        self.policy = Some(Arc::new(policy));
        self.session_tmp = tmp.map(Arc::new);
        self
    }

    /// The operating-system policy, when the sandbox is confined.
    pub fn policy(&self) -> Option<&Policy> {
        self.policy.as_deref()
    }

    /// The canonical project root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` (relative to the root or absolute) as a canonical absolute path inside the
    /// root, which may or may not exist. See the module docs for what is refused.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, SandboxError> {
        let abs = self.locate(path)?;
        if abs == self.root {
            return Ok(abs);
        }
        let rel = self.relative(&abs);
        if abs
            .strip_prefix(&self.root)
            .map(|r| r.components().any(|c| c.as_os_str() == OsStr::new(".git")))
            .unwrap_or(false)
        {
            return Err(SandboxError::GitDir { path: rel });
        }
        let is_dir = std::fs::metadata(&abs).map(|m| m.is_dir()).unwrap_or(false);
        if let Some((rule, file)) = self.ignored_by(&abs, is_dir) {
            return Err(SandboxError::Ignored {
                path: rel,
                rule,
                file,
            });
        }
        Ok(abs)
    }

    /// Like [`Sandbox::resolve`], for a path a tool is about to write.
    pub fn resolve_writable(&self, path: &str) -> Result<PathBuf, SandboxError> {
        let abs = self.resolve(path)?;
        if abs.file_name() == Some(OsStr::new(QOREIGNORE)) {
            return Err(SandboxError::Protected {
                path: self.relative(&abs),
            });
        }
        if let Some(policy) = &self.policy {
            policy
                .check_write(&abs)
                .map_err(|denied| SandboxError::Policy { denied })?;
        }
        Ok(abs)
    }

    /// `abs` relative to the root with `/` separators (`.` for the root itself). Paths outside
    /// the root are shown as they are.
    pub fn relative(&self, abs: &Path) -> String {
        match abs.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => abs.display().to_string(),
        }
    }

    /// A walker over `dir` (a resolved directory inside the root) that applies the sandbox's
    /// rules: `.gitignore` and `.qoreignore` at every level from the root down, hidden files
    /// included, symlinks listed but not followed, `.git` skipped, entries sorted by name.
    /// `max_depth` counts from `dir` (1 = its direct entries).
    pub fn walk(&self, dir: &Path, max_depth: Option<usize>) -> ignore::Walk {
        let base_depth = dir
            .strip_prefix(&self.root)
            .map(|r| r.components().count())
            .unwrap_or(0);
        let root = self.root.clone();
        let target = dir.to_path_buf();
        let mut builder = WalkBuilder::new(&self.root);
        builder
            .standard_filters(false)
            .hidden(false)
            .parents(false)
            .git_ignore(true)
            .require_git(false)
            .follow_links(false)
            .add_custom_ignore_filename(QOREIGNORE)
            .sort_by_file_name(|a, b| a.cmp(b))
            .max_depth(max_depth.map(|d| d + base_depth))
            .filter_entry(move |entry| {
                let path = entry.path();
                if entry.file_name() == OsStr::new(".git") {
                    return false;
                }
                // Descend only along the way to `dir`, and inside it.
                path == root || path.starts_with(&target) || target.starts_with(path)
            });
        builder.build()
    }

    /// The canonical location of `input`, inside the root, before the `.git` and ignore rules.
    fn locate(&self, input: &str) -> Result<PathBuf, SandboxError> {
        if input.trim().is_empty() {
            return Err(SandboxError::EmptyPath);
        }
        if input.contains('\0') {
            return Err(SandboxError::InvalidPath {
                path: input.to_string(),
            });
        }
        let requested = Path::new(input);
        let relative_input = !requested.has_root();
        let joined = if relative_input {
            self.root.join(requested)
        } else {
            requested.to_path_buf()
        };
        let outside = || SandboxError::OutsideRoot {
            path: input.to_string(),
        };

        let mut current = PathBuf::new();
        let mut missing: Option<PathBuf> = None; // the part that does not exist yet
        for component in joined.components() {
            match component {
                Component::Prefix(_) | Component::RootDir => current.push(component),
                Component::CurDir => {}
                Component::ParentDir => {
                    if let Some(missing) = &missing {
                        return Err(SandboxError::ParentAfterMissing {
                            path: input.to_string(),
                            missing: self.relative(&current.join(missing)),
                        });
                    }
                    current.pop();
                    // A relative path may never leave the root, not even on its way back in.
                    if relative_input && !current.starts_with(&self.root) {
                        return Err(outside());
                    }
                }
                Component::Normal(name) => {
                    if let Some(missing) = &mut missing {
                        missing.push(name);
                        continue;
                    }
                    let candidate = current.join(name);
                    match std::fs::symlink_metadata(&candidate) {
                        Ok(meta) if meta.file_type().is_symlink() => {
                            let link_inside = candidate.starts_with(&self.root);
                            let link = || self.relative(&candidate);
                            match std::fs::canonicalize(&candidate) {
                                Ok(target) => {
                                    if link_inside && !target.starts_with(&self.root) {
                                        return Err(SandboxError::SymlinkEscape {
                                            path: input.to_string(),
                                            link: link(),
                                        });
                                    }
                                    current = target;
                                }
                                Err(_) => {
                                    return Err(SandboxError::BrokenSymlink {
                                        path: input.to_string(),
                                        link: link(),
                                    })
                                }
                            }
                        }
                        Ok(_) => current = candidate,
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {
                            missing = Some(PathBuf::from(name));
                        }
                        Err(source) => {
                            return Err(SandboxError::Io {
                                path: input.to_string(),
                                source,
                            })
                        }
                    }
                }
            }
        }
        if !current.starts_with(&self.root) {
            return Err(outside());
        }
        if let Some(missing) = missing {
            current.push(missing);
        }
        Ok(current)
    }

    /// The rule (and its file, relative to the root) that excludes `abs`, if any. `.qoreignore`
    /// files are consulted before `.gitignore` files; within a kind, the deepest file first.
    fn ignored_by(&self, abs: &Path, is_dir: bool) -> Option<(String, String)> {
        let mut dirs: Vec<&Path> = abs
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(&self.root))
            .collect();
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        for name in [QOREIGNORE, GITIGNORE] {
            for dir in &dirs {
                let file = dir.join(name);
                if !file.is_file() {
                    continue;
                }
                let Some(matcher) = load_rules(dir, &file) else {
                    continue;
                };
                match matcher.matched_path_or_any_parents(abs, is_dir) {
                    Match::Ignore(glob) => {
                        return Some((glob.original().to_string(), self.relative(&file)))
                    }
                    Match::Whitelist(_) => return None,
                    Match::None => {}
                }
            }
        }
        None
    }
}

/// The rules of one ignore file rooted at `dir`. Lines that are not valid globs are skipped,
/// as git does.
fn load_rules(dir: &Path, file: &Path) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    let _partial_error = builder.add(file);
    builder.build().ok()
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
