//! Rate limits decided in PostgreSQL: the crate's window rule, the same as on SQLite
//! ([`Window::decide`](crate::limits::Window)), made atomic across processes by a lock.
//!
//! Promises: [`admit`] is one transaction holding
//! `pg_advisory_xact_lock(hashtextextended('qore rate ' || key_id, 0))` from before it reads
//! the key's window until it commits, so admissions of one key from any number of processes
//! are taken one at a time: with `rpm = n`, exactly `n` requests are admitted in any 60
//! seconds. Times are the database's clock (`clock_timestamp()`), the same for every process.
//! A request admitted under an `rpm` is counted in the window; a refused one is not. Two round
//! trips: `BEGIN`, the lock and the window read (which also drops the key's expired events)
//! pipelined; then the count (when admitted) and `COMMIT` pipelined.
//!
//! The transaction commits with `synchronous_commit = off`: its lock is released without
//! waiting for the WAL to reach the disk, so one key's admissions are not serialised on
//! fsyncs. The trade: a crash of the database server (not of a qore process) may forget the
//! last fraction of a second of counted requests, letting a key that many more requests in
//! that minute; nothing else is written here.

use crate::codec::from_sql_count;
use crate::interface::{LimitCheck, LimitVerdict};
use crate::limits::{Window, WINDOW_MS};
use crate::StoreError;

use super::conn::{pipeline, Cols, Conn, Step};
use super::PgStore;

const LOCK: &str = "SELECT pg_advisory_xact_lock(hashtextextended('qore rate ' || $1::text, 0))";

const WINDOW: &str = concat!(
    "WITH ",
    now_ms!(),
    ", gone AS (
    DELETE FROM rate_events WHERE key_id = $1::text AND at <= (SELECT ms FROM now) - $2::bigint
), live AS (
    SELECT e.at, e.requests, e.tokens FROM rate_events e, now
    WHERE e.key_id = $1::text AND e.at > now.ms - $2::bigint
)
SELECT now.ms,
       (SELECT count(*) FROM live WHERE requests > 0),
       (SELECT min(at) FROM live WHERE requests > 0),
       (SELECT coalesce(array_agg(at ORDER BY at), '{}') FROM live WHERE tokens > 0),
       (SELECT coalesce(array_agg(tokens ORDER BY at), '{}') FROM live WHERE tokens > 0),
       CASE WHEN $3::bool THEN
           (SELECT coalesce(sum(tokens_in + tokens_out), 0)::bigint FROM usage
            WHERE key_id = $1::text)
       END
FROM now"
);

const COUNT: &str =
    "INSERT INTO rate_events (key_id, at, requests, tokens) VALUES ($1::text, $2::bigint, 1, 0)";

const DOING: &str = "decide a rate limit";

pub(super) async fn admit(store: &PgStore, check: &LimitCheck) -> Result<LimitVerdict, StoreError> {
    let conn = store.conn(DOING).await?;
    match decide(&conn, check).await {
        Ok(verdict) => Ok(verdict),
        Err(error) => Err(conn.rollback(error).await),
    }
}

async fn decide(conn: &Conn<'_>, check: &LimitCheck) -> Result<LimitVerdict, StoreError> {
    let (lock, read, count) = futures_util::future::try_join3(
        conn.prepare(DOING, LOCK),
        conn.prepare(DOING, WINDOW),
        conn.prepare(DOING, COUNT),
    )
    .await?;
    let key = check.key_id.as_str();
    let budget = check.budget_tokens.is_some();
    let lock_params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&key];
    let read_params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] = [&key, &WINDOW_MS, &budget];
    let steps: Vec<Step<'_>> = vec![
        conn.step_begin("BEGIN"),
        conn.step_begin("SET LOCAL synchronous_commit = off"),
        conn.step(&lock, &lock_params),
        conn.step(&read, &read_params),
    ];
    let answers = pipeline(steps)
        .await
        .map_err(conn.shared.teller.err(DOING))?;
    let Some(row) = answers.last().and_then(|rows| rows.first()) else {
        return Err(StoreError::PgUnexpected(format!(
            "{DOING}: the window read gave no row"
        )));
    };
    let c = Cols::of(row, conn, DOING);
    let now: i64 = c.at(0)?;
    let at: Vec<i64> = c.at(3)?;
    let tokens: Vec<i64> = c.at(4)?;
    let window = Window {
        now,
        requests: from_sql_count(c.at(1)?),
        oldest_request: c.at(2)?,
        tokens: (at.into_iter().zip(tokens))
            .map(|(at, n)| (at, from_sql_count(n)))
            .collect(),
        spent: c.at::<Option<i64>>(5)?.map(from_sql_count),
    };
    let verdict = window.decide(check);
    let count_params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&key, &now];
    let mut steps: Vec<Step<'_>> = Vec::new();
    if matches!(verdict, LimitVerdict::Admitted { .. }) && check.rpm.is_some() {
        steps.push(conn.step(&count, &count_params));
    }
    steps.push(conn.step_commit());
    pipeline(steps)
        .await
        .map_err(conn.shared.teller.err(DOING))?;
    conn.committed();
    Ok(verdict)
}
