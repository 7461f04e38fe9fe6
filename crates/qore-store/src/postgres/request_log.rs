//! The request log and usage sums on PostgreSQL (the row, the query and what they promise
//! are the crate's `request_log` module).
//!
//! Promises: [`record_requests`] writes a whole batch in ONE statement (an insert over
//! `unnest` of one array per column; a row whose id is already there is left as it is);
//! [`request_log`] pages newest first by id with every filter in SQL, never reading bodies;
//! [`prune_request_log`] deletes by start time; [`usage_sums`] is one `GROUP BY` query.

use tokio_postgres::Row;

use crate::codec::{from_sql_count, to_sql_count};
use crate::request_log::{LogQuery, RequestLogRow, UsageGroup};
use crate::usage::check_day;
use crate::{StoreError, UsageRow};

use super::conn::{Cols, Conn};
use super::PgStore;

const INSERT: &str = "
INSERT INTO request_log (id, at_ms, key_id, dialect, model, agent, upstream, status,
    error_kind, tokens_in, tokens_out, cost_micros, ttfb_ms, duration_ms, session_id,
    response_id, request_body, response_body)
SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[],
    $6::text[], $7::text[], $8::int[], $9::text[], $10::bigint[], $11::bigint[],
    $12::bigint[], $13::bigint[], $14::bigint[], $15::text[], $16::text[], $17::text[],
    $18::text[])
ON CONFLICT (id) DO NOTHING";

const LIST: &str = "
SELECT id, at_ms, key_id, dialect, model, agent, upstream, status, error_kind, tokens_in,
    tokens_out, cost_micros, ttfb_ms, duration_ms, session_id, response_id, NULL::text,
    NULL::text
FROM request_log
WHERE ($1::text IS NULL OR key_id = $1) AND ($2::text IS NULL OR model = $2)
  AND ($3::text IS NULL OR agent = $3) AND ($4::int IS NULL OR status >= $4)
  AND ($5::int IS NULL OR status <= $5) AND ($6::bigint IS NULL OR at_ms >= $6)
  AND ($7::bigint IS NULL OR at_ms < $7) AND ($8::text IS NULL OR id < $8)
ORDER BY id DESC LIMIT $9";

const ENTRY: &str = "
SELECT id, at_ms, key_id, dialect, model, agent, upstream, status, error_kind, tokens_in,
    tokens_out, cost_micros, ttfb_ms, duration_ms, session_id, response_id, request_body,
    response_body
FROM request_log WHERE id = $1";

pub(super) async fn record_requests(
    store: &PgStore,
    rows: &[RequestLogRow],
) -> Result<(), StoreError> {
    const DOING: &str = "record requests";
    let text = |f: fn(&RequestLogRow) -> &str| -> Vec<&str> { rows.iter().map(f).collect() };
    let count = |f: fn(&RequestLogRow) -> u64| -> Vec<i64> {
        rows.iter().map(|r| to_sql_count(f(r))).collect()
    };
    let (ids, keys, dialects) = (text(|r| &r.id), text(|r| &r.key_id), text(|r| &r.dialect));
    let (models, agents) = (text(|r| &r.model), text(|r| &r.agent));
    let (upstreams, kinds) = (text(|r| &r.upstream), text(|r| &r.error_kind));
    let (sessions, responses) = (text(|r| &r.session_id), text(|r| &r.response_id));
    let at: Vec<i64> = rows.iter().map(|r| r.at_ms).collect();
    let status: Vec<i32> = rows.iter().map(|r| i32::from(r.status)).collect();
    let (tokens_in, tokens_out) = (count(|r| r.tokens_in), count(|r| r.tokens_out));
    let durations = count(|r| r.duration_ms);
    let costs: Vec<Option<i64>> = rows.iter().map(|r| r.cost_micros).collect();
    let ttfb: Vec<Option<i64>> = rows.iter().map(|r| r.ttfb_ms.map(to_sql_count)).collect();
    let requests: Vec<Option<&str>> = rows.iter().map(|r| r.request_body.as_deref()).collect();
    let answers: Vec<Option<&str>> = rows.iter().map(|r| r.response_body.as_deref()).collect();
    let conn = store.conn(DOING).await?;
    let statement = conn.prepare(DOING, INSERT).await?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 18] = [
        &ids,
        &at,
        &keys,
        &dialects,
        &models,
        &agents,
        &upstreams,
        &status,
        &kinds,
        &tokens_in,
        &tokens_out,
        &costs,
        &ttfb,
        &durations,
        &sessions,
        &responses,
        &requests,
        &answers,
    ];
    (conn.execute(&statement, &params).await).map_err(conn.shared.teller.err(DOING))?;
    conn.committed();
    Ok(())
}

pub(super) async fn request_log(
    store: &PgStore,
    query: &LogQuery,
) -> Result<Vec<RequestLogRow>, StoreError> {
    const DOING: &str = "read the request log";
    let conn = store.conn(DOING).await?;
    let (status_min, status_max) = (
        query.status_min.map(i32::from),
        query.status_max.map(i32::from),
    );
    let limit = i64::from(query.page_size());
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] = [
        &query.key_id,
        &query.model,
        &query.agent,
        &status_min,
        &status_max,
        &query.since_ms,
        &query.until_ms,
        &query.before,
        &limit,
    ];
    let rows = conn.rows(DOING, LIST, &params).await?;
    rows.iter().map(|row| read_row(row, &conn, DOING)).collect()
}

pub(super) async fn request_entry(
    store: &PgStore,
    id: &str,
) -> Result<Option<RequestLogRow>, StoreError> {
    const DOING: &str = "read a request";
    let conn = store.conn(DOING).await?;
    let rows = conn.rows(DOING, ENTRY, &[&id]).await?;
    rows.first()
        .map(|row| read_row(row, &conn, DOING))
        .transpose()
}

pub(super) async fn prune_request_log(store: &PgStore, before_ms: i64) -> Result<u64, StoreError> {
    const DOING: &str = "prune the request log";
    let conn = store.conn(DOING).await?;
    let statement = conn
        .prepare(DOING, "DELETE FROM request_log WHERE at_ms < $1")
        .await?;
    let deleted =
        (conn.execute(&statement, &[&before_ms]).await).map_err(conn.shared.teller.err(DOING))?;
    conn.committed();
    Ok(deleted)
}

pub(super) async fn usage_sums(
    store: &PgStore,
    by: UsageGroup,
    by_agent: bool,
    key_id: Option<&str>,
    since: Option<&str>,
    until: Option<&str>,
) -> Result<Vec<UsageRow>, StoreError> {
    const DOING: &str = "sum usage";
    for day in [since, until].into_iter().flatten() {
        check_day(day)?;
    }
    let conn = store.conn(DOING).await?;
    let sql = by.sql("$1::text", "$2::text", "$3::text", by_agent);
    let rows = conn.rows(DOING, &sql, &[&key_id, &since, &until]).await?;
    rows.iter()
        .map(|row| {
            let c = Cols::of(row, &conn, DOING);
            let count = |i: usize| c.at::<i64>(i).map(from_sql_count);
            let (value, agent): (String, String) = (c.at(0)?, c.at(1)?);
            Ok(by.row(value, agent, [count(2)?, count(3)?, count(4)?, count(5)?]))
        })
        .collect()
}

fn read_row(row: &Row, conn: &Conn<'_>, doing: &str) -> Result<RequestLogRow, StoreError> {
    let c = Cols::of(row, conn, doing);
    let count = |i: usize| c.at::<i64>(i).map(from_sql_count);
    Ok(RequestLogRow {
        id: c.at(0)?,
        at_ms: c.at(1)?,
        key_id: c.at(2)?,
        dialect: c.at(3)?,
        model: c.at(4)?,
        agent: c.at(5)?,
        upstream: c.at(6)?,
        status: u16::try_from(c.at::<i32>(7)?).unwrap_or(0),
        error_kind: c.at(8)?,
        tokens_in: count(9)?,
        tokens_out: count(10)?,
        cost_micros: c.at(11)?,
        ttfb_ms: c.at::<Option<i64>>(12)?.map(from_sql_count),
        duration_ms: count(13)?,
        session_id: c.at(14)?,
        response_id: c.at(15)?,
        request_body: c.at(16)?,
        response_body: c.at(17)?,
    })
}
