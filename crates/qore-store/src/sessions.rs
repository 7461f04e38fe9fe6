//! The records of sessions and turns, as both backends write and read them, and the checks
//! every session write makes before it touches the database.
//!
//! Promises: a session name is trimmed and not empty ([`StoreError::EmptyName`]); a project
//! directory is stored only as UTF-8 text ([`StoreError::NonUtf8Path`]); an import without a
//! title takes its first turn's ([`title_of`]). A stored row is decoded the same way on
//! either backend: a turn without messages, with a status word that is not one of
//! [`TurnStatus`]'s, or with usage that is not JSON is an error naming it, never a panic.

use std::iter::Peekable;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use qore_core::{Message, Usage};

use crate::codec::{from_json, millis, new_id, time_of};
use crate::turn::{status_of, title_of};
use crate::{FileChange, StoreError, TurnRecord};

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

/// A whole session to write at once ([`Store::import_session`](crate::Store::import_session)).
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

/// A turn as stored: its id, its 1-based place in the session, whether it was undone, and
/// the whole record (its messages as stored: a failed turn's partial answer is not there).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTurn {
    pub id: TurnId,
    pub seq: i64,
    pub undone: bool,
    pub record: TurnRecord,
}

/// A session as listed: its row plus its turn and message counts and the latest reported
/// usage.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub id: String,
    pub name: Option<String>,
    pub title: Option<String>,
    pub project_dir: Option<String>,
    pub agent: Option<String>,
    pub model: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Milliseconds since the Unix epoch, strictly increasing across the store.
    pub updated_at: i64,
    pub parent_id: Option<String>,
    /// All stored turns, undone ones included.
    pub turn_count: i64,
    /// All stored messages, those of undone turns included.
    pub message_count: i64,
    pub last_usage: Option<Usage>,
}

/// A session name as stored: trimmed, not empty.
pub(crate) fn checked_name(name: &str) -> Result<&str, StoreError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(StoreError::EmptyName);
    }
    Ok(name)
}

/// A path as stored: its UTF-8 text.
pub(crate) fn path_text(path: &Path) -> Result<&str, StoreError> {
    path.to_str()
        .ok_or_else(|| StoreError::NonUtf8Path(path.to_owned()))
}

/// A new session's name ([`checked_name`]) and project directory ([`path_text`]).
pub(crate) fn checked_session(
    new: &NewSession,
) -> Result<(Option<&str>, Option<&str>), StoreError> {
    let name = new.name.as_deref().map(checked_name).transpose()?;
    let project = new.project_dir.as_deref().map(path_text).transpose()?;
    Ok((name, project))
}

/// An import's session row, checked (its turns are checked by each backend first).
pub(crate) struct ImportRow<'a> {
    /// The new session's id.
    pub id: String,
    pub name: Option<&'a str>,
    pub project: Option<&'a str>,
    /// As given, else its first turn's user message's ([`title_of`]).
    pub title: Option<String>,
    /// As given, else `now`.
    pub created: i64,
    /// When it is written: it lists as the newest.
    pub now: i64,
}

impl ImportRow<'_> {
    pub(crate) fn of(import: &SessionImport) -> Result<ImportRow<'_>, StoreError> {
        let id = new_id();
        let (name, project) = checked_session(&import.session)?;
        let now = millis(SystemTime::now());
        Ok(ImportRow {
            id,
            name,
            project,
            title: (import.title.clone())
                .or_else(|| (import.turns.first()).and_then(|t| title_of(&t.record.user))),
            created: import.created_at.map_or(now, millis),
            now,
        })
    }
}

/// A session row as read, before its latest usage (JSON, the last column) is decoded.
pub(crate) struct SessionRow(pub SessionInfo, pub Option<String>);

impl SessionRow {
    pub(crate) fn decode(self) -> Result<SessionInfo, StoreError> {
        let SessionRow(mut info, usage) = self;
        if let Some(text) = usage {
            info.last_usage = Some(from_json(&text, || {
                format!("usage of session {}", info.id)
            })?);
        }
        Ok(info)
    }
}

/// A stored turn's columns before decoding.
pub(crate) struct TurnRow {
    pub id: i64,
    pub seq: i64,
    pub undone: bool,
    pub usage: String,
    pub model: Option<String>,
    pub agent: Option<String>,
    pub started_at: i64,
    pub finished_at: i64,
    pub status: String,
}

impl TurnRow {
    /// The stored turn with its messages, in order, and its file changes (read only once
    /// the row itself has decoded).
    pub(crate) fn decode(
        self,
        messages: Vec<Message>,
        file_changes: impl FnOnce() -> Result<Vec<FileChange>, StoreError>,
    ) -> Result<StoredTurn, StoreError> {
        let id = self.id;
        let mut messages = messages.into_iter();
        let user = messages.next().ok_or_else(|| {
            StoreError::MalformedTurn(format!("stored turn {id} has no messages"))
        })?;
        let status = status_of(&self.status).ok_or_else(|| {
            StoreError::MalformedTurn(format!("stored turn {id} has status '{}'", self.status))
        })?;
        let record = TurnRecord {
            user,
            replies: messages.collect(),
            usage: from_json(&self.usage, || format!("usage of turn {id}"))?,
            model: self.model,
            agent: self.agent,
            started_at: time_of(self.started_at),
            finished_at: time_of(self.finished_at),
            status,
            file_changes: file_changes()?,
        };
        Ok(StoredTurn {
            id: TurnId(id),
            seq: self.seq,
            undone: self.undone,
            record,
        })
    }
}

/// The leading items of `rows` ((turn id, item) pairs in turn order) that belong to `turn`.
pub(crate) fn take_turn<T>(
    rows: &mut Peekable<impl Iterator<Item = (i64, T)>>,
    turn: i64,
) -> Vec<T> {
    let mut own = Vec::new();
    while let Some((_, item)) = rows.next_if(|(of, _)| *of == turn) {
        own.push(item);
    }
    own
}
