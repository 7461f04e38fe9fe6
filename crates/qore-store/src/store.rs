//! [`Store`]: the handle on one session database, and everything that writes to it.
//!
//! Promises: each write is one IMMEDIATE transaction, so it is wholly there or wholly absent
//! after a crash or `kill -9`; turns are only ever appended (the one later change is the
//! `undone` flag); `updated_at` strictly increases across the whole store, so "newest first"
//! is a total order even for writes within one millisecond.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection};

use crate::schema::{data_dir, open_connection};
use crate::turn::title_of;
use crate::{StoreError, TurnRecord};

/// The file name of the database inside the data dir.
pub const DB_FILE: &str = "qore.db";

/// An open session database.
pub struct Store {
    pub(crate) conn: Connection,
    path: PathBuf,
}

/// What a new session starts with; every field may be left empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewSession {
    pub name: Option<String>,
    pub project_dir: Option<PathBuf>,
    pub agent: Option<String>,
    pub model: Option<String>,
    /// The original session this one was compressed from.
    pub parent_id: Option<String>,
}

/// The database row id of a stored turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TurnId(pub i64);

impl Store {
    /// Open (creating and migrating as needed) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref().to_owned();
        let conn = open_connection(&path)?;
        Ok(Store { conn, path })
    }

    /// Open `qore.db` in [`data_dir`](crate::data_dir).
    pub fn open_default() -> Result<Store, StoreError> {
        Store::open(data_dir()?.join(DB_FILE))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Create a session and return its id (time-prefixed, so ids sort by creation).
    pub fn create_session(&mut self, new: &NewSession) -> Result<String, StoreError> {
        let id = ulid::Ulid::generate().to_string().to_lowercase();
        let name = new.name.as_deref().map(checked_name).transpose()?;
        let project = new.project_dir.as_deref().map(path_text).transpose()?;
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
        let messages = turn.checked_messages()?;
        let usage = to_json(&turn.usage)?;
        let contents = (messages.iter())
            .map(|m| Ok((role_word(m.role), to_json(m)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        let tx = self.conn.transaction()?;
        let seq: i64 = tx.query_row(
            "SELECT coalesce(max(seq), 0) + 1 FROM turns WHERE session_id = ?1",
            [session],
            |row| row.get(0),
        )?;
        let now = millis(SystemTime::now());
        let touched = tx.execute(
            "UPDATE sessions SET updated_at = ?2, title = coalesce(title, ?3) WHERE id = ?1",
            params![session, next_update(&tx, now)?, title_of(&turn.user)],
        )?;
        if touched == 0 {
            return Err(StoreError::NotFound(session.to_owned()));
        }
        tx.execute(
            "INSERT INTO turns (session_id, seq, started_at, finished_at, model, agent, usage,
                                status)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                session,
                seq,
                millis(turn.started_at),
                millis(turn.finished_at),
                turn.model,
                turn.agent,
                usage,
                turn.status.as_str()
            ],
        )?;
        let turn_id = tx.last_insert_rowid();
        {
            let mut insert = tx.prepare(
                "INSERT INTO messages (turn_id, seq, role, content) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (seq, (role, content)) in contents.iter().enumerate() {
                insert.execute(params![turn_id, seq as i64 + 1, role, content])?;
            }
        }
        crate::file_changes::insert(&tx, turn_id, &turn.file_changes)?;
        tx.commit()?;
        Ok(TurnId(turn_id))
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

    /// Mark a turn undone: it stays stored but leaves [`Store::history`].
    pub fn mark_undone(&mut self, turn: TurnId) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        if tx.execute("UPDATE turns SET undone = 1 WHERE id = ?1", [turn.0])? == 0 {
            return Err(StoreError::NoSuchTurn(turn.0));
        }
        tx.commit()?;
        Ok(())
    }
}

/// Milliseconds since the Unix epoch (0 for a time before it).
pub(crate) fn millis(at: SystemTime) -> i64 {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// `now`, or one past the store's latest `updated_at` when that is not older.
fn next_update(conn: &Connection, now: i64) -> Result<i64, StoreError> {
    let latest: Option<i64> =
        conn.query_row("SELECT max(updated_at) FROM sessions", [], |row| row.get(0))?;
    Ok(latest.map_or(now, |latest| now.max(latest.saturating_add(1))))
}

fn checked_name(name: &str) -> Result<&str, StoreError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(StoreError::EmptyName);
    }
    Ok(name)
}

fn name_conflict(error: rusqlite::Error, name: Option<&str>) -> StoreError {
    match (&error, name) {
        (rusqlite::Error::SqliteFailure(e, _), Some(name))
            if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
        {
            StoreError::NameTaken(name.to_owned())
        }
        _ => error.into(),
    }
}

pub(crate) fn path_text(path: &Path) -> Result<&str, StoreError> {
    path.to_str()
        .ok_or_else(|| StoreError::NonUtf8Path(path.to_owned()))
}

fn role_word(role: qore_core::Role) -> &'static str {
    match role {
        qore_core::Role::System => "system",
        qore_core::Role::User => "user",
        qore_core::Role::Assistant => "assistant",
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(StoreError::Encode)
}
