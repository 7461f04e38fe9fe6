//! The Responses API's stored responses on SQLite (the records are the crate's `responses`
//! module).
//!
//! Promises: [`Db::put_response`] stores an id only for a turn of the given session (else
//! [`StoreError::NoSuchTurn`]), and only once ([`StoreError::ResponseTaken`]); removing the
//! session (or its turn) removes its response ids with it (cascade); every method is one
//! plain SQL statement.

use std::time::SystemTime;

use rusqlite::{params, OptionalExtension, Row};

use crate::codec::millis;
use crate::{NewResponse, ResponseRecord, StoreError, TurnId};

use super::Db;

/// The columns of a [`ResponseRecord`], in [`record`]'s order.
pub(super) const RESPONSE_COLUMNS: &str =
    "r.id, r.key_id, r.session_id, r.turn_id, r.pending, r.object, r.created_at";

/// A [`ResponseRecord`] from [`RESPONSE_COLUMNS`] at the start of `row`.
pub(super) fn record(row: &Row<'_>) -> rusqlite::Result<ResponseRecord> {
    Ok(ResponseRecord {
        id: row.get(0)?,
        key_id: row.get(1)?,
        session_id: row.get(2)?,
        turn_id: row.get::<_, Option<i64>>(3)?.map(TurnId),
        pending: row.get(4)?,
        object: row.get(5)?,
        created_at: row.get(6)?,
    })
}

impl Db {
    /// Store `new`.
    pub fn put_response(&self, new: &NewResponse<'_>) -> Result<ResponseRecord, StoreError> {
        let created_at = millis(SystemTime::now());
        let turn = new.turn_id.map(|t| t.0);
        let inserted = self.conn.execute(
            "INSERT INTO responses (id, key_id, session_id, turn_id, pending, object, created_at)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7
             WHERE ?4 IS NULL OR EXISTS (SELECT 1 FROM turns WHERE id = ?4 AND session_id = ?3)",
            params![
                new.id,
                new.key_id,
                new.session_id,
                turn,
                new.pending,
                new.object,
                created_at
            ],
        );
        match inserted {
            Ok(0) => Err(StoreError::NoSuchTurn(turn.unwrap_or_default())),
            Ok(_) => Ok(new.record(created_at)),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
            {
                Err(StoreError::ResponseTaken(new.id.to_owned()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The stored response `id`, if there is one.
    pub fn response(&self, id: &str) -> Result<Option<ResponseRecord>, StoreError> {
        let found = self
            .conn
            .query_row(
                &format!("SELECT {RESPONSE_COLUMNS} FROM responses r WHERE r.id = ?1"),
                [id],
                record,
            )
            .optional()?;
        Ok(found)
    }

    /// Forget the response id `id` (its turn stays); whether there was one.
    pub fn delete_response(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .execute("DELETE FROM responses WHERE id = ?1", [id])?
            > 0)
    }
}
