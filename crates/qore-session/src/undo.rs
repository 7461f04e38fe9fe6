//! Undo the last turn of a session: put back the files its tools changed, then take the turn
//! out of the history.
//!
//! Promises:
//! - [`undo_last_turn`] works on the newest turn of the session that is not undone yet, so
//!   calling it again walks further back; with none left it is [`UndoError::NothingToUndo`];
//! - all or nothing: every file is checked before any is written. A file whose content is no
//!   longer what the turn left ([`UndoError::ChangedSince`]), whose prior content was not
//!   recorded ([`UndoError::NotRestorable`]) or whose stored path is not a plain path inside
//!   the project ([`UndoError::BadPath`]) stops the undo with a message naming it, and nothing
//!   is written. A write that fails midway, or a store that cannot mark the turn undone, puts
//!   back what was already written;
//! - a file that existed before the turn gets its old bytes back (missing directories are
//!   made again); a file the turn created is removed (directories it created are left);
//! - writes go through `qore_tools::Sandbox`'s handle on the project root, so no symlink
//!   leads them out of it. Ignore rules do not apply: undo puts back what a tool wrote;
//! - the [`UndoReport`] says what was restored and removed, and names the turn's calls whose
//!   file changes were not recorded (`run_command`, tools of MCP servers): what they did
//!   stays.
//!
//! # Integration (the Session)
//! Give the tools a recorder and hand its record to the turn when the turn ends:
//!
//! ```text
//! let recorder = qore_tools::ChangeRecorder::new();
//! options.record_changes = Some(recorder.clone());        // ToolOptions of builtin_tools
//! ...
//! turn_record.file_changes = undo::take_changes(&recorder); // before Store::append_turn
//! ```
//!
//! `/undo` is then `undo::undo_last_turn(store.as_ref(), &session_id, &project_dir).await`
//! (any [`Store`] backend); the session reloads its history from the store afterwards.

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

use qore_core::ContentBlock;
use qore_store::{FileChange, Store, StoreError, TurnId, UndoableTurn};
use qore_tools::{content_hash, records_every_change, Before, ChangeRecorder, Sandbox};

/// Why a turn was not undone. Nothing was changed, on disk or in the store.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    /// Every turn is undone already (or there is none).
    #[error("nothing to undo: the session has no turn left that is not undone")]
    NothingToUndo,
    #[error(
        "not undone: `{path}` was changed after turn {seq} (it no longer holds what the turn \
         left there); nothing was written"
    )]
    /// A file the turn changed was changed again since; nothing was written.
    ChangedSince {
        /// The file.
        path: String,
        /// The turn undone.
        seq: i64,
    },
    #[error(
        "not undone: the content `{path}` had before turn {seq} was not recorded (the file was \
         too large); nothing was written"
    )]
    /// The file's content before the turn was not recorded (too large); nothing was written.
    NotRestorable {
        /// The file.
        path: String,
        /// The turn undone.
        seq: i64,
    },
    /// A stored path is not a plain path inside the project.
    #[error("not undone: the stored path `{path}` is not a plain path inside the project")]
    BadPath {
        /// The path as stored.
        path: String,
    },
    /// Writing or removing a file failed; the files were left as they were.
    #[error("not undone: cannot {action} `{path}`: {source}; the files were left as they were")]
    Io {
        /// What was being done (`write`, `remove`).
        action: &'static str,
        /// The file.
        path: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// Reading or writing the store failed.
    #[error("not undone: {0}")]
    Store(#[from] StoreError),
}

/// What undoing a turn did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileUndo {
    /// The file has its content from before the turn again.
    Restored,
    /// The turn created the file; it is gone again.
    Removed,
}

/// What [`undo_last_turn`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct UndoReport {
    /// The turn undone.
    pub turn: TurnId,
    /// The turn's 1-based position in its session.
    pub seq: i64,
    /// Each file the turn had changed, by path, and what was done to it.
    pub files: Vec<(String, FileUndo)>,
    /// The turn's tool calls whose file changes are not recorded, e.g. `run_command
    /// \`cargo fmt\``: whatever they changed stays.
    pub unrecorded_calls: Vec<String>,
}

impl fmt::Display for UndoReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Undid turn {}", self.seq)?;
        if self.files.is_empty() {
            write!(f, "; it changed no file")?;
        }
        for (path, done) in &self.files {
            let verb = match done {
                FileUndo::Restored => "restored",
                FileUndo::Removed => "removed",
            };
            write!(f, "\n  {verb} {path}")?;
        }
        if !self.unrecorded_calls.is_empty() {
            write!(
                f,
                "\nThe turn also ran {}; file changes made that way are not recorded and were \
                 not undone.",
                self.unrecorded_calls.join(", ")
            )?;
        }
        Ok(())
    }
}

/// The recorder's record of the turn that just ended, as the store keeps it; the recorder
/// starts empty for the next turn.
pub fn take_changes(recorder: &ChangeRecorder) -> Vec<FileChange> {
    let stored = |change: qore_tools::FileChange| {
        let (before, restorable) = match change.before {
            Before::Absent => (None, true),
            Before::Content(bytes) => (Some(bytes), true),
            Before::NotRecorded { .. } => (None, false),
        };
        FileChange {
            path: change.path,
            before,
            after_hash: Some(change.after_hash),
            restorable,
        }
    };
    recorder.take().into_iter().map(stored).collect()
}

/// Undo the newest turn of `session` (an exact id) that is not undone: restore the files it
/// changed under `project`, then mark it undone. See the module doc.
pub async fn undo_last_turn(
    store: &dyn Store,
    session: &str,
    project: &Path,
) -> Result<UndoReport, UndoError> {
    let turn = store
        .last_undoable_turn(session)
        .await?
        .ok_or(UndoError::NothingToUndo)?;
    let sandbox = Sandbox::new(project).map_err(|e| UndoError::Io {
        action: "open the project",
        path: project.display().to_string(),
        source: io::Error::other(e),
    })?;
    let plan = (turn.file_changes.iter())
        .map(|change| checked(&sandbox, change, turn.seq))
        .collect::<Result<Vec<_>, _>>()?;
    let mut done = Vec::with_capacity(plan.len());
    for step in &plan {
        if let Err(source) = put(&sandbox, &step.abs, step.before.as_deref()) {
            put_back(&sandbox, &plan[..done.len()]);
            let action = if step.before.is_some() {
                "restore"
            } else {
                "remove"
            };
            return Err(UndoError::Io {
                action,
                path: step.path.clone(),
                source,
            });
        }
        let how = match step.before {
            Some(_) => FileUndo::Restored,
            None => FileUndo::Removed,
        };
        done.push((step.path.clone(), how));
    }
    if let Err(e) = store.mark_undone(turn.id).await {
        put_back(&sandbox, &plan);
        return Err(e.into());
    }
    Ok(UndoReport {
        turn: turn.id,
        seq: turn.seq,
        files: done,
        unrecorded_calls: unrecorded_calls(&turn),
    })
}

/// One file to put back: where, what it holds now, what it held before the turn.
struct Step {
    path: String,
    abs: PathBuf,
    now: Option<Vec<u8>>,
    before: Option<Vec<u8>>,
}

/// The step for `change`, or why the turn cannot be undone.
fn checked(sandbox: &Sandbox, change: &FileChange, seq: i64) -> Result<Step, UndoError> {
    let path = &change.path;
    let plain = Path::new(path)
        .components()
        .all(|c| matches!(c, Component::Normal(name) if name != ".git"));
    if path.is_empty() || !plain {
        return Err(UndoError::BadPath { path: path.clone() });
    }
    if !change.restorable {
        return Err(UndoError::NotRestorable {
            path: path.clone(),
            seq,
        });
    }
    let abs = sandbox.root().join(path);
    let io_error = |source| UndoError::Io {
        action: "read",
        path: path.clone(),
        source,
    };
    let changed_since = || UndoError::ChangedSince {
        path: path.clone(),
        seq,
    };
    let now = match sandbox.metadata(&abs) {
        Ok(meta) if meta.is_file() => Some(sandbox.read(&abs).map_err(io_error)?),
        Ok(_) => return Err(changed_since()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_error(e)),
    };
    if now.as_deref().map(content_hash) != change.after_hash {
        return Err(changed_since());
    }
    Ok(Step {
        path: path.clone(),
        abs,
        now,
        before: change.before.clone(),
    })
}

/// Make the file at `abs` hold `content` (`None`: not exist).
fn put(sandbox: &Sandbox, abs: &Path, content: Option<&[u8]>) -> io::Result<()> {
    match content {
        Some(bytes) => sandbox.replace(abs, bytes),
        None => match sandbox.remove_file(abs) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            removed => removed,
        },
    }
}

/// Return the files of `steps` to what they held before the undo began (best effort: this
/// runs only after a failure, whose error is the one reported).
fn put_back(sandbox: &Sandbox, steps: &[Step]) {
    for step in steps {
        if let Err(e) = put(sandbox, &step.abs, step.now.as_deref()) {
            tracing::warn!(path = %step.path, error = %e, "undo: cannot put a file back");
        }
    }
}

/// The turn's calls of tools whose file changes are not recorded, each once.
pub(crate) fn unrecorded_calls(turn: &UndoableTurn) -> Vec<String> {
    let mut calls: Vec<String> = Vec::new();
    let blocks = turn.messages.iter().flat_map(|m| &m.blocks);
    for block in blocks {
        let ContentBlock::ToolUse { name, input, .. } = block else {
            continue;
        };
        if records_every_change(name) {
            continue;
        }
        let argv = input.get("argv").and_then(|a| a.as_array());
        let words: Option<Vec<&str>> = argv.map(|a| a.iter().filter_map(|w| w.as_str()).collect());
        let call = match words {
            Some(words) if !words.is_empty() => format!("{name} `{}`", words.join(" ")),
            _ => name.clone(),
        };
        if !calls.contains(&call) {
            calls.push(call);
        }
    }
    calls
}
