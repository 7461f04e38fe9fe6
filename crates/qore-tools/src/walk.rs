//! The one directory walk of `list_files`, `find_file` and `search`: the ignore rules and
//! the sandbox in one place.
//!
//! Promises:
//! - [`Sandbox::walk_dir`] resolves the directory a tool was given through the sandbox and
//!   checks it through the root's handle: a refused path, a missing one and a file each
//!   come back as a [`NotADir`] the tool words for the model;
//! - [`Sandbox::entries`] yields what lies below a directory under the sandbox's rules
//!   ([`Sandbox::walk`]: ignore files of every level, `.git` skipped, symlinks not
//!   followed, sorted by name), never the directory itself nor the directories on the way
//!   to it from the root; an entry that cannot be read is [`Walked::Unreadable`]; when the
//!   token fires it yields [`Walked::Cancelled`] and ends.

use std::path::{Path, PathBuf};

use qore_core::CancellationToken;

use crate::Sandbox;

/// Why a path given as a directory to walk cannot be walked.
#[derive(Debug)]
pub enum NotADir {
    /// The sandbox refused the path; the refusal's text.
    Refused(String),
    /// Nothing is there; the path relative to the root.
    Missing(String),
    /// Something other than a directory is there; the path relative to the root.
    Other(String),
}

/// One step of [`Sandbox::entries`].
pub enum Walked {
    Entry(ignore::DirEntry),
    Unreadable,
    Cancelled,
}

impl Sandbox {
    /// The directory `path` (relative to the root, or absolute), resolved and checked.
    pub fn walk_dir(&self, path: &str) -> Result<PathBuf, NotADir> {
        let dir = self
            .resolve(path)
            .map_err(|e| NotADir::Refused(e.to_string()))?;
        match self.metadata(&dir) {
            Ok(meta) if meta.is_dir() => Ok(dir),
            Ok(_) => Err(NotADir::Other(self.relative(&dir))),
            Err(_) => Err(NotADir::Missing(self.relative(&dir))),
        }
    }

    /// The entries below `dir` (from [`Sandbox::walk_dir`]), at most `max_depth` levels
    /// down (1 = its direct entries); see the module doc.
    pub fn entries<'a>(
        &self,
        dir: &'a Path,
        max_depth: Option<usize>,
        cancel: &'a CancellationToken,
    ) -> impl Iterator<Item = Walked> + 'a {
        let mut walk = self.walk(dir, max_depth);
        let mut stopped = false;
        std::iter::from_fn(move || loop {
            if stopped {
                return None;
            }
            if cancel.is_cancelled() {
                stopped = true;
                return Some(Walked::Cancelled);
            }
            match walk.next()? {
                Err(_) => return Some(Walked::Unreadable),
                Ok(entry) if entry.path() != dir && entry.path().starts_with(dir) => {
                    return Some(Walked::Entry(entry))
                }
                Ok(_) => {}
            }
        })
    }
}
