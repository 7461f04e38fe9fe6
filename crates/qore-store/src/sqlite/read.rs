//! Reading sessions and turns on SQLite: finding a session, listing sessions, rebuilding
//! history, reading whole turns back, and the last turn that can still be undone.
//!
//! Promises: a session is found by exact id, then exact name, then unique id prefix (the one
//! resolver every command uses); an ambiguous prefix is an error that lists the candidates.
//! Listings carry turn and message counts and the latest turn's usage. History is rebuilt
//! from stored turns in order, skipping undone ones; [`Db::turns`] gives every turn with
//! its record (times, usage, status, messages, file changes); [`Db::last_undoable_turn`]
//! gives the newest turn that is not undone with its changes sorted by path and its
//! messages. A stored row that does not decode is an error naming it, never a panic or a
//! silent gap.

use std::path::Path;

use qore_core::{History, Message};
use rusqlite::{params, OptionalExtension, Row};

use crate::codec::from_json;
use crate::lookup::{id_range, the_one, MOST_CANDIDATES};
use crate::sessions::{path_text, take_turn, SessionRow, TurnRow};
use crate::{FileChange, SessionInfo, StoreError, StoredTurn, TurnId, UndoableTurn};

use super::Db;

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

fn session_row(row: &Row<'_>) -> rusqlite::Result<SessionRow> {
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
    Ok(SessionRow(info, row.get(11)?))
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
        let found = match id_range(key) {
            None => Vec::new(),
            Some((lower, upper)) => self.query_infos(
                &format!(
                    "{SELECT_INFO} WHERE s.id >= ?1 AND s.id < ?2 AND substr(s.id, 1, length(?1)) = ?1
                     ORDER BY s.id LIMIT {}",
                    MOST_CANDIDATES + 1
                ),
                params![lower, upper],
            )?,
        };
        the_one(
            found,
            key,
            || StoreError::NotFound(key.to_owned()),
            |s| s.id.clone(),
        )
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

    /// A page of sessions newest first by id (see [`crate::SessionQuery`]).
    pub fn session_page(
        &self,
        query: &crate::SessionQuery,
    ) -> Result<Vec<SessionInfo>, StoreError> {
        let search = crate::listing::search_term(&query.search);
        let limit = crate::listing::page_size(query.limit);
        self.query_infos(
            &format!(
                "{SELECT_INFO} WHERE (?1 IS NULL OR instr(lower(coalesce(s.title, '')), ?1) > 0
                                      OR instr(lower(coalesce(s.name, '')), ?1) > 0
                                      OR instr(s.id, ?1) > 0)
                                 AND (?2 IS NULL OR s.id < ?2)
                 ORDER BY s.id DESC LIMIT ?3"
            ),
            params![search, query.before, limit],
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
        let messages = self.query_messages(
            "SELECT m.id, m.content FROM messages m JOIN turns t ON t.id = m.turn_id
             WHERE t.session_id = ?1 AND t.undone = 0 ORDER BY t.seq, m.seq",
            [session],
        )?;
        let mut history = History::new();
        for message in messages {
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
            Ok(TurnRow {
                id: row.get(0)?,
                seq: row.get(1)?,
                undone: row.get(2)?,
                usage: row.get(3)?,
                model: row.get(4)?,
                agent: row.get(5)?,
                started_at: row.get(6)?,
                finished_at: row.get(7)?,
                status: row.get(8)?,
            })
        })?;
        let mut messages = self.turn_messages(session)?.into_iter().peekable();
        let mut turns = Vec::new();
        for row in rows {
            let row = row?;
            let id = row.id;
            let own = take_turn(&mut messages, id);
            turns.push(row.decode(own, || self.file_changes(id))?);
        }
        Ok(turns)
    }

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

    /// A turn's changes (a cached statement: reading a session's turns reads them for every
    /// turn).
    fn file_changes(&self, turn: i64) -> Result<Vec<FileChange>, StoreError> {
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

    /// A turn's messages, in order.
    fn messages_of_turn(&self, turn: i64) -> Result<Vec<Message>, StoreError> {
        self.query_messages(
            "SELECT id, content FROM messages WHERE turn_id = ?1 ORDER BY seq",
            [turn],
        )
    }

    /// The messages of (message id, content) rows.
    fn query_messages(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<Message>, StoreError> {
        let mut query = self.conn.prepare(sql)?;
        let rows = query.query_map(params, |row| Ok((row.get::<_, i64>(0)?, row.get(1)?)))?;
        let mut messages = Vec::new();
        for row in rows {
            let (id, content): (i64, String) = row?;
            messages.push(from_json(&content, || format!("message {id}"))?);
        }
        Ok(messages)
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
        let rows = query.query_map(params, session_row)?;
        rows.map(|row| row?.decode()).collect()
    }
}
