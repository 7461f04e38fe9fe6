//! Writing sessions and turns on SQLite: everything that changes the `sessions`, `turns`,
//! `messages` and `file_changes` tables.
//!
//! Promises: each write is one IMMEDIATE transaction, so it is wholly there or wholly absent
//! after a crash or `kill -9`; a turn is checked ([`TurnRecord::checked_messages`]) before the
//! transaction starts; turns are only ever appended (the one later change is the `undone`
//! flag); an import writes a whole session with its turns in one transaction, under the same
//! check as an appended turn; `updated_at` strictly increases across the whole store, so
//! "newest first" is a total order even for writes within one millisecond. Names are trimmed
//! and unique ([`StoreError::NameTaken`]); a parent that is not there is
//! [`StoreError::NotFound`] on create and dropped on import; a turn id that is not there is
//! [`StoreError::NoSuchTurn`].

use std::time::SystemTime;

use rusqlite::{params, Connection};

use crate::codec::{millis, new_id, role_word, to_json};
use crate::sessions::{checked_name, checked_session, ImportRow};
use crate::turn::title_of;
use crate::{FileChange, NewSession, SessionImport, StoreError, TurnId, TurnRecord};

use super::Db;

impl Db {
    /// Create a session and return its id (time-prefixed, so ids sort by creation).
    pub fn create_session(&mut self, new: &NewSession) -> Result<String, StoreError> {
        let id = new_id();
        let (name, project) = checked_session(new)?;
        let now = millis(SystemTime::now());
        let tx = self.conn.transaction()?;
        let inserted = tx.execute(
            "INSERT INTO sessions (id, name, project_dir, agent, model, created_at, updated_at,
                                   parent_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                id,
                name,
                project,
                new.agent,
                new.model,
                now,
                next_update(&tx, now)?,
                new.parent_id
            ],
        );
        inserted.map_err(|e| match (&e, &new.parent_id) {
            (rusqlite::Error::SqliteFailure(f, _), Some(parent))
                if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY =>
            {
                StoreError::NotFound(parent.clone())
            }
            _ => name_conflict(e, name),
        })?;
        tx.commit()?;
        Ok(id)
    }

    /// Commit one whole turn to a session in one transaction and return its id. The turn is
    /// checked first ([`TurnRecord::checked_messages`]); the session's title is set from the
    /// first user message if it has none.
    pub fn append_turn(&mut self, session: &str, turn: &TurnRecord) -> Result<TurnId, StoreError> {
        let rows = TurnRows::of(turn)?;
        let tx = self.conn.transaction()?;
        let now = millis(SystemTime::now());
        let touched = tx.execute(
            "UPDATE sessions SET updated_at = ?2, title = coalesce(title, ?3) WHERE id = ?1",
            params![session, next_update(&tx, now)?, title_of(&turn.user)],
        )?;
        if touched == 0 {
            return Err(StoreError::NotFound(session.to_owned()));
        }
        let turn_id = insert_turn(&tx, session, turn, &rows, false, None)?;
        tx.commit()?;
        Ok(TurnId(turn_id))
    }

    /// Write a whole session with its turns in one transaction (an import) and return its new
    /// id. Every turn is checked as [`Db::append_turn`] checks it, and nothing is written
    /// when one is refused. The given creation time and the turns' times are kept; the
    /// session is written now, so it lists as the newest. A `parent_id` that names no session
    /// here is dropped.
    pub fn import_session(&mut self, import: &SessionImport) -> Result<String, StoreError> {
        let rows = (import.turns.iter())
            .map(|turn| TurnRows::of(&turn.record))
            .collect::<Result<Vec<_>, _>>()?;
        let new = &import.session;
        let row = ImportRow::of(import)?;
        let tx = self.conn.transaction()?;
        (tx.execute(
            "INSERT INTO sessions (id, name, title, project_dir, agent, model, created_at,
                                   updated_at, parent_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, (SELECT id FROM sessions WHERE id = ?9))",
            params![
                row.id,
                row.name,
                row.title,
                row.project,
                new.agent,
                new.model,
                row.created,
                next_update(&tx, row.now)?,
                new.parent_id
            ],
        ))
        .map_err(|e| name_conflict(e, row.name))?;
        for (turn, rows) in import.turns.iter().zip(&rows) {
            insert_turn(&tx, &row.id, &turn.record, rows, turn.undone, None)?;
        }
        tx.commit()?;
        Ok(row.id)
    }

    /// Give a session (found by id, name or unique id prefix) a new unique name.
    pub fn rename(&mut self, session: &str, name: &str) -> Result<(), StoreError> {
        let name = checked_name(name)?;
        let id = self.session(session)?.id;
        let tx = self.conn.transaction()?;
        (tx.execute(
            "UPDATE sessions SET name = ?2 WHERE id = ?1",
            params![id, name],
        ))
        .map_err(|e| name_conflict(e, Some(name)))?;
        tx.commit()?;
        Ok(())
    }

    /// Delete a session (found by id, name or unique id prefix) with its turns and messages.
    /// Sessions compressed from it keep existing, without the link.
    pub fn remove(&mut self, session: &str) -> Result<(), StoreError> {
        let id = self.session(session)?.id;
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM sessions WHERE id = ?1", [id])?;
        tx.commit()?;
        Ok(())
    }

    /// Mark a turn undone: it stays stored but leaves [`Db::history`].
    pub fn mark_undone(&mut self, turn: TurnId) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        if tx.execute("UPDATE turns SET undone = 1 WHERE id = ?1", [turn.0])? == 0 {
            return Err(StoreError::NoSuchTurn(turn.0));
        }
        tx.commit()?;
        Ok(())
    }
}

/// A turn's rows, encoded and checked before any transaction starts.
pub(super) struct TurnRows {
    usage: String,
    messages: Vec<(&'static str, String)>,
}

impl TurnRows {
    pub(super) fn of(turn: &TurnRecord) -> Result<TurnRows, StoreError> {
        let messages = (turn.checked_messages()?.into_iter())
            .map(|m| Ok((role_word(m.role), to_json(m)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(TurnRows {
            usage: to_json(&turn.usage)?,
            messages,
        })
    }
}

/// Insert one checked turn as the session's next (or at `seq` when given: a copy), inside
/// the caller's transaction.
pub(super) fn insert_turn(
    tx: &Connection,
    session: &str,
    turn: &TurnRecord,
    rows: &TurnRows,
    undone: bool,
    seq: Option<i64>,
) -> Result<i64, StoreError> {
    let seq: i64 = match seq {
        Some(seq) => seq,
        None => tx.query_row(
            "SELECT coalesce(max(seq), 0) + 1 FROM turns WHERE session_id = ?1",
            [session],
            |row| row.get(0),
        )?,
    };
    tx.execute(
        "INSERT INTO turns (session_id, seq, started_at, finished_at, model, agent, usage,
                            status, undone)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            session,
            seq,
            millis(turn.started_at),
            millis(turn.finished_at),
            turn.model,
            turn.agent,
            rows.usage,
            turn.status.as_str(),
            undone
        ],
    )?;
    let turn_id = tx.last_insert_rowid();
    let mut insert =
        tx.prepare("INSERT INTO messages (turn_id, seq, role, content) VALUES (?1, ?2, ?3, ?4)")?;
    for (seq, (role, content)) in rows.messages.iter().enumerate() {
        insert.execute(params![turn_id, seq as i64 + 1, role, content])?;
    }
    insert_file_changes(tx, turn_id, &turn.file_changes)?;
    Ok(turn_id)
}

/// Write a turn's changes inside the turn's transaction.
fn insert_file_changes(
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

/// `now`, or one past the store's latest `updated_at` when that is not older.
fn next_update(conn: &Connection, now: i64) -> Result<i64, StoreError> {
    let latest: Option<i64> =
        conn.query_row("SELECT max(updated_at) FROM sessions", [], |row| row.get(0))?;
    Ok(latest.map_or(now, |latest| now.max(latest.saturating_add(1))))
}

/// A session write's error: [`StoreError::NameTaken`] when `name` is taken, else as it is.
pub(super) fn name_conflict(error: rusqlite::Error, name: Option<&str>) -> StoreError {
    match (&error, name) {
        (rusqlite::Error::SqliteFailure(e, _), Some(name))
            if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
        {
            StoreError::NameTaken(name.to_owned())
        }
        _ => error.into(),
    }
}
