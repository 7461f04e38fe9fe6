//! Reading whole stored turns back: each with its messages, usage, timings and status.
//!
//! Promises: [`Store::turns`] returns a session's turns oldest first, undone ones included
//! and marked, each rebuilt as the [`TurnRecord`] it was appended from (messages in their
//! stored order, the same JSON, its file changes), so a turn can be copied into another session unchanged. A
//! stored row that does not decode is an error naming it, never a panic or a silent gap.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use qore_core::{Message, Usage};

use crate::read::from_json;
use crate::{FileChange, Store, StoreError, TurnId, TurnRecord, TurnStatus};

/// One stored turn.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTurn {
    pub id: TurnId,
    /// The turn's 1-based position in its session.
    pub seq: i64,
    /// Undone turns are kept but left out of [`Store::history`].
    pub undone: bool,
    pub record: TurnRecord,
}

struct Row {
    id: i64,
    seq: i64,
    started_at: i64,
    finished_at: i64,
    model: Option<String>,
    agent: Option<String>,
    usage: String,
    status: String,
    undone: bool,
}

impl Store {
    /// The turns of a session (an exact id), oldest first, undone ones included.
    pub fn turns(&self, session: &str) -> Result<Vec<StoredTurn>, StoreError> {
        let mut query = self.conn.prepare(
            "SELECT id, seq, started_at, finished_at, model, agent, usage, status, undone
             FROM turns WHERE session_id = ?1 ORDER BY seq",
        )?;
        let rows = query.query_map([session], |row| {
            Ok(Row {
                id: row.get(0)?,
                seq: row.get(1)?,
                started_at: row.get(2)?,
                finished_at: row.get(3)?,
                model: row.get(4)?,
                agent: row.get(5)?,
                usage: row.get(6)?,
                status: row.get(7)?,
                undone: row.get(8)?,
            })
        })?;
        let rows = rows.collect::<Result<Vec<Row>, _>>()?;
        if rows.is_empty() {
            self.session(session)?;
        }
        let mut turns = Vec::with_capacity(rows.len());
        for row in rows {
            let (messages, changes) = (self.turn_messages(row.id)?, self.file_changes(row.id)?);
            turns.push(turn(row, messages, changes)?);
        }
        Ok(turns)
    }
}

fn turn(
    row: Row,
    mut messages: Vec<Message>,
    file_changes: Vec<FileChange>,
) -> Result<StoredTurn, StoreError> {
    let usage: Usage = from_json(&row.usage, || format!("usage of turn {}", row.id))?;
    let status = match row.status.as_str() {
        "finished" => TurnStatus::Finished,
        "failed" => TurnStatus::Failed,
        "cancelled" => TurnStatus::Cancelled,
        other => {
            return Err(StoreError::MalformedTurn(format!(
                "turn {} has the unknown status '{other}'",
                row.id
            )))
        }
    };
    if messages.is_empty() {
        return Err(StoreError::MalformedTurn(format!(
            "turn {} has no messages",
            row.id
        )));
    }
    let user = messages.remove(0);
    Ok(StoredTurn {
        id: TurnId(row.id),
        seq: row.seq,
        undone: row.undone,
        record: TurnRecord {
            user,
            replies: messages,
            usage,
            model: row.model,
            agent: row.agent,
            started_at: time(row.started_at),
            finished_at: time(row.finished_at),
            status,
            file_changes,
        },
    })
}

fn time(millis: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).unwrap_or(0))
}
