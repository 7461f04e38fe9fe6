//! [`Db`]: the handle on one session database, and everything that writes to it.
//!
//! Promises: each write is one IMMEDIATE transaction, so it is wholly there or wholly absent
//! after a crash or `kill -9`; turns are only ever appended (the one later change is the
//! `undone` flag); an import writes a whole session with its turns in one transaction, under
//! the same check as an appended turn; `updated_at` strictly increases across the whole store, so "newest first"
//! is a total order even for writes within one millisecond.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection};

use crate::schema::open_connection;
use crate::turn::title_of;
use crate::{StoreError, TurnRecord};

/// The file name of the database inside the data dir.
pub const DB_FILE: &str = "qore.db";

/// An open session database.
pub(crate) struct Db {
    pub(crate) conn: Connection,
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

/// A whole session to write at once ([`Db::import_session`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionImport {
    pub session: NewSession,
    /// Kept as given; `None`: from the first turn's user message.
    pub title: Option<String>,
    /// Kept as given; `None`: now.
    pub created_at: Option<SystemTime>,
    pub turns: Vec<ImportTurn>,
}

/// One turn of an import.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportTurn {
    pub record: TurnRecord,
    /// Stored as undone: kept, but left out of the history.
    pub undone: bool,
}

/// The database row id of a stored turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TurnId(pub i64);

impl Db {
    /// Open (creating and migrating as needed) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Db, StoreError> {
        let conn = open_connection(path.as_ref())?;
        Ok(Db { conn })
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
        let id = ulid::Ulid::generate().to_string().to_lowercase();
        let name = new.name.as_deref().map(checked_name).transpose()?;
        let project = new.project_dir.as_deref().map(path_text).transpose()?;
        let now = millis(SystemTime::now());
        let created = import.created_at.map_or(now, millis);
        let title = (import.title.clone())
            .or_else(|| (import.turns.first()).and_then(|t| title_of(&t.record.user)));
        let tx = self.conn.transaction()?;
        (tx.execute(
            "INSERT INTO sessions (id, name, title, project_dir, agent, model, created_at,
                                   updated_at, parent_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, (SELECT id FROM sessions WHERE id = ?9))",
            params![
                id,
                name,
                title,
                project,
                new.agent,
                new.model,
                created,
                next_update(&tx, now)?,
                new.parent_id
            ],
        ))
        .map_err(|e| name_conflict(e, name))?;
        for (turn, rows) in import.turns.iter().zip(&rows) {
            insert_turn(&tx, &id, &turn.record, rows, turn.undone, None)?;
        }
        tx.commit()?;
        Ok(id)
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
pub(crate) struct TurnRows {
    usage: String,
    messages: Vec<(&'static str, String)>,
}

impl TurnRows {
    pub(crate) fn of(turn: &TurnRecord) -> Result<TurnRows, StoreError> {
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
pub(crate) fn insert_turn(
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
    crate::file_changes::insert(tx, turn_id, &turn.file_changes)?;
    Ok(turn_id)
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

pub(crate) fn checked_name(name: &str) -> Result<&str, StoreError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(StoreError::EmptyName);
    }
    Ok(name)
}

pub(crate) fn name_conflict(error: rusqlite::Error, name: Option<&str>) -> StoreError {
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

pub(crate) fn role_word(role: qore_core::Role) -> &'static str {
    match role {
        qore_core::Role::System => "system",
        qore_core::Role::User => "user",
        qore_core::Role::Assistant => "assistant",
    }
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(StoreError::Encode)
}
