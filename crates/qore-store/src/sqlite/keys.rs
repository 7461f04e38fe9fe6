//! `qore serve`'s API keys on SQLite (the records and the check of a new key are the crate's
//! `keys` module).
//!
//! Promises: a hash stored twice is [`StoreError::InvalidKey`], a name taken
//! [`StoreError::KeyNameTaken`]; [`Db::key`] finds a key by exact name, exact id, then unique
//! id prefix; revoking keeps the first revocation time; [`Db::keys_version`] changes whenever
//! a key is created, changed or revoked, by this handle or by another process on the same
//! file, and costs one aggregate query over the table; [`Db::key_page`] filters and pages in
//! SQL; [`Db::change_key`] changes the given fields in one statement, counting the change
//! in the key's `changes`; every method is one plain SQL statement.

use std::time::SystemTime;

use rusqlite::{params, Row};

use crate::codec::{from_sql_count, millis, to_sql_count};
use crate::keys::{checked_key, KeyRow};
use crate::listing::{checked_change, page_size, search_term};
use crate::lookup::{the_one, MOST_CANDIDATES};
use crate::{KeyChange, KeyQuery, KeyRecord, KeysVersion, NewKey, StoreError};

use super::Db;

const SELECT_KEY: &str = "SELECT id, name, hash, models, rpm, tpm, budget_tokens, created_at,
                                 revoked_at FROM api_keys";

impl Db {
    /// Store a new key (valid from now) and return its record.
    pub fn create_key(&self, new: &NewKey) -> Result<KeyRecord, StoreError> {
        let (record, models_json) = checked_key(new)?;
        let limit = |value: Option<u64>| value.map(to_sql_count);
        let inserted = self.conn.execute(
            "INSERT INTO api_keys (id, name, hash, models, rpm, tpm, budget_tokens, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                record.id,
                record.name,
                record.hash,
                models_json,
                limit(record.rpm),
                limit(record.tpm),
                limit(record.budget_tokens),
                record.created_at
            ],
        );
        match inserted {
            Ok(_) => Ok(record),
            Err(rusqlite::Error::SqliteFailure(e, Some(message)))
                if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
            {
                if message.contains("api_keys.name") {
                    Err(StoreError::KeyNameTaken(record.name))
                } else {
                    Err(StoreError::InvalidKey("this key is already stored".into()))
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Every key, revoked ones included, oldest first.
    pub fn keys(&self) -> Result<Vec<KeyRecord>, StoreError> {
        self.query_keys(&format!("{SELECT_KEY} ORDER BY created_at, id"), params![])
    }

    /// The key whose hash this is, revoked or not.
    pub fn key_by_hash(&self, hash: &str) -> Result<Option<KeyRecord>, StoreError> {
        let found = self.query_keys(&format!("{SELECT_KEY} WHERE hash = ?1"), params![hash])?;
        Ok(found.into_iter().next())
    }

    /// The key named `name_or_id`: exact name, exact id, else the one id starting with it.
    pub fn key(&self, name_or_id: &str) -> Result<KeyRecord, StoreError> {
        let exact = self.query_keys(
            &format!("{SELECT_KEY} WHERE name = ?1 OR id = ?1 ORDER BY name = ?1 DESC"),
            params![name_or_id.trim()],
        )?;
        if let Some(key) = exact.into_iter().next() {
            return Ok(key);
        }
        let prefix = name_or_id.trim().to_lowercase();
        let found = if prefix.is_empty() {
            Vec::new()
        } else {
            self.query_keys(
                &format!(
                    "{SELECT_KEY} WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id LIMIT {}",
                    MOST_CANDIDATES + 1
                ),
                params![prefix],
            )?
        };
        the_one(
            found,
            name_or_id,
            || StoreError::NoSuchKey(name_or_id.to_owned()),
            |k| format!("{} ({})", k.id, k.name),
        )
    }

    /// Revoke the key named `name_or_id` (see [`Db::key`]) and return its record. A key
    /// already revoked keeps its first revocation time.
    pub fn revoke_key(&self, name_or_id: &str) -> Result<KeyRecord, StoreError> {
        let key = self.key(name_or_id)?;
        self.conn.execute(
            "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
            params![key.id, millis(SystemTime::now())],
        )?;
        self.key(&key.id)
    }

    /// A page of keys in id order (see [`KeyQuery`]).
    pub fn key_page(&self, query: &KeyQuery) -> Result<Vec<KeyRecord>, StoreError> {
        let sql = format!(
            "{SELECT_KEY} WHERE (?1 IS NULL OR instr(lower(name), ?1) > 0)
                             AND (?2 IS NULL OR id > ?2)
                             AND (?3 IS NULL OR substr(name, 1, length(?3)) <> ?3)
             ORDER BY id LIMIT ?4"
        );
        let search = search_term(&query.search);
        let limit = page_size(query.limit);
        self.query_keys(&sql, params![search, query.after, query.hide_prefix, limit])
    }

    /// Change the fields `change` gives of the key `name_or_id` (see [`Db::key`]).
    pub fn change_key(
        &self,
        name_or_id: &str,
        change: &KeyChange,
    ) -> Result<KeyRecord, StoreError> {
        let (models, [rpm, tpm, budget]) = checked_change(change)?;
        let key = self.key(name_or_id)?;
        self.conn.execute(
            "UPDATE api_keys SET models = coalesce(?2, models),
                    rpm = CASE WHEN ?3 THEN ?4 ELSE rpm END,
                    tpm = CASE WHEN ?5 THEN ?6 ELSE tpm END,
                    budget_tokens = CASE WHEN ?7 THEN ?8 ELSE budget_tokens END,
                    changes = changes + 1
             WHERE id = ?1",
            params![key.id, models, rpm.0, rpm.1, tpm.0, tpm.1, budget.0, budget.1],
        )?;
        self.key(&key.id)
    }

    /// A value that changes whenever a key is created, changed or revoked (here or by another
    /// process): poll it and reload [`Db::keys`] when it differs.
    pub fn keys_version(&self) -> Result<KeysVersion, StoreError> {
        Ok(self.conn.query_row(
            "SELECT count(*), count(revoked_at), coalesce(max(created_at), 0),
                    coalesce(max(revoked_at), 0), coalesce(sum(changes), 0) FROM api_keys",
            [],
            |row| {
                Ok(KeysVersion {
                    count: row.get(0)?,
                    revoked: row.get(1)?,
                    latest_created: row.get(2)?,
                    latest_revoked: row.get(3)?,
                    changes: row.get(4)?,
                })
            },
        )?)
    }

    fn query_keys(
        &self,
        sql: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<KeyRecord>, StoreError> {
        let mut query = self.conn.prepare(sql)?;
        let raw = query
            .query_map(params, key_row)?
            .collect::<Result<Vec<_>, _>>()?;
        raw.into_iter().map(KeyRow::decode).collect()
    }
}

fn key_row(row: &Row<'_>) -> rusqlite::Result<KeyRow> {
    let count = |i: usize| -> rusqlite::Result<Option<u64>> {
        Ok(row.get::<_, Option<i64>>(i)?.map(from_sql_count))
    };
    Ok(KeyRow(
        KeyRecord {
            id: row.get(0)?,
            name: row.get(1)?,
            hash: row.get(2)?,
            models: Vec::new(),
            rpm: count(4)?,
            tpm: count(5)?,
            budget_tokens: count(6)?,
            created_at: row.get(7)?,
            revoked_at: row.get(8)?,
        },
        row.get(3)?,
    ))
}
