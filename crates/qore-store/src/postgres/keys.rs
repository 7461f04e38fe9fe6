//! `qore serve`'s API keys on PostgreSQL.
//!
//! Promises (those of the crate's `keys` module, whose check [`checked_key`] and row
//! decoding [`KeyRow`] both backends use): a key is stored only as its hash; names are unique ([`StoreError::KeyNameTaken`]), and a hash
//! stored twice is [`StoreError::InvalidKey`]; a key is never deleted, only revoked, keeping
//! its first revocation time; a key is found by exact name, exact id, then unique id prefix;
//! [`keys_version`] is one aggregate query and changes whenever any process creates,
//! changes or revokes a key; [`key_page`] filters and pages in SQL; [`change_key`] changes
//! the given fields in one statement, counting the change in the key's `changes`.

use std::time::SystemTime;

use tokio_postgres::Row;

use crate::codec::{from_sql_count, millis, to_sql_count};
use crate::keys::{checked_key, KeyRow};
use crate::listing::{checked_change, page_size, search_term};
use crate::lookup::{the_one, MOST_CANDIDATES};
use crate::{KeyChange, KeyQuery, KeyRecord, KeysVersion, NewKey, StoreError};

use super::conn::{Cols, Conn};
use super::errors::violated;
use super::PgStore;

macro_rules! key_columns {
    () => {
        "id, name, hash, models, rpm, tpm, budget_tokens, created_at, revoked_at"
    };
}

const SELECT_KEY: &str = concat!("SELECT ", key_columns!(), " FROM api_keys");

fn key(row: &Row, conn: &Conn<'_>, doing: &str) -> Result<KeyRecord, StoreError> {
    let c = Cols::of(row, conn, doing);
    let count = |i: usize| -> Result<Option<u64>, StoreError> {
        Ok(c.at::<Option<i64>>(i)?.map(from_sql_count))
    };
    KeyRow(
        KeyRecord {
            id: c.at(0)?,
            name: c.at(1)?,
            hash: c.at(2)?,
            models: Vec::new(),
            rpm: count(4)?,
            tpm: count(5)?,
            budget_tokens: count(6)?,
            created_at: c.at(7)?,
            revoked_at: c.at(8)?,
        },
        c.at(3)?,
    )
    .decode()
}

async fn query_keys(
    conn: &Conn<'_>,
    doing: &str,
    sql: &str,
    params: &super::conn::Params<'_>,
) -> Result<Vec<KeyRecord>, StoreError> {
    let rows = conn.rows(doing, sql, params).await?;
    rows.iter().map(|row| key(row, conn, doing)).collect()
}

pub(super) async fn create_key(store: &PgStore, new: &NewKey) -> Result<KeyRecord, StoreError> {
    const DOING: &str = "create an API key";
    let (record, models) = checked_key(new)?;
    let limit = |value: Option<u64>| value.map(to_sql_count);
    let (rpm, tpm, budget) = (
        limit(record.rpm),
        limit(record.tpm),
        limit(record.budget_tokens),
    );
    let conn = store.conn(DOING).await?;
    let sql = "INSERT INTO api_keys (id, name, hash, models, rpm, tpm, budget_tokens, created_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
    let statement = conn.prepare(DOING, sql).await?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 8] = [
        &record.id,
        &record.name,
        &record.hash,
        &models,
        &rpm,
        &tpm,
        &budget,
        &record.created_at,
    ];
    match conn.execute(&statement, &params).await {
        Ok(_) => {
            conn.committed();
            Ok(record)
        }
        Err(e) => Err(match violated(&e) {
            Some("api_keys_name_key") => StoreError::KeyNameTaken(record.name),
            Some("api_keys_hash_key") => {
                StoreError::InvalidKey("this key is already stored".into())
            }
            _ => conn.shared.teller.db(DOING, e),
        }),
    }
}

pub(super) async fn keys(store: &PgStore) -> Result<Vec<KeyRecord>, StoreError> {
    const DOING: &str = "list API keys";
    let conn = store.watch_conn(DOING).await?;
    let sql = format!("{SELECT_KEY} ORDER BY created_at, id");
    query_keys(&conn, DOING, &sql, &[]).await
}

pub(super) async fn key_by_hash(
    store: &PgStore,
    hash: &str,
) -> Result<Option<KeyRecord>, StoreError> {
    const DOING: &str = "find an API key by its hash";
    if hash.contains('\0') {
        return Ok(None);
    }
    let conn = store.conn(DOING).await?;
    let sql = format!("{SELECT_KEY} WHERE hash = $1");
    Ok(query_keys(&conn, DOING, &sql, &[&hash])
        .await?
        .into_iter()
        .next())
}

pub(super) async fn find_key(store: &PgStore, name_or_id: &str) -> Result<KeyRecord, StoreError> {
    const DOING: &str = "find an API key";
    if name_or_id.contains('\0') {
        return Err(StoreError::NoSuchKey(name_or_id.to_owned()));
    }
    let conn = store.conn(DOING).await?;
    let wanted = name_or_id.trim();
    let sql = format!("{SELECT_KEY} WHERE name = $1 OR id = $1 ORDER BY name = $1 DESC LIMIT 1");
    if let Some(key) = query_keys(&conn, DOING, &sql, &[&wanted])
        .await?
        .into_iter()
        .next()
    {
        return Ok(key);
    }
    let prefix = wanted.to_lowercase();
    let found = if prefix.is_empty() {
        Vec::new()
    } else {
        let sql = format!(
            "{SELECT_KEY} WHERE starts_with(id, $1) ORDER BY id LIMIT {}",
            MOST_CANDIDATES + 1
        );
        query_keys(&conn, DOING, &sql, &[&prefix]).await?
    };
    the_one(
        found,
        name_or_id,
        || StoreError::NoSuchKey(name_or_id.to_owned()),
        |k| format!("{} ({})", k.id, k.name),
    )
}

pub(super) async fn revoke_key(store: &PgStore, name_or_id: &str) -> Result<KeyRecord, StoreError> {
    const DOING: &str = "revoke an API key";
    let found = find_key(store, name_or_id).await?;
    let conn = store.conn(DOING).await?;
    let sql = concat!(
        "UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING ",
        key_columns!()
    );
    let now = millis(SystemTime::now());
    let mut revoked = query_keys(&conn, DOING, sql, &[&found.id, &now]).await?;
    conn.committed();
    match revoked.pop() {
        Some(key) => Ok(key),
        None => Err(StoreError::NoSuchKey(name_or_id.to_owned())),
    }
}

pub(super) async fn keys_version(store: &PgStore) -> Result<KeysVersion, StoreError> {
    const DOING: &str = "read the API keys' version";
    let conn = store.watch_conn(DOING).await?;
    let sql = "SELECT count(*), count(revoked_at), coalesce(max(created_at), 0),
                      coalesce(max(revoked_at), 0), CAST(coalesce(sum(changes), 0) AS BIGINT)
               FROM api_keys";
    let row = conn.row(DOING, sql, &[]).await?;
    let c = Cols::of(&row, &conn, DOING);
    Ok(KeysVersion {
        count: c.at(0)?,
        revoked: c.at(1)?,
        latest_created: c.at(2)?,
        latest_revoked: c.at(3)?,
        changes: c.at(4)?,
    })
}

pub(super) async fn key_page(
    store: &PgStore,
    query: &KeyQuery,
) -> Result<Vec<KeyRecord>, StoreError> {
    const DOING: &str = "list a page of API keys";
    let text = |v: &Option<String>| v.as_ref().map(|t| t.replace('\0', ""));
    let (search, after, hide) = (
        text(&search_term(&query.search)),
        text(&query.after),
        text(&query.hide_prefix),
    );
    let limit = page_size(query.limit);
    let conn = store.conn(DOING).await?;
    let sql = format!(
        "{SELECT_KEY} WHERE ($1::text IS NULL OR strpos(lower(name), $1) > 0)
                         AND ($2::text IS NULL OR id > $2)
                         AND ($3::text IS NULL OR NOT starts_with(name, $3))
         ORDER BY id LIMIT $4"
    );
    query_keys(&conn, DOING, &sql, &[&search, &after, &hide, &limit]).await
}

pub(super) async fn change_key(
    store: &PgStore,
    name_or_id: &str,
    change: &KeyChange,
) -> Result<KeyRecord, StoreError> {
    const DOING: &str = "change an API key";
    let (models, [rpm, tpm, budget]) = checked_change(change)?;
    let found = find_key(store, name_or_id).await?;
    let conn = store.conn(DOING).await?;
    let sql = concat!(
        "UPDATE api_keys SET models = coalesce($2, models),
                rpm = CASE WHEN $3 THEN $4 ELSE rpm END,
                tpm = CASE WHEN $5 THEN $6 ELSE tpm END,
                budget_tokens = CASE WHEN $7 THEN $8 ELSE budget_tokens END,
                changes = changes + 1
         WHERE id = $1 RETURNING ",
        key_columns!()
    );
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 8] = [
        &found.id, &models, &rpm.0, &rpm.1, &tpm.0, &tpm.1, &budget.0, &budget.1,
    ];
    let mut changed = query_keys(&conn, DOING, sql, &params).await?;
    conn.committed();
    match changed.pop() {
        Some(key) => Ok(key),
        None => Err(StoreError::NoSuchKey(name_or_id.to_owned())),
    }
}
