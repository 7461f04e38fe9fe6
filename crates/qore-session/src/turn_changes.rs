//! What the last turn of a session changed in the project's files: for each file the turn's
//! tools wrote, what it held before the turn (as the store recorded it) and what it holds
//! now, so a front end can show the turn's changes as diffs (`/diff` in `qore chat`).
//!
//! Promises: the turn is the one undo would take back (the newest that is not undone,
//! [`Store::last_undoable_turn`]); files come sorted by path; a file whose content is no
//! longer what the turn left is marked [`ChangedFile::changed_since`] (it is shown as it is
//! now); a file whose prior content was too large to record has `before_recorded` false;
//! a stored path that is not a plain path inside the project is never read (it is listed
//! with nothing read); nothing is written. Calls whose changes are not recorded
//! (`run_command`, MCP tools) are named in [`TurnChanges::unrecorded_calls`].

use std::io;
use std::path::{Component, Path};

use qore_store::{Store, StoreError};
use qore_tools::{content_hash, Sandbox};

use crate::undo::unrecorded_calls;

/// One file the turn changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    /// Relative to the project, `/` separated.
    pub path: String,
    /// What it held before the turn (`None`: no file, or not recorded).
    pub before: Option<Vec<u8>>,
    /// Whether `before` is what it held (false: too large to record).
    pub before_recorded: bool,
    /// What it holds now (`None`: no file, or a path that is not read).
    pub now: Option<Vec<u8>>,
    /// The file no longer holds what the turn left.
    pub changed_since: bool,
}

/// What the last turn changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnChanges {
    /// The turn's 1-based position in its session.
    pub seq: i64,
    /// Each file the turn changed.
    pub files: Vec<ChangedFile>,
    /// The turn's calls whose file changes are not recorded, e.g. ``run_command `make` ``.
    pub unrecorded_calls: Vec<String>,
}

/// Why the changes cannot be told.
#[derive(Debug, thiserror::Error)]
pub enum TurnChangesError {
    /// Reading the store failed.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The project directory cannot be opened.
    #[error("the project `{project}` cannot be opened: {reason}")]
    Project {
        /// The project directory.
        project: String,
        /// Why it cannot be opened.
        reason: String,
    },
    /// A changed file cannot be read.
    #[error("cannot read `{path}`: {source}")]
    Read {
        /// The file.
        path: String,
        /// What the operating system said.
        source: io::Error,
    },
}

/// What the newest turn of `session` (an exact id) that is not undone changed under
/// `project`; `None` when the session has no such turn.
pub async fn last_turn_changes(
    store: &dyn Store,
    session: &str,
    project: &Path,
) -> Result<Option<TurnChanges>, TurnChangesError> {
    let Some(turn) = store.last_undoable_turn(session).await? else {
        return Ok(None);
    };
    let sandbox = Sandbox::new(project).map_err(|e| TurnChangesError::Project {
        project: project.display().to_string(),
        reason: e.to_string(),
    })?;
    let mut files = Vec::with_capacity(turn.file_changes.len());
    for change in &turn.file_changes {
        let plain = (Path::new(&change.path).components())
            .all(|c| matches!(c, Component::Normal(name) if name != ".git"));
        let now = match plain && !change.path.is_empty() {
            true => read_now(&sandbox, &change.path)?,
            false => None,
        };
        files.push(ChangedFile {
            path: change.path.clone(),
            before: change.before.clone(),
            before_recorded: change.restorable,
            changed_since: now.as_deref().map(content_hash) != change.after_hash,
            now,
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Some(TurnChanges {
        seq: turn.seq,
        files,
        unrecorded_calls: unrecorded_calls(&turn),
    }))
}

/// What the file `path` holds now; `None` when nothing, or something not a file, is there.
fn read_now(sandbox: &Sandbox, path: &str) -> Result<Option<Vec<u8>>, TurnChangesError> {
    let abs = sandbox.root().join(path);
    let failed = |source| TurnChangesError::Read {
        path: path.to_owned(),
        source,
    };
    match sandbox.metadata(&abs) {
        Ok(meta) if meta.is_file() => sandbox.read(&abs).map(Some).map_err(failed),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(failed(e)),
    }
}
