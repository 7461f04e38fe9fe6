//! Rate limits decided in PostgreSQL: the crate's window rule, the same as on SQLite
//! ([`Window::decide`](crate::limits::Window)), made atomic across processes by a lock.
//!
//! Promises: [`admit`] is one transaction holding
//! `pg_advisory_xact_lock(hashtextextended('qore rate ' || key_id, 0))` from before it reads
//! the key's window until it commits, so admissions of one key from any number of processes
//! are taken one at a time: with `rpm = n`, exactly `n` requests are admitted in any 60
//! seconds. Times are the database's clock (`clock_timestamp()`), the same for every process.
//! A request admitted under an `rpm` is counted in the window; a refused one is not.
//!
//! One round trip: `BEGIN`, the lock, the window read that also counts the request when the
//! rule admits it, and `COMMIT` are pipelined, so the key's lock is held only while the
//! server runs those statements, never across a trip to this process (under load, a trip
//! waits for a CPU, and every other admission of the key would wait with it). The counting
//! condition is the rule of [`Window::decide`](crate::limits::Window) written in SQL; the
//! verdict returned is `Window::decide` on the same window, and the two are checked to
//! agree (a disagreement is an error, never a silent miscount).
//!
//! The transaction commits with `synchronous_commit = off`: its lock is released without
//! waiting for the WAL to reach the disk. The trade: a crash of the database server (not of a
//! qore process) may forget the last fraction of a second of counted requests, letting a key
//! that many more requests in that minute; nothing else is written here.

use crate::codec::{from_sql_count, to_sql_count};
use crate::interface::{LimitCheck, LimitVerdict};
use crate::limits::{Window, WINDOW_MS};
use crate::StoreError;

use super::conn::{pipeline, Cols, Conn, Step};
use super::PgStore;

const LOCK: &str = "SELECT pg_advisory_xact_lock(hashtextextended('qore rate ' || $1::text, 0))";

/// The key's window (`$1` key, `$2` window ms, `$3` read the budget), with the request
/// counted (`$4` rpm, `$5` tpm, `$6` budget, `$7` estimate) when the rule admits it.
const WINDOW: &str = concat!(
    "WITH ",
    now_ms!(),
    ", gone AS (
    DELETE FROM rate_events WHERE key_id = $1::text AND at <= (SELECT ms FROM now) - $2::bigint
), live AS (
    SELECT e.at, e.requests, e.tokens FROM rate_events e, now
    WHERE e.key_id = $1::text AND e.at > now.ms - $2::bigint
), w AS (
    SELECT now.ms,
           (SELECT coalesce(sum(requests), 0) FROM live)::bigint AS requests,
           (SELECT min(at) FROM live WHERE requests > 0) AS oldest,
           (SELECT coalesce(array_agg(at ORDER BY at), '{}') FROM live WHERE tokens > 0) AS ats,
           (SELECT coalesce(array_agg(tokens ORDER BY at), '{}') FROM live WHERE tokens > 0)
               AS tokens,
           (SELECT coalesce(sum(tokens), 0) FROM live)::numeric AS in_window,
           CASE WHEN $3::bool THEN
               (SELECT coalesce(sum(tokens_in + tokens_out), 0)::bigint FROM usage
                WHERE key_id = $1::text)
           END AS spent
    FROM now
), counted AS (
    INSERT INTO rate_events (key_id, at, requests, tokens)
    SELECT $1::text, (w.ms / 1000 + 1) * 1000, 1, 0 FROM w
    WHERE $4::bigint IS NOT NULL AND w.requests < $4::bigint
      AND NOT ($5::bigint IS NOT NULL AND w.in_window > 0
               AND w.in_window + $7::bigint > $5::bigint)
      AND NOT ($6::bigint IS NOT NULL AND w.spent IS NOT NULL
               AND (w.spent >= $6::bigint OR w.spent::numeric + $7::bigint > $6::bigint))
    ON CONFLICT (key_id, at) DO UPDATE SET requests = rate_events.requests + 1
    RETURNING 1
)
SELECT w.ms, w.requests, w.oldest, w.ats, w.tokens, w.spent, (SELECT count(*) FROM counted)
FROM w"
);

const DOING: &str = "decide a rate limit";

pub(super) async fn admit(store: &PgStore, check: &LimitCheck) -> Result<LimitVerdict, StoreError> {
    let conn = store.conn(DOING).await?;
    match decide(&conn, check).await {
        Ok(verdict) => Ok(verdict),
        Err(error) => Err(conn.rollback(error).await),
    }
}

async fn decide(conn: &Conn<'_>, check: &LimitCheck) -> Result<LimitVerdict, StoreError> {
    let (lock, read) =
        futures_util::future::try_join(conn.prepare(DOING, LOCK), conn.prepare(DOING, WINDOW))
            .await?;
    let key = check.key_id.as_str();
    let budget = check.budget_tokens.is_some();
    let limit = |n: Option<u64>| n.map(to_sql_count);
    let (rpm, tpm, budget_tokens) = (
        limit(check.rpm),
        limit(check.tpm),
        limit(check.budget_tokens),
    );
    let estimate = to_sql_count(check.estimate);
    let lock_params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&key];
    let read_params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] = [
        &key,
        &WINDOW_MS,
        &budget,
        &rpm,
        &tpm,
        &budget_tokens,
        &estimate,
    ];
    let steps: Vec<Step<'_>> = vec![
        conn.step_begin("BEGIN"),
        conn.step_begin("SET LOCAL synchronous_commit = off"),
        conn.step(&lock, &lock_params),
        conn.step(&read, &read_params),
        conn.step_commit(),
    ];
    let answers = pipeline(steps)
        .await
        .map_err(conn.shared.teller.err(DOING))?;
    conn.committed();
    let Some(row) = answers.get(3).and_then(|rows| rows.first()) else {
        return Err(StoreError::PgUnexpected(format!(
            "{DOING}: the window read gave no row"
        )));
    };
    let c = Cols::of(row, conn, DOING);
    let at: Vec<i64> = c.at(3)?;
    let tokens: Vec<i64> = c.at(4)?;
    let window = Window {
        now: c.at(0)?,
        requests: from_sql_count(c.at(1)?),
        oldest_request: c.at(2)?,
        tokens: (at.into_iter().zip(tokens))
            .map(|(at, n)| (at, from_sql_count(n)))
            .collect(),
        spent: c.at::<Option<i64>>(5)?.map(from_sql_count),
    };
    let counted = c.at::<i64>(6)? > 0;
    let verdict = window.decide(check);
    let should_count = matches!(verdict, LimitVerdict::Admitted { .. }) && check.rpm.is_some();
    if counted != should_count {
        return Err(StoreError::PgUnexpected(format!(
            "{DOING}: the window rule and its SQL disagree ({verdict:?}, counted: {counted})"
        )));
    }
    Ok(verdict)
}
