//! The files a turn's tools changed (table `file_changes`): the records both backends store
//! with a turn and give back for the last turn that can still be undone.
//!
//! Promises: a turn's changes are checked before anything is written ([`check`]: a path is
//! given once, is relative, and a change without its prior content is marked not
//! restorable) and committed with the turn or not at all; the last undoable turn
//! ([`UndoableTurn`]) is the newest turn of a session that is not undone, with its changes
//! sorted by path and its messages (so the caller can see which tools it called).

use std::collections::HashSet;

use qore_core::Message;

use crate::{StoreError, TurnId};

/// One file a turn changed, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Relative to the project directory, with `/` separators.
    pub path: String,
    /// What the file held before the turn; `None` when it did not exist (or, for a change
    /// that is not restorable, when it was not recorded).
    pub before: Option<Vec<u8>>,
    /// The lowercase hex SHA-256 of what the turn left in the file; `None` when the turn left
    /// no file there.
    pub after_hash: Option<String>,
    /// Whether `before` is what the file held (false: it was too large to record).
    pub restorable: bool,
}

/// The newest turn of a session that is not undone, as undo needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct UndoableTurn {
    pub id: TurnId,
    /// The turn's 1-based position in its session.
    pub seq: i64,
    pub file_changes: Vec<FileChange>,
    /// The turn's stored messages, in order.
    pub messages: Vec<Message>,
}

/// Why a turn's changes cannot be stored, if they cannot.
pub(crate) fn check(changes: &[FileChange]) -> Result<(), StoreError> {
    let mut seen = HashSet::new();
    for change in changes {
        let path = &change.path;
        let why = if path.is_empty() || path.starts_with('/') {
            "is not a path relative to the project"
        } else if !seen.insert(path.as_str()) {
            "is given twice"
        } else if !change.restorable && change.before.is_some() {
            "is not restorable but has its prior content"
        } else {
            continue;
        };
        return Err(StoreError::MalformedTurn(format!(
            "the file change of `{path}` {why}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_changes_are_named() {
        let change = |path: &str, restorable, before: Option<&[u8]>| FileChange {
            path: path.into(),
            before: before.map(<[u8]>::to_vec),
            after_hash: Some("00".into()),
            restorable,
        };
        let cases = [
            (vec![change("", true, None)], "relative"),
            (vec![change("/etc/passwd", true, None)], "relative"),
            (
                vec![change("a", true, None), change("a", true, None)],
                "twice",
            ),
            (vec![change("big", false, Some(b"x"))], "not restorable"),
        ];
        for (changes, reason) in cases {
            let why = check(&changes).unwrap_err().to_string();
            assert!(why.contains(reason), "{why}");
        }
        assert!(check(&[change("a", true, None), change("b", false, None)]).is_ok());
    }
}
