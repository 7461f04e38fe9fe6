//! The files a turn's tools changed (schema version 2, table `file_changes`): written in the
//! turn's own transaction, read back for the last turn that can still be undone.
//!
//! Promises: a turn's changes are checked before anything is written (a path is given once,
//! is relative, and a change without its prior content is marked not restorable) and
//! committed with the turn or not at all; [`Db::last_undoable_turn`] gives the newest turn
//! of a session that is not undone, with its changes sorted by path and its messages (so the
//! caller can see which tools it called).

use std::collections::HashSet;

use qore_core::Message;
use rusqlite::{params, Connection, OptionalExtension};

use crate::store::Db;
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

/// Write a turn's changes inside the turn's transaction.
pub(crate) fn insert(
    conn: &Connection,
    turn: i64,
    changes: &[FileChange],
) -> Result<(), StoreError> {
    let mut insert = conn.prepare(
        "INSERT INTO file_changes (turn_id, path, before, after_hash, restorable)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for change in changes {
        insert.execute(params![
            turn,
            change.path,
            change.before,
            change.after_hash,
            change.restorable
        ])?;
    }
    Ok(())
}

impl Db {
    /// The newest turn of `session` (an exact id) that is not undone; `None` when every turn
    /// is undone or there is none.
    pub fn last_undoable_turn(&self, session: &str) -> Result<Option<UndoableTurn>, StoreError> {
        let found: Option<(Option<i64>, Option<i64>)> = (self.conn)
            .query_row(
                "SELECT t.id, t.seq FROM sessions s LEFT JOIN turns t
                   ON t.id = (SELECT id FROM turns WHERE session_id = s.id AND undone = 0
                              ORDER BY seq DESC LIMIT 1)
                 WHERE s.id = ?1",
                [session],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        let (id, seq) = match found {
            None => return Err(StoreError::NotFound(session.to_owned())),
            Some((Some(id), Some(seq))) => (id, seq),
            Some(_) => return Ok(None),
        };
        Ok(Some(UndoableTurn {
            id: TurnId(id),
            seq,
            file_changes: self.file_changes(id)?,
            messages: self.messages_of_turn(id)?,
        }))
    }

    /// A turn's changes (a cached statement: listing sessions reads them for every turn).
    pub(crate) fn file_changes(&self, turn: i64) -> Result<Vec<FileChange>, StoreError> {
        let mut query = self.conn.prepare_cached(
            "SELECT path, before, after_hash, restorable FROM file_changes
             WHERE turn_id = ?1 ORDER BY path",
        )?;
        let rows = query.query_map([turn], |row| {
            Ok(FileChange {
                path: row.get(0)?,
                before: row.get(1)?,
                after_hash: row.get(2)?,
                restorable: row.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn messages_of_turn(&self, turn: i64) -> Result<Vec<Message>, StoreError> {
        let mut query = self
            .conn
            .prepare("SELECT id, content FROM messages WHERE turn_id = ?1 ORDER BY seq")?;
        let rows = query.query_map([turn], |row| Ok((row.get::<_, i64>(0)?, row.get(1)?)))?;
        let mut messages = Vec::new();
        for row in rows {
            let (id, content): (i64, String) = row?;
            let message = serde_json::from_str(&content).map_err(|source| StoreError::Corrupt {
                what: format!("message {id}"),
                source,
            })?;
            messages.push(message);
        }
        Ok(messages)
    }
}

#[cfg(test)]
#[path = "file_changes_tests.rs"]
mod tests;
