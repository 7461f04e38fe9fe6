//! Copying whole records into SQLite as they are, and reading responses out for a copy
//! (`qore store migrate`).
//!
//! Promises: a copied session keeps its id, name, title, times, parent link (when the parent
//! is there), and every turn with its `seq`, undone flag, messages and file changes, all in
//! one transaction; a key keeps its id, hash, limits and revocation; a usage row its counts; a
//! response its id and object, naming the copied turn by its place in the session. Whatever
//! is already there (by id, or by (day, key, model, agent) for usage) is left alone and
//! reported as not copied, so copying twice copies nothing twice.

use rusqlite::{params, OptionalExtension};

use crate::codec::{to_json, to_sql_count};
use crate::interface::{ResponseCopy, SessionCopy};
use crate::{KeyRecord, StoreError, UsageRow};

use super::responses::{record, RESPONSE_COLUMNS};
use super::sessions::{insert_turn, name_conflict, TurnRows};
use super::usage::row_params;
use super::Db;

impl Db {
    /// Every stored response with the `seq` of the turn it names, oldest first.
    pub fn responses(&self) -> Result<Vec<ResponseCopy>, StoreError> {
        let mut query = self.conn.prepare(&format!(
            "SELECT {RESPONSE_COLUMNS}, t.seq FROM responses r LEFT JOIN turns t ON t.id = r.turn_id
             ORDER BY r.created_at, r.id"
        ))?;
        let rows = query.query_map([], |row| {
            Ok(ResponseCopy {
                record: record(row)?,
                turn_seq: row.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Write a session as it is; `false` when its id is already here.
    pub fn copy_session(&mut self, copy: &SessionCopy) -> Result<bool, StoreError> {
        let rows = (copy.turns.iter())
            .map(|turn| TurnRows::of(&turn.record))
            .collect::<Result<Vec<_>, _>>()?;
        let info = &copy.info;
        let tx = self.conn.transaction()?;
        let there = (tx.query_row("SELECT 1 FROM sessions WHERE id = ?1", [&info.id], |_| {
            Ok(())
        }))
        .optional()?;
        if there.is_some() {
            return Ok(false);
        }
        (tx.execute(
            "INSERT INTO sessions (id, name, title, project_dir, agent, model, created_at,
                                   updated_at, parent_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, (SELECT id FROM sessions WHERE id = ?9))",
            params![
                info.id,
                info.name,
                info.title,
                info.project_dir,
                info.agent,
                info.model,
                info.created_at,
                info.updated_at,
                info.parent_id
            ],
        ))
        .map_err(|e| name_conflict(e, info.name.as_deref()))?;
        for (turn, rows) in copy.turns.iter().zip(&rows) {
            insert_turn(
                &tx,
                &info.id,
                &turn.record,
                rows,
                turn.undone,
                Some(turn.seq),
            )?;
        }
        tx.commit()?;
        Ok(true)
    }

    /// Write a key as it is; `false` when its id is already here.
    pub fn copy_key(&self, key: &KeyRecord) -> Result<bool, StoreError> {
        let models = to_json(&key.models)?;
        let count = |n: Option<u64>| n.map(to_sql_count);
        let inserted = self.conn.execute(
            "INSERT INTO api_keys (id, name, hash, models, rpm, tpm, budget_tokens, created_at,
                                   revoked_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (id) DO NOTHING",
            params![
                key.id,
                key.name,
                key.hash,
                models,
                count(key.rpm),
                count(key.tpm),
                count(key.budget_tokens),
                key.created_at,
                key.revoked_at
            ],
        );
        match inserted {
            Ok(n) => Ok(n > 0),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
            {
                Err(StoreError::KeyNameTaken(key.name.clone()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Write a usage row as it is; `false` when its (day, key, model, agent) is here.
    pub fn copy_usage(&self, row: &UsageRow) -> Result<bool, StoreError> {
        let inserted = self.conn.execute(
            "INSERT INTO usage (day, key_id, model, agent, requests, errors, tokens_in,
                                tokens_out)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (day, key_id, model, agent) DO NOTHING",
            row_params(row),
        )?;
        Ok(inserted > 0)
    }

    /// Write a response as it is, naming the turn at `turn_seq` of its session; `false` when
    /// its id is here.
    pub fn copy_response(&self, copy: &ResponseCopy) -> Result<bool, StoreError> {
        let r = &copy.record;
        let inserted = self.conn.execute(
            "INSERT INTO responses (id, key_id, session_id, turn_id, pending, object, created_at)
             SELECT ?1, ?2, (SELECT id FROM sessions WHERE id = ?3),
                    (SELECT id FROM turns WHERE session_id = ?3 AND seq = ?4), ?5, ?6, ?7
             WHERE true
             ON CONFLICT (id) DO NOTHING",
            params![
                r.id,
                r.key_id,
                r.session_id,
                copy.turn_seq,
                r.pending,
                r.object,
                r.created_at
            ],
        )?;
        Ok(inserted > 0)
    }
}
