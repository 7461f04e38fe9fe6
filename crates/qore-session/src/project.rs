//! Where a session's project is: the one rule every front end and `qore sessions` use to
//! name a project directory, so the same directory is one project in the store.

use std::path::{Path, PathBuf};

use crate::target::TargetSpec;

/// The spec's project, else the current directory, as [`resolve_project`] gives it (`None`
/// when the current directory cannot be read).
pub fn project_dir(spec: &TargetSpec) -> Option<PathBuf> {
    resolve_project(spec.project.as_deref()).ok()
}

/// A project directory as sessions record it: `dir`, else the current directory; canonical
/// (links and `..` resolved), or made absolute when it does not exist. Every front end and
/// `qore sessions` resolve projects through this, so `--project .`, a symlinked path and
/// the current directory name one project in the store.
pub fn resolve_project(dir: Option<&Path>) -> std::io::Result<PathBuf> {
    let dir = match dir {
        Some(dir) => dir.to_owned(),
        None => std::env::current_dir()?,
    };
    dir.canonicalize().or_else(|_| std::path::absolute(&dir))
}
