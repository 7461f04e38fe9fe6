//! The record of the file changes a turn's tools make, kept so the turn can be undone.
//!
//! Promises:
//! - a [`ChangeRecorder`] is cheap to clone (clones share one record) and thread-safe, so
//!   every writing tool of a session, parallel calls included, records into the same place;
//!   the built-in tools get it through [`ToolOptions::record_changes`](crate::ToolOptions);
//! - per path (relative to the project root, `/`-separated) it keeps what the file held
//!   before the turn's FIRST change to it ([`Before`]: the bytes, "did not exist", or "not
//!   recorded" for a file larger than the limit, [`MAX_RECORDED_BYTES`] by default, or once
//!   the turn's recorded contents would pass [`MAX_RECORDED_TURN_BYTES`]) and the SHA-256 of
//!   what the LAST change left ([`content_hash`]), so undo can tell whether the file was
//!   changed since;
//! - a write that leaves a file as it was before the turn, with no earlier change to it,
//!   records nothing;
//! - [`ChangeRecorder::take`] hands over the turn's record (sorted by path) and starts an
//!   empty one: a front end calls it when the turn ends.
//!
//! Not recorded: what `run_command` (or any tool outside this crate) does to files. Undo
//! finds such calls in the turn's messages and says that their changes stay
//! ([`records_every_change`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use sha2::{Digest, Sha256};

/// Files larger than this (8 MiB) before a turn changed them are recorded as not restorable.
pub const MAX_RECORDED_BYTES: u64 = 8 * 1024 * 1024;

/// The prior contents one turn records at most (64 MiB, eight files at the per-file limit);
/// files past it are recorded as not restorable.
pub const MAX_RECORDED_TURN_BYTES: u64 = 64 * 1024 * 1024;

/// What a file held before the turn's first change to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Before {
    /// The file did not exist: undoing removes it.
    Absent,
    /// The file's bytes.
    Content(Vec<u8>),
    /// The file was larger than the recorder's limit, or the turn had recorded its fill (the
    /// file's size in bytes): it cannot be restored.
    NotRecorded { bytes: u64 },
}

/// One file a turn changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Relative to the project root, with `/` separators.
    pub path: String,
    pub before: Before,
    /// [`content_hash`] of what the turn's last change left in the file.
    pub after_hash: String,
}

/// Where the writing tools of one session record their changes. See the module doc.
#[derive(Debug, Clone)]
pub struct ChangeRecorder {
    limit: u64,
    turn_limit: u64,
    record: Arc<Mutex<Record>>,
}

/// One turn's changes, and the bytes of prior content they hold.
#[derive(Debug, Default)]
struct Record {
    changes: BTreeMap<String, FileChange>,
    bytes: u64,
}

impl Default for ChangeRecorder {
    fn default() -> Self {
        ChangeRecorder::with_limits(MAX_RECORDED_BYTES, MAX_RECORDED_TURN_BYTES)
    }
}

impl ChangeRecorder {
    /// A recorder that keeps prior contents up to [`MAX_RECORDED_BYTES`] per file.
    pub fn new() -> ChangeRecorder {
        ChangeRecorder::default()
    }

    /// A recorder that keeps prior contents up to `limit` bytes per file and `turn_limit`
    /// bytes per turn.
    pub fn with_limits(limit: u64, turn_limit: u64) -> ChangeRecorder {
        ChangeRecorder {
            limit,
            turn_limit,
            record: Arc::default(),
        }
    }

    /// Note that the file at `path` (relative to the root) held `before` (`None`: it did not
    /// exist) and now holds `after`. Only the first `before` of a path in a turn is kept.
    pub fn record(&self, path: &str, before: Option<&[u8]>, after: &[u8]) {
        let after_hash = content_hash(after);
        let mut record = self.record.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(change) = record.changes.get_mut(path) {
            change.after_hash = after_hash;
            return;
        }
        if before == Some(after) {
            return;
        }
        let before = match before {
            None => Before::Absent,
            Some(bytes) => {
                let size = bytes.len() as u64;
                let filled = record.bytes.saturating_add(size) > self.turn_limit;
                if size > self.limit || filled {
                    Before::NotRecorded { bytes: size }
                } else {
                    record.bytes += size;
                    Before::Content(bytes.to_vec())
                }
            }
        };
        let change = FileChange {
            path: path.to_owned(),
            before,
            after_hash,
        };
        record.changes.insert(path.to_owned(), change);
    }

    /// The turn's record, sorted by path; the recorder starts empty again.
    pub fn take(&self) -> Vec<FileChange> {
        let mut record = self.record.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::take(&mut *record).changes.into_values().collect()
    }
}

/// The lowercase hex SHA-256 of `bytes`: how a file's content after a turn is recorded.
pub fn content_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The built-in tools whose file changes are all in the record: they change no file, or
/// record what they change. A turn that called any other tool (`run_command`, a tool of an
/// MCP server) may have changed files that undo cannot restore.
pub const RECORDING_TOOLS: &[&str] = &[
    "list_files",
    "find_file",
    "read_file",
    "search",
    "todo",
    "create_file",
    "write_file",
    "edit_file",
];

/// Whether every file change the tool `name` makes is recorded (see [`RECORDING_TOOLS`]).
pub fn records_every_change(name: &str) -> bool {
    RECORDING_TOOLS.contains(&name)
}

#[cfg(test)]
#[path = "changes_tests.rs"]
mod tests;
