//! Copying whole records into PostgreSQL as they are, and reading responses out for a copy
//! (`qore store migrate`).
//!
//! Promises (the same as SQLite's): a session keeps its id, name, title, times,
//! parent link (when the parent is there) and every turn with its `seq`, undone flag,
//! messages and file changes, in one transaction; the store clock is moved past its
//! `updated_at`, so later writes still list newer. A key, a usage row or a response keeps
//! what it has. Whatever is already there (by id; by (day, key, model, agent) for usage) is
//! left alone and reported as not copied.

use crate::codec::{to_json, to_sql_count};
use crate::interface::{ResponseCopy, SessionCopy};
use crate::{KeyRecord, StoreError, UsageRow};

use super::conn::{pipeline, Cols, Step};
use super::errors::violated;
use super::responses::{record, RESPONSE_COLUMNS};
use super::sessions::{turn_params, TurnParams, INSERT_TURN};
use super::PgStore;

const COPY_SESSION: &str = "
WITH s AS (
    INSERT INTO sessions (id, name, title, project_dir, agent, model, created_at, updated_at,
                          parent_id)
    VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint, $8::bigint,
            (SELECT id FROM sessions WHERE id = $9::text))
    ON CONFLICT (id) DO NOTHING
    RETURNING id
), clock AS (
    UPDATE store_clock SET last = greatest(last, $8::bigint) WHERE EXISTS (SELECT 1 FROM s)
)
SELECT id FROM s";

pub(super) async fn responses(store: &PgStore) -> Result<Vec<ResponseCopy>, StoreError> {
    const DOING: &str = "list stored responses";
    let conn = store.conn(DOING).await?;
    let sql = format!(
        "SELECT {RESPONSE_COLUMNS}, t.seq FROM responses r LEFT JOIN turns t ON t.id = r.turn_id
         ORDER BY r.created_at, r.id"
    );
    let rows = conn.rows(DOING, &sql, &[]).await?;
    rows.iter()
        .map(|row| {
            Ok(ResponseCopy {
                record: record(row, &conn, DOING)?,
                turn_seq: Cols::of(row, &conn, DOING).at(7)?,
            })
        })
        .collect()
}

pub(super) async fn copy_session(store: &PgStore, copy: &SessionCopy) -> Result<bool, StoreError> {
    const DOING: &str = "copy a session";
    let turns = (copy.turns.iter())
        .map(|turn| TurnParams::of(&turn.record))
        .collect::<Result<Vec<_>, _>>()?;
    let info = &copy.info;
    let conn = store.conn(DOING).await?;
    let session_statement = conn.prepare(DOING, COPY_SESSION).await?;
    let turn_statement = conn.prepare(DOING, INSERT_TURN).await?;
    let session_params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] = [
        &info.id,
        &info.name,
        &info.title,
        &info.project_dir,
        &info.agent,
        &info.model,
        &info.created_at,
        &info.updated_at,
        &info.parent_id,
    ];
    let steps = vec![
        conn.step_begin("BEGIN"),
        conn.step(&session_statement, &session_params),
    ];
    let inserted = match pipeline(steps).await {
        Ok(answers) => answers.last().is_some_and(|rows| !rows.is_empty()),
        Err(e) => {
            let error = match (violated(&e), &info.name) {
                (Some("sessions_name_key"), Some(name)) => StoreError::NameTaken(name.clone()),
                _ => conn.shared.teller.db(DOING, e),
            };
            return Err(conn.rollback(error).await);
        }
    };
    if !inserted {
        conn.abandon().await;
        return Ok(false);
    }
    let params: Vec<_> = (turns.iter().zip(&copy.turns))
        .map(|(p, turn)| turn_params(&info.id, &turn.seq, p, &turn.undone))
        .collect();
    let mut steps: Vec<Step<'_>> = (params.iter())
        .map(|params| conn.step(&turn_statement, params))
        .collect();
    steps.push(conn.step_commit());
    match pipeline(steps).await {
        Ok(_) => {
            conn.committed();
            Ok(true)
        }
        Err(e) => {
            let error = conn.shared.teller.db(DOING, e);
            Err(conn.rollback(error).await)
        }
    }
}

pub(super) async fn copy_key(store: &PgStore, key: &KeyRecord) -> Result<bool, StoreError> {
    const DOING: &str = "copy an API key";
    let models = to_json(&key.models)?;
    let count = |n: Option<u64>| n.map(to_sql_count);
    let (rpm, tpm, budget) = (count(key.rpm), count(key.tpm), count(key.budget_tokens));
    let conn = store.conn(DOING).await?;
    let sql = "INSERT INTO api_keys (id, name, hash, models, rpm, tpm, budget_tokens, created_at,
                                     revoked_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING";
    let statement = conn.prepare(DOING, sql).await?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] = [
        &key.id,
        &key.name,
        &key.hash,
        &models,
        &rpm,
        &tpm,
        &budget,
        &key.created_at,
        &key.revoked_at,
    ];
    match conn.execute(&statement, &params).await {
        Ok(n) => {
            conn.committed();
            Ok(n > 0)
        }
        Err(e) => Err(match violated(&e) {
            Some("api_keys_name_key" | "api_keys_hash_key") => {
                StoreError::KeyNameTaken(key.name.clone())
            }
            _ => conn.shared.teller.db(DOING, e),
        }),
    }
}

pub(super) async fn copy_usage(store: &PgStore, row: &UsageRow) -> Result<bool, StoreError> {
    const DOING: &str = "copy a usage row";
    let conn = store.conn(DOING).await?;
    let sql = "INSERT INTO usage (day, key_id, model, agent, requests, errors, tokens_in,
                                  tokens_out)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
               ON CONFLICT (day, key_id, model, agent) DO NOTHING";
    let statement = conn.prepare(DOING, sql).await?;
    let counts = [row.requests, row.errors, row.tokens_in, row.tokens_out].map(to_sql_count);
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 8] = [
        &row.day,
        &row.key_id,
        &row.model,
        &row.agent,
        &counts[0],
        &counts[1],
        &counts[2],
        &counts[3],
    ];
    let inserted =
        (conn.execute(&statement, &params).await).map_err(conn.shared.teller.err(DOING))?;
    conn.committed();
    Ok(inserted > 0)
}

pub(super) async fn copy_response(
    store: &PgStore,
    copy: &ResponseCopy,
) -> Result<bool, StoreError> {
    const DOING: &str = "copy a stored response";
    let r = &copy.record;
    let conn = store.conn(DOING).await?;
    let sql = "INSERT INTO responses (id, key_id, session_id, turn_id, pending, object, created_at)
               SELECT $1::text, $2::text, (SELECT id FROM sessions WHERE id = $3::text),
                      (SELECT id FROM turns WHERE session_id = $3::text AND seq = $4::bigint),
                      $5::text, $6::text, $7::bigint
               ON CONFLICT (id) DO NOTHING";
    let statement = conn.prepare(DOING, sql).await?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] = [
        &r.id,
        &r.key_id,
        &r.session_id,
        &copy.turn_seq,
        &r.pending,
        &r.object,
        &r.created_at,
    ];
    let inserted =
        (conn.execute(&statement, &params).await).map_err(conn.shared.teller.err(DOING))?;
    conn.committed();
    Ok(inserted > 0)
}
