//! The Responses API's stored responses on PostgreSQL.
//!
//! Promises (those of the crate's `responses` module): an id is stored only for a turn of
//! the given session ([`StoreError::NoSuchTurn`]) and only once
//! ([`StoreError::ResponseTaken`]); a session that is not there is
//! [`StoreError::NotFound`]; removing the session or its turn removes the id (cascade).
//! Each method is one statement.

use std::time::SystemTime;

use tokio_postgres::Row;

use crate::codec::millis;
use crate::{NewResponse, ResponseRecord, StoreError, TurnId};

use super::conn::{Cols, Conn};
use super::errors::violated;
use super::PgStore;

/// The columns of a [`ResponseRecord`], in [`record`]'s order.
pub(super) const RESPONSE_COLUMNS: &str =
    "r.id, r.key_id, r.session_id, r.turn_id, r.pending, r.object, r.created_at";

/// A [`ResponseRecord`] from [`RESPONSE_COLUMNS`] at the start of `row`.
pub(super) fn record(
    row: &Row,
    conn: &Conn<'_>,
    doing: &str,
) -> Result<ResponseRecord, StoreError> {
    let c = Cols::of(row, conn, doing);
    Ok(ResponseRecord {
        id: c.at(0)?,
        key_id: c.at(1)?,
        session_id: c.at(2)?,
        turn_id: c.at::<Option<i64>>(3)?.map(TurnId),
        pending: c.at(4)?,
        object: c.at(5)?,
        created_at: c.at(6)?,
    })
}

pub(super) async fn put_response(
    store: &PgStore,
    new: &NewResponse<'_>,
) -> Result<ResponseRecord, StoreError> {
    const DOING: &str = "store a response";
    let created_at = millis(SystemTime::now());
    let turn = new.turn_id.map(|t| t.0);
    let conn = store.conn(DOING).await?;
    let sql = "INSERT INTO responses (id, key_id, session_id, turn_id, pending, object, created_at)
               SELECT $1::text, $2::text, $3::text, $4::bigint, $5::text, $6::text, $7::bigint
               WHERE $4::bigint IS NULL
                  OR EXISTS (SELECT 1 FROM turns WHERE id = $4::bigint AND session_id = $3::text)";
    let statement = conn.prepare(DOING, sql).await?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] = [
        &new.id,
        &new.key_id,
        &new.session_id,
        &turn,
        &new.pending,
        &new.object,
        &created_at,
    ];
    match conn.execute(&statement, &params).await {
        Ok(0) => Err(StoreError::NoSuchTurn(turn.unwrap_or_default())),
        Ok(_) => {
            conn.committed();
            Ok(new.record(created_at))
        }
        Err(e) => Err(match (violated(&e), new.session_id) {
            (Some("responses_pkey"), _) => StoreError::ResponseTaken(new.id.to_owned()),
            (Some("responses_session_id_fkey"), Some(session)) => {
                StoreError::NotFound(session.to_owned())
            }
            _ => conn.shared.teller.db(DOING, e),
        }),
    }
}

pub(super) async fn response(
    store: &PgStore,
    id: &str,
) -> Result<Option<ResponseRecord>, StoreError> {
    const DOING: &str = "read a stored response";
    let conn = store.conn(DOING).await?;
    let sql = format!("SELECT {RESPONSE_COLUMNS} FROM responses r WHERE r.id = $1");
    let rows = conn.rows(DOING, &sql, &[&id]).await?;
    rows.first()
        .map(|row| record(row, &conn, DOING))
        .transpose()
}

pub(super) async fn delete_response(store: &PgStore, id: &str) -> Result<bool, StoreError> {
    const DOING: &str = "delete a stored response";
    let conn = store.conn(DOING).await?;
    let statement = conn
        .prepare(DOING, "DELETE FROM responses WHERE id = $1")
        .await?;
    let deleted =
        (conn.execute(&statement, &[&id]).await).map_err(conn.shared.teller.err(DOING))?;
    conn.committed();
    Ok(deleted > 0)
}
