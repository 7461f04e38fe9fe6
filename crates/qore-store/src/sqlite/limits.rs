//! Rate limits decided in the database (SQLite): a key's requests and tokens of the sliding
//! 60 seconds are rows of `rate_events`, one per key and second, so every process on the file
//! sees the same window; the rule itself is the crate's
//! ([`Window::decide`](crate::limits::Window)), and so is the bucketing.
//!
//! Promises:
//! - [`Db::admit`] is one IMMEDIATE transaction: SQLite's write lock orders concurrent
//!   admissions, so with `rpm = n` exactly `n` requests are admitted in any 60 seconds, from
//!   however many processes; a refused request is not counted;
//! - rows older than the window are deleted as admissions and usage writes pass, so the table
//!   holds at most a minute of events.

use std::time::SystemTime;

use rusqlite::{params, Connection};

use crate::codec::{from_sql_count, millis};
use crate::interface::{LimitCheck, LimitVerdict};
use crate::limits::{bucket_end, Window, WINDOW_MS};
use crate::StoreError;

use super::Db;

impl Db {
    /// Decide one request against its key's limits, counting it when admitted.
    pub fn admit(&mut self, check: &LimitCheck) -> Result<LimitVerdict, StoreError> {
        let now = millis(SystemTime::now());
        let tx = self.conn.transaction()?;
        let since = now - WINDOW_MS;
        tx.execute(
            "DELETE FROM rate_events WHERE key_id = ?1 AND at <= ?2",
            params![check.key_id, since],
        )?;
        let (requests, oldest): (i64, Option<i64>) = tx.query_row(
            "SELECT coalesce(sum(requests), 0), min(at) FROM rate_events
             WHERE key_id = ?1 AND requests > 0",
            [&check.key_id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        let tokens: Vec<(i64, i64)> = {
            let mut query = tx.prepare_cached(
                "SELECT at, tokens FROM rate_events WHERE key_id = ?1 AND tokens > 0 ORDER BY at",
            )?;
            let rows = query.query_map([&check.key_id], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        let spent = match check.budget_tokens {
            Some(_) => Some(from_sql_count(tx.query_row(
                "SELECT coalesce(sum(tokens_in + tokens_out), 0) FROM usage WHERE key_id = ?1",
                [&check.key_id],
                |row| row.get(0),
            )?)),
            None => None,
        };
        let window = Window {
            now,
            requests: from_sql_count(requests),
            oldest_request: oldest,
            tokens: tokens
                .into_iter()
                .map(|(at, n)| (at, from_sql_count(n)))
                .collect(),
            spent,
        };
        let verdict = window.decide(check);
        if matches!(verdict, LimitVerdict::Admitted { .. }) && check.rpm.is_some() {
            tx.execute(
                "INSERT INTO rate_events (key_id, at, requests, tokens) VALUES (?1, ?2, 1, 0)
                 ON CONFLICT (key_id, at) DO UPDATE SET requests = rate_events.requests + 1",
                params![check.key_id, bucket_end(now)],
            )?;
        }
        tx.commit()?;
        Ok(verdict)
    }
}

/// Delete every key's events older than the window (inside a usage write's transaction).
pub(crate) fn expire_all(conn: &Connection, now: i64) -> Result<(), StoreError> {
    conn.execute("DELETE FROM rate_events WHERE at <= ?1", [now - WINDOW_MS])?;
    Ok(())
}
