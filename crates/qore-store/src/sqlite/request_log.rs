//! The request log and usage sums on SQLite (the row, the query and what they promise are
//! the crate's `request_log` module).
//!
//! Promises: [`Db::record_requests`] writes a batch in one transaction (a row whose id is
//! already there is left as it is); [`Db::request_log`] pages newest first by id with every
//! filter in SQL, never reading bodies; [`Db::prune_request_log`] deletes by start time.

use rusqlite::{params, Row};

use crate::codec::{from_sql_count, to_sql_count};
use crate::request_log::{LogQuery, RequestLogRow, UsageGroup};
use crate::usage::check_day;
use crate::{StoreError, UsageRow};

use super::Db;

const INSERT: &str = "
INSERT INTO request_log (id, at_ms, key_id, dialect, model, agent, upstream, status,
    error_kind, tokens_in, tokens_out, cost_micros, ttfb_ms, duration_ms, session_id,
    response_id, request_body, response_body)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
ON CONFLICT (id) DO NOTHING";

/// The columns of a listing (no bodies) and of one entry (with them).
const LIST_COLUMNS: &str = "id, at_ms, key_id, dialect, model, agent, upstream, status,
    error_kind, tokens_in, tokens_out, cost_micros, ttfb_ms, duration_ms, session_id,
    response_id, NULL, NULL";
const ENTRY_COLUMNS: &str = "id, at_ms, key_id, dialect, model, agent, upstream, status,
    error_kind, tokens_in, tokens_out, cost_micros, ttfb_ms, duration_ms, session_id,
    response_id, request_body, response_body";

impl Db {
    /// Write the rows in one transaction.
    pub fn record_requests(&mut self, rows: &[RequestLogRow]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        {
            let mut insert = tx.prepare_cached(INSERT)?;
            for r in rows {
                insert.execute(params![
                    r.id,
                    r.at_ms,
                    r.key_id,
                    r.dialect,
                    r.model,
                    r.agent,
                    r.upstream,
                    r.status,
                    r.error_kind,
                    to_sql_count(r.tokens_in),
                    to_sql_count(r.tokens_out),
                    r.cost_micros,
                    r.ttfb_ms.map(to_sql_count),
                    to_sql_count(r.duration_ms),
                    r.session_id,
                    r.response_id,
                    r.request_body,
                    r.response_body,
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// One page of rows, newest first, without bodies.
    pub fn request_log(&self, query: &LogQuery) -> Result<Vec<RequestLogRow>, StoreError> {
        let sql = format!(
            "SELECT {LIST_COLUMNS} FROM request_log
             WHERE (?1 IS NULL OR key_id = ?1) AND (?2 IS NULL OR model = ?2)
               AND (?3 IS NULL OR agent = ?3) AND (?4 IS NULL OR status >= ?4)
               AND (?5 IS NULL OR status <= ?5) AND (?6 IS NULL OR at_ms >= ?6)
               AND (?7 IS NULL OR at_ms < ?7) AND (?8 IS NULL OR id < ?8)
             ORDER BY id DESC LIMIT ?9"
        );
        let mut statement = self.conn.prepare_cached(&sql)?;
        let rows = statement.query_map(
            params![
                query.key_id,
                query.model,
                query.agent,
                query.status_min,
                query.status_max,
                query.since_ms,
                query.until_ms,
                query.before,
                query.page_size(),
            ],
            read_row,
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The row `id` with its bodies.
    pub fn request_entry(&self, id: &str) -> Result<Option<RequestLogRow>, StoreError> {
        let sql = format!("SELECT {ENTRY_COLUMNS} FROM request_log WHERE id = ?1");
        let mut statement = self.conn.prepare_cached(&sql)?;
        let mut rows = statement.query_map([id], read_row)?;
        Ok(rows.next().transpose()?)
    }

    /// Delete the rows that started before `before_ms`; how many.
    pub fn prune_request_log(&mut self, before_ms: i64) -> Result<u64, StoreError> {
        let deleted =
            (self.conn).execute("DELETE FROM request_log WHERE at_ms < ?1", [before_ms])?;
        Ok(deleted as u64)
    }

    /// Usage summed by the database, grouped by `by` (and by agent too when `by_agent`), of
    /// one key when given, between two days (both included) when given.
    pub fn usage_sums(
        &self,
        by: UsageGroup,
        by_agent: bool,
        key_id: Option<&str>,
        since: Option<&str>,
        until: Option<&str>,
    ) -> Result<Vec<UsageRow>, StoreError> {
        for day in [since, until].into_iter().flatten() {
            check_day(day)?;
        }
        let sql = by.sql("?1", "?2", "?3", by_agent);
        let mut statement = self.conn.prepare_cached(&sql)?;
        let rows = statement.query_map(params![key_id, since, until], |row| {
            let count = |i: usize| row.get::<_, i64>(i).map(from_sql_count);
            let (value, agent): (String, String) = (row.get(0)?, row.get(1)?);
            Ok(by.row(value, agent, [count(2)?, count(3)?, count(4)?, count(5)?]))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

fn read_row(row: &Row<'_>) -> rusqlite::Result<RequestLogRow> {
    let count = |i: usize| row.get::<_, i64>(i).map(from_sql_count);
    Ok(RequestLogRow {
        id: row.get(0)?,
        at_ms: row.get(1)?,
        key_id: row.get(2)?,
        dialect: row.get(3)?,
        model: row.get(4)?,
        agent: row.get(5)?,
        upstream: row.get(6)?,
        status: u16::try_from(row.get::<_, i64>(7)?).unwrap_or(0),
        error_kind: row.get(8)?,
        tokens_in: count(9)?,
        tokens_out: count(10)?,
        cost_micros: row.get(11)?,
        ttfb_ms: row.get::<_, Option<i64>>(12)?.map(from_sql_count),
        duration_ms: count(13)?,
        session_id: row.get(14)?,
        response_id: row.get(15)?,
        request_body: row.get(16)?,
        response_body: row.get(17)?,
    })
}
