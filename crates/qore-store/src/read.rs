//! Everything that reads the store: finding a session, listing sessions, rebuilding history,
//! reading whole turns back.
//!
//! Promises: a session is found by exact id, then exact name, then unique id prefix (the one
//! resolver every command uses); an ambiguous prefix is an error that lists the candidates.
//! Listings carry turn and message counts and the latest turn's usage. History is rebuilt
//! from stored turns in order, skipping undone ones; [`Db::turns`] gives every turn with
//! its record (times, usage, status, messages). A stored row that does not decode is an
//! error naming it, never a panic or a silent gap.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use qore_core::{History, Message, Usage};
use rusqlite::{params, OptionalExtension, Row};

use crate::store::path_text;
use crate::store::Db;
use crate::{StoreError, TurnId, TurnRecord, TurnStatus};

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

/// How many sessions an ambiguous prefix lists (then "…").
const MOST_CANDIDATES: usize = 20;

const SELECT_INFO: &str = "
SELECT s.id, s.name, s.title, s.project_dir, s.agent, s.model, s.created_at, s.updated_at,
       s.parent_id,
       (SELECT count(*) FROM turns t WHERE t.session_id = s.id),
       (SELECT count(*) FROM turns t JOIN messages m ON m.turn_id = t.id
         WHERE t.session_id = s.id),
       (SELECT t.usage FROM turns t
         WHERE t.session_id = s.id AND t.undone = 0
           AND json_extract(t.usage, '$.input_tokens') IS NOT NULL
         ORDER BY t.seq DESC LIMIT 1)
FROM sessions s";

struct RawInfo(SessionInfo, Option<String>);

fn raw_info(row: &Row<'_>) -> rusqlite::Result<RawInfo> {
    let info = SessionInfo {
        id: row.get(0)?,
        name: row.get(1)?,
        title: row.get(2)?,
        project_dir: row.get(3)?,
        agent: row.get(4)?,
        model: row.get(5)?,
        created_at: row.get(6)?,
        updated_at: row.get(7)?,
        parent_id: row.get(8)?,
        turn_count: row.get(9)?,
        message_count: row.get(10)?,
        last_usage: None,
    };
    Ok(RawInfo(info, row.get(11)?))
}

fn decoded(raw: RawInfo) -> Result<SessionInfo, StoreError> {
    let RawInfo(mut info, usage) = raw;
    if let Some(text) = usage {
        info.last_usage = Some(from_json(&text, || {
            format!("usage of session {}", info.id)
        })?);
    }
    Ok(info)
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    text: &str,
    what: impl FnOnce() -> String,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|source| StoreError::Corrupt {
        what: what(),
        source,
    })
}

impl Db {
    /// The session whose id or name is `key`, else the one whose id starts with `key`.
    pub fn session(&self, key: &str) -> Result<SessionInfo, StoreError> {
        let exact = self.query_infos(
            &format!("{SELECT_INFO} WHERE s.id = ?1 OR s.name = ?1 ORDER BY s.id = ?1 DESC"),
            params![key],
        )?;
        if let Some(info) = exact.into_iter().next() {
            return Ok(info);
        }
        let key_lower = key.to_lowercase();
        // Ids are ASCII: every id starting with the key sorts between the key and the key
        // followed by the highest character, so the primary key's index finds them.
        let upper = format!("{key_lower}\u{10FFFF}");
        let mut found = if key.is_empty() {
            Vec::new()
        } else {
            self.query_infos(
                &format!(
                    "{SELECT_INFO} WHERE s.id >= ?1 AND s.id < ?2 AND substr(s.id, 1, length(?1)) = ?1
                     ORDER BY s.id LIMIT {}",
                    MOST_CANDIDATES + 1
                ),
                params![key_lower, upper],
            )?
        };
        match found.len() {
            0 => Err(StoreError::NotFound(key.to_owned())),
            1 => Ok(found.remove(0)),
            n => {
                let mut candidates: Vec<String> = found
                    .into_iter()
                    .take(MOST_CANDIDATES)
                    .map(|s| s.id)
                    .collect();
                if n > MOST_CANDIDATES {
                    candidates.push("…".to_owned());
                }
                Err(StoreError::Ambiguous {
                    prefix: key.to_owned(),
                    candidates,
                })
            }
        }
    }

    /// Sessions newest first (by last write), those of `project` only when given.
    pub fn list_sessions(&self, project: Option<&Path>) -> Result<Vec<SessionInfo>, StoreError> {
        let project = project.map(path_text).transpose()?;
        self.query_infos(
            &format!(
                "{SELECT_INFO} WHERE ?1 IS NULL OR s.project_dir = ?1 ORDER BY s.updated_at DESC"
            ),
            params![project],
        )
    }

    /// Every session's id, in id order (the primary key's index alone: cheap even for many).
    pub fn session_ids(&self) -> Result<Vec<String>, StoreError> {
        let mut query = self.conn.prepare("SELECT id FROM sessions ORDER BY id")?;
        let ids = query.query_map([], |row| row.get(0))?;
        Ok(ids.collect::<Result<_, _>>()?)
    }

    /// The most recently written session of a project directory.
    pub fn latest_for_project(&self, project: &Path) -> Result<Option<SessionInfo>, StoreError> {
        let project = path_text(project)?;
        let found = self.query_infos(
            &format!("{SELECT_INFO} WHERE s.project_dir = ?1 ORDER BY s.updated_at DESC LIMIT 1"),
            params![project],
        )?;
        Ok(found.into_iter().next())
    }

    /// The session's conversation: every stored message of its turns that are not undone, in
    /// order. `session` is an exact id.
    pub fn history(&self, session: &str) -> Result<History, StoreError> {
        let mut query = self.conn.prepare(
            "SELECT m.id, m.content FROM messages m JOIN turns t ON t.id = m.turn_id
             WHERE t.session_id = ?1 AND t.undone = 0 ORDER BY t.seq, m.seq",
        )?;
        let rows = query.query_map([session], |row| Ok((row.get::<_, i64>(0)?, row.get(1)?)))?;
        let mut history = History::new();
        for row in rows {
            let (id, content): (i64, String) = row?;
            let message: Message = from_json(&content, || format!("message {id}"))?;
            history.push(message);
        }
        if history.is_empty() && !self.session_exists(session)? {
            return Err(StoreError::NotFound(session.to_owned()));
        }
        Ok(history)
    }

    /// The ids of a session's stored turns, oldest first, undone ones included.
    pub fn turn_ids(&self, session: &str) -> Result<Vec<TurnId>, StoreError> {
        let mut query = self
            .conn
            .prepare("SELECT id FROM turns WHERE session_id = ?1 ORDER BY seq")?;
        let ids = query.query_map([session], |row| row.get(0).map(TurnId))?;
        Ok(ids.collect::<Result<_, _>>()?)
    }

    /// Every stored turn of a session, oldest first, undone ones included. `session` is an
    /// exact id.
    pub fn turns(&self, session: &str) -> Result<Vec<StoredTurn>, StoreError> {
        if !self.session_exists(session)? {
            return Err(StoreError::NotFound(session.to_owned()));
        }
        let mut query = self.conn.prepare(
            "SELECT id, seq, undone, usage, model, agent, started_at, finished_at, status
             FROM turns WHERE session_id = ?1 ORDER BY seq",
        )?;
        let rows = query.query_map([session], |row| {
            let columns: TurnColumns = (
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
                row.get(6)?,
                row.get(7)?,
                row.get(8)?,
            );
            Ok(columns)
        })?;
        let mut messages = self.turn_messages(session)?.into_iter().peekable();
        let mut turns = Vec::new();
        for row in rows {
            let (id, seq, undone, usage, model, agent, started, finished, status) = row?;
            let mut own = Vec::new();
            while let Some((_, message)) = messages.next_if(|(turn, _)| *turn == id) {
                own.push(message);
            }
            let mut own = own.into_iter();
            let user = own.next().ok_or_else(|| {
                StoreError::MalformedTurn(format!("stored turn {id} has no messages"))
            })?;
            let status = status_of(&status).ok_or_else(|| {
                StoreError::MalformedTurn(format!("stored turn {id} has status '{status}'"))
            })?;
            let record = TurnRecord {
                user,
                replies: own.collect(),
                usage: from_json(&usage, || format!("usage of turn {id}"))?,
                model,
                agent,
                started_at: time_of(started),
                finished_at: time_of(finished),
                status,
                file_changes: self.file_changes(id)?,
            };
            turns.push(StoredTurn {
                id: TurnId(id),
                seq,
                undone,
                record,
            });
        }
        Ok(turns)
    }

    /// Every message of a session's turns as (turn id, message), in turn then message order.
    fn turn_messages(&self, session: &str) -> Result<Vec<(i64, Message)>, StoreError> {
        let mut query = self.conn.prepare(
            "SELECT m.turn_id, m.id, m.content FROM messages m JOIN turns t ON t.id = m.turn_id
             WHERE t.session_id = ?1 ORDER BY t.seq, m.seq",
        )?;
        let rows = query.query_map([session], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, row.get(2)?))
        })?;
        let mut messages = Vec::new();
        for row in rows {
            let (turn, id, content): (i64, i64, String) = row?;
            messages.push((turn, from_json(&content, || format!("message {id}"))?));
        }
        Ok(messages)
    }

    fn session_exists(&self, id: &str) -> Result<bool, StoreError> {
        let found = (self.conn)
            .query_row("SELECT 1 FROM sessions WHERE id = ?1", [id], |_| Ok(()))
            .optional()?;
        Ok(found.is_some())
    }

    fn query_infos(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<SessionInfo>, StoreError> {
        let mut query = self.conn.prepare(sql)?;
        let raws = query.query_map(params, raw_info)?;
        raws.map(|raw| decoded(raw?)).collect()
    }
}

type TurnColumns = (
    i64,
    i64,
    bool,
    String,
    Option<String>,
    Option<String>,
    i64,
    i64,
    String,
);

pub(crate) fn status_of(word: &str) -> Option<TurnStatus> {
    [
        TurnStatus::Finished,
        TurnStatus::Failed,
        TurnStatus::Cancelled,
    ]
    .into_iter()
    .find(|status| status.as_str() == word)
}

/// The time `millis` milliseconds after the Unix epoch (the epoch for a negative value): a
/// stored time as a `SystemTime`.
pub fn time_of(millis: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).unwrap_or(0))
}
