//! `qore serve`'s API keys: the records both backends store, and the check a new key passes.
//!
//! Promises:
//! - a key is stored only as the lowercase SHA-256 hex of its text: the caller hashes, the
//!   text never reaches the store (a hash that is not 64 lowercase hex digits is refused,
//!   [`checked_key`]);
//! - names are unique and not empty: a duplicate is [`StoreError::KeyNameTaken`] naming it;
//! - a key is never deleted, only revoked: it stays listed with its `revoked_at`, and
//!   [`Store::key_by_hash`](crate::Store::key_by_hash) still finds it, so a server can answer
//!   "revoked" rather than "unknown"; revoking twice keeps the first time;
//! - a key is named by its exact name, its exact id, or a unique id prefix;
//! - [`KeysVersion`] changes whenever a key is created, changed or revoked, by any process;
//! - a stored key row decodes the same way on either backend ([`KeyRow`]): `models` that is
//!   not a JSON array of strings is an error naming the key.

use std::time::SystemTime;

use crate::codec::{from_json, millis, new_id, to_json};
use crate::StoreError;

/// A key to create ([`Store::create_key`](crate::Store::create_key)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewKey {
    pub name: String,
    /// Lowercase SHA-256 hex of the key's text.
    pub hash: String,
    /// Glob patterns over agent names and `provider/model`; empty: every model.
    pub models: Vec<String>,
    /// Most requests in any 60 seconds.
    pub rpm: Option<u64>,
    /// Most tokens (in and out) in any 60 seconds.
    pub tpm: Option<u64>,
    /// Most tokens (in and out) over the key's whole life.
    pub budget_tokens: Option<u64>,
}

/// A stored key: its limits and whether it was revoked. No secret in it (the hash of a
/// random key reveals nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    /// A lowercase ULID.
    pub id: String,
    pub name: String,
    pub hash: String,
    pub models: Vec<String>,
    pub rpm: Option<u64>,
    pub tpm: Option<u64>,
    pub budget_tokens: Option<u64>,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Milliseconds since the Unix epoch; `None` while the key is valid.
    pub revoked_at: Option<i64>,
}

impl KeyRecord {
    pub fn is_revoked(&self) -> bool {
        self.revoked_at.is_some()
    }
}

/// What [`Store::keys_version`](crate::Store::keys_version) gives: equal values mean the keys
/// did not change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeysVersion {
    pub(crate) count: i64,
    pub(crate) revoked: i64,
    pub(crate) latest_created: i64,
    pub(crate) latest_revoked: i64,
    /// Changes of keys' globs and limits, summed over every key.
    pub(crate) changes: i64,
}

/// A new key, checked (both backends): its record, valid from now, and its `models` as JSON.
/// An empty name or model pattern, a hash that is not 64 lowercase hex digits, or a limit
/// too large for the database is [`StoreError::InvalidKey`] with the reason.
pub(crate) fn checked_key(new: &NewKey) -> Result<(KeyRecord, String), StoreError> {
    let name = new.name.trim();
    if name.is_empty() {
        return Err(StoreError::InvalidKey(
            "a key name must not be empty".into(),
        ));
    }
    if new.hash.len() != 64
        || !new
            .hash
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Err(StoreError::InvalidKey(
            "the hash must be 64 lowercase hex digits (SHA-256)".into(),
        ));
    }
    let mut models = Vec::with_capacity(new.models.len());
    for pattern in &new.models {
        let pattern = pattern.trim();
        if pattern.is_empty() {
            return Err(StoreError::InvalidKey(
                "a model pattern must not be empty".into(),
            ));
        }
        models.push(pattern.to_owned());
    }
    for (value, what) in [
        (new.rpm, "rpm"),
        (new.tpm, "tpm"),
        (new.budget_tokens, "budget_tokens"),
    ] {
        if value.is_some_and(|n| i64::try_from(n).is_err()) {
            return Err(StoreError::InvalidKey(format!(
                "{what} {value:?} is too large"
            )));
        }
    }
    let record = KeyRecord {
        id: new_id(),
        name: name.to_owned(),
        hash: new.hash.clone(),
        models,
        rpm: new.rpm,
        tpm: new.tpm,
        budget_tokens: new.budget_tokens,
        created_at: millis(SystemTime::now()),
        revoked_at: None,
    };
    let models_json = to_json(&record.models)?;
    Ok((record, models_json))
}

/// A key row as read (`models` left empty), before its `models` JSON is decoded.
pub(crate) struct KeyRow(pub KeyRecord, pub String);

impl KeyRow {
    pub(crate) fn decode(self) -> Result<KeyRecord, StoreError> {
        let KeyRow(mut key, models) = self;
        key.models = from_json(&models, || format!("model patterns of key '{}'", key.name))?;
        Ok(key)
    }
}
