//! `qore serve`'s usage counters on PostgreSQL.
//!
//! Promises (those of the crate's `usage` module): [`record_usage`] adds every row's counts to
//! its stored (day, key, model, agent) row in ONE statement (an upsert over all rows, rows of
//! one key added together first, in key order so concurrent writers lock rows in one order),
//! which also enters each keyed row's tokens into its key's `tpm` window at the database's
//! clock and deletes window events older than 60 seconds; writers in several processes never
//! lose each other's counts. Days are `YYYY-MM-DD` ([`StoreError::BadDay`]).

use std::collections::BTreeMap;

use crate::codec::{from_sql_count, to_sql_count};
use crate::limits::WINDOW_MS;
use crate::usage::check_day;
use crate::{StoreError, UsageRow};

use super::conn::Cols;
use super::PgStore;

const RECORD: &str = concat!(
    "WITH ",
    now_ms!(),
    ", counted AS (
    INSERT INTO usage AS u (day, key_id, model, agent, requests, errors, tokens_in, tokens_out)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[],
                         $6::bigint[], $7::bigint[], $8::bigint[])
    ON CONFLICT (day, key_id, model, agent) DO UPDATE SET
        requests = u.requests + excluded.requests,
        errors = u.errors + excluded.errors,
        tokens_in = u.tokens_in + excluded.tokens_in,
        tokens_out = u.tokens_out + excluded.tokens_out
), events AS (
    INSERT INTO rate_events (key_id, at, requests, tokens)
    SELECT x.key_id, (now.ms / 1000 + 1) * 1000, 0, x.tokens
    FROM now, unnest($9::text[], $10::bigint[]) AS x(key_id, tokens)
    ON CONFLICT (key_id, at) DO UPDATE SET tokens = rate_events.tokens + excluded.tokens
), gone AS (
    DELETE FROM rate_events WHERE at <= (SELECT ms FROM now) - $11::bigint
)
SELECT 1"
);

pub(super) async fn record_usage(store: &PgStore, rows: &[UsageRow]) -> Result<(), StoreError> {
    const DOING: &str = "record usage";
    let mut summed: BTreeMap<(&str, &str, &str, &str), UsageRow> = BTreeMap::new();
    // A key's tokens once per batch: one upsert may not touch its second's row twice.
    let mut events: BTreeMap<&str, u64> = BTreeMap::new();
    for row in rows {
        check_day(&row.day)?;
        let at = (
            row.day.as_str(),
            row.key_id.as_str(),
            row.model.as_str(),
            row.agent.as_str(),
        );
        (summed.entry(at).or_default()).add(row);
        let tokens = row.tokens_in.saturating_add(row.tokens_out);
        if !row.key_id.is_empty() && tokens > 0 {
            let sum = events.entry(row.key_id.as_str()).or_default();
            *sum = sum.saturating_add(tokens);
        }
    }
    let event_keys: Vec<&str> = events.keys().copied().collect();
    let event_tokens: Vec<i64> = events.values().map(|n| to_sql_count(*n)).collect();
    let column = |f: fn(&UsageRow) -> u64| -> Vec<i64> {
        summed.values().map(|r| to_sql_count(f(r))).collect()
    };
    let text =
        |i: usize| -> Vec<&str> { (summed.keys()).map(|k| [k.0, k.1, k.2, k.3][i]).collect() };
    let (days, keys, models, agents) = (text(0), text(1), text(2), text(3));
    let requests = column(|r| r.requests);
    let errors = column(|r| r.errors);
    let tokens_in = column(|r| r.tokens_in);
    let tokens_out = column(|r| r.tokens_out);
    let conn = store.conn(DOING).await?;
    let statement = conn.prepare(DOING, RECORD).await?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 11] = [
        &days,
        &keys,
        &models,
        &agents,
        &requests,
        &errors,
        &tokens_in,
        &tokens_out,
        &event_keys,
        &event_tokens,
        &WINDOW_MS,
    ];
    (conn.execute(&statement, &params).await).map_err(conn.shared.teller.err(DOING))?;
    conn.committed();
    Ok(())
}

pub(super) async fn usage(
    store: &PgStore,
    key_id: Option<&str>,
    since: Option<&str>,
) -> Result<Vec<UsageRow>, StoreError> {
    const DOING: &str = "read usage";
    if let Some(day) = since {
        check_day(day)?;
    }
    let conn = store.conn(DOING).await?;
    let sql = "SELECT day, key_id, model, agent, requests, errors, tokens_in, tokens_out
               FROM usage WHERE ($1::text IS NULL OR key_id = $1)
                            AND ($2::text IS NULL OR day >= $2)
               ORDER BY key_id, model, agent, day";
    let rows = conn.rows(DOING, sql, &[&key_id, &since]).await?;
    rows.iter()
        .map(|row| {
            let c = Cols::of(row, &conn, DOING);
            let count = |i: usize| c.at::<i64>(i).map(from_sql_count);
            Ok(UsageRow {
                day: c.at(0)?,
                key_id: c.at(1)?,
                model: c.at(2)?,
                agent: c.at(3)?,
                requests: count(4)?,
                errors: count(5)?,
                tokens_in: count(6)?,
                tokens_out: count(7)?,
            })
        })
        .collect()
}

pub(super) async fn tokens_used(store: &PgStore, key_id: &str) -> Result<u64, StoreError> {
    const DOING: &str = "read a key's tokens";
    let conn = store.conn(DOING).await?;
    let sql = "SELECT coalesce(sum(tokens_in + tokens_out), 0)::bigint FROM usage
               WHERE key_id = $1";
    let row = conn.row(DOING, sql, &[&key_id]).await?;
    Ok(from_sql_count(Cols::of(&row, &conn, DOING).at(0)?))
}
