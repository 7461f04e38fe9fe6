//! How values are written to and read back from either database (both backends use these):
//! times as integer milliseconds since the Unix epoch, counts as signed 64-bit integers, JSON
//! columns, the words stored for a message's role, new ids.
//!
//! Promises: a time before the epoch is stored as 0 and a count past `i64::MAX` saturates; a
//! stored negative time or count reads back as 0 (qore never writes one); a JSON column that
//! does not decode is [`StoreError::Corrupt`] naming the row, never a panic, and a value that
//! does not encode is [`StoreError::Encode`]; a new id is a lowercase ULID (time-prefixed, so
//! ids sort by creation).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::StoreError;

/// A new record's id: a lowercase ULID.
pub(crate) fn new_id() -> String {
    ulid::Ulid::generate().to_string().to_lowercase()
}

/// Milliseconds since the Unix epoch (0 for a time before it).
pub(crate) fn millis(at: SystemTime) -> i64 {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// The time `millis` milliseconds after the Unix epoch (the epoch for a negative value): a
/// stored time as a `SystemTime`.
pub fn time_of(millis: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).unwrap_or(0))
}

/// A stored count as `u64` (a negative one, which qore never writes, as 0).
pub(crate) fn from_sql_count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// A count as the database's integer (saturating).
pub(crate) fn to_sql_count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A JSON column's value, or [`StoreError::Corrupt`] naming `what` it was.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    text: &str,
    what: impl FnOnce() -> String,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|source| StoreError::Corrupt {
        what: what(),
        source,
    })
}

/// `value` as a JSON column.
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(StoreError::Encode)
}

/// The word stored in `messages.role`.
pub(crate) fn role_word(role: qore_core::Role) -> &'static str {
    match role {
        qore_core::Role::System => "system",
        qore_core::Role::User => "user",
        qore_core::Role::Assistant => "assistant",
    }
}
