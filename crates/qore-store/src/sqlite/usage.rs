//! `qore serve`'s usage counters on SQLite (the row and what a day is are the crate's
//! `usage` module).
//!
//! Promises: [`Db::record_usage`] adds each row's counts to the stored ones with one UPSERT
//! per row, all in one transaction (so writers in several processes add up and never lose
//! each other's counts), enters a keyed row's tokens into its key's `tpm` window, and drops
//! events older than the window; [`Db::tokens_used`] is a key's lifetime tokens, in and out,
//! for budgets; a day that is not `YYYY-MM-DD` is [`StoreError::BadDay`]. Every method is
//! plain SQL (`INSERT … ON CONFLICT … DO UPDATE` is standard in SQLite and PostgreSQL).

use std::time::SystemTime;

use rusqlite::params;

use crate::codec::{from_sql_count, millis, to_sql_count};
use crate::limits::bucket_end;
use crate::usage::check_day;
use crate::{StoreError, UsageRow};

use super::limits::expire_all;
use super::Db;

/// Add one row's counts to its stored row (`INSERT … ON CONFLICT … DO UPDATE`: standard in
/// SQLite and PostgreSQL).
const UPSERT: &str = "
INSERT INTO usage (day, key_id, model, agent, requests, errors, tokens_in, tokens_out)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
ON CONFLICT (day, key_id, model, agent) DO UPDATE SET
    requests = usage.requests + excluded.requests,
    errors = usage.errors + excluded.errors,
    tokens_in = usage.tokens_in + excluded.tokens_in,
    tokens_out = usage.tokens_out + excluded.tokens_out";

impl Db {
    /// Add each row's counts to the stored row of its (day, key, model, agent), in one
    /// transaction; a keyed row's tokens also enter its key's `tpm` window (`rate_events`).
    pub fn record_usage(&mut self, rows: &[UsageRow]) -> Result<(), StoreError> {
        for row in rows {
            check_day(&row.day)?;
        }
        let now = millis(SystemTime::now());
        let tx = self.conn.transaction()?;
        {
            let mut upsert = tx.prepare_cached(UPSERT)?;
            let mut window = tx.prepare_cached(
                "INSERT INTO rate_events (key_id, at, requests, tokens) VALUES (?1, ?2, 0, ?3)
                 ON CONFLICT (key_id, at) DO UPDATE SET tokens = rate_events.tokens + ?3",
            )?;
            for row in rows {
                upsert.execute(row_params(row))?;
                let tokens = row.tokens_in.saturating_add(row.tokens_out);
                if !row.key_id.is_empty() && tokens > 0 {
                    window.execute(params![row.key_id, bucket_end(now), to_sql_count(tokens)])?;
                }
            }
        }
        expire_all(&tx, now)?;
        tx.commit()?;
        Ok(())
    }

    /// The stored rows, of one key id (`''`: no key) when given, from the day `since` on
    /// when given; by key, model, agent, then day.
    pub fn usage(
        &self,
        key_id: Option<&str>,
        since: Option<&str>,
    ) -> Result<Vec<UsageRow>, StoreError> {
        if let Some(day) = since {
            check_day(day)?;
        }
        let mut query = self.conn.prepare(
            "SELECT day, key_id, model, agent, requests, errors, tokens_in, tokens_out
             FROM usage WHERE (?1 IS NULL OR key_id = ?1) AND (?2 IS NULL OR day >= ?2)
             ORDER BY key_id, model, agent, day",
        )?;
        let rows = query.query_map(params![key_id, since], |row| {
            Ok(UsageRow {
                day: row.get(0)?,
                key_id: row.get(1)?,
                model: row.get(2)?,
                agent: row.get(3)?,
                requests: from_sql_count(row.get(4)?),
                errors: from_sql_count(row.get(5)?),
                tokens_in: from_sql_count(row.get(6)?),
                tokens_out: from_sql_count(row.get(7)?),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every token, in and out, ever recorded for a key id.
    pub fn tokens_used(&self, key_id: &str) -> Result<u64, StoreError> {
        let used: i64 = self.conn.query_row(
            "SELECT coalesce(sum(tokens_in + tokens_out), 0) FROM usage WHERE key_id = ?1",
            [key_id],
            |row| row.get(0),
        )?;
        Ok(from_sql_count(used))
    }
}

/// A row's columns as statement parameters: ?1 to ?8 are day, key, model, agent, requests,
/// errors, tokens in, tokens out.
pub(super) fn row_params(row: &UsageRow) -> impl rusqlite::Params + '_ {
    (
        row.day.as_str(),
        row.key_id.as_str(),
        row.model.as_str(),
        row.agent.as_str(),
        to_sql_count(row.requests),
        to_sql_count(row.errors),
        to_sql_count(row.tokens_in),
        to_sql_count(row.tokens_out),
    )
}
