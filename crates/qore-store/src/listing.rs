//! What the admin API asks of the store besides the request log: a page of keys filtered in
//! the database, a change of one key's globs and limits, and a page of sessions.
//!
//! Promises (both backends):
//! - [`KeyQuery`] pages keys in id order (creation order) after a cursor, keeping those
//!   whose name contains `search` (ASCII letters case-insensitive) and leaving out names that
//!   start with `hide_prefix`; the database filters, sorts and limits;
//! - [`KeyChange`] changes only the fields it gives (a limit `Some(None)` clears it) in one
//!   statement, and [`crate::Store::keys_version`] changes with it, so every process's copy
//!   of the keys reloads; a change is checked like a new key ([`checked_change`]);
//! - [`SessionQuery`] pages sessions newest first by id (creation order) below a cursor,
//!   keeping those whose title, name or id contains `search`; a page holds at most
//!   [`MOST_SESSIONS`] sessions.

use crate::StoreError;

/// The most keys or sessions one page holds.
pub const MOST_SESSIONS: u32 = 1000;

/// A page of keys ([`crate::Store::key_page`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyQuery {
    /// A part of the name (ASCII letters case-insensitive).
    pub search: Option<String>,
    /// The cursor: keys whose id is above this one.
    pub after: Option<String>,
    /// Keys per page (1 to [`MOST_SESSIONS`]).
    pub limit: u32,
    /// Names starting with this are left out (the admin credentials).
    pub hide_prefix: Option<String>,
}

/// A change of one key ([`crate::Store::change_key`]): `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyChange {
    pub models: Option<Vec<String>>,
    pub rpm: Option<Option<u64>>,
    pub tpm: Option<Option<u64>>,
    pub budget_tokens: Option<Option<u64>>,
}

/// A page of sessions ([`crate::Store::session_page`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionQuery {
    /// A part of the title, name or id (ASCII letters case-insensitive).
    pub search: Option<String>,
    /// The cursor: sessions whose id is below this one (the last of the previous page).
    pub before: Option<String>,
    /// Sessions per page (1 to [`MOST_SESSIONS`]).
    pub limit: u32,
}

/// A page size within 1 and [`MOST_SESSIONS`].
pub(crate) fn page_size(limit: u32) -> i64 {
    i64::from(limit.clamp(1, MOST_SESSIONS))
}

/// A search term as the SQL compares it: lowercase, `None` when empty.
pub(crate) fn search_term(search: &Option<String>) -> Option<String> {
    (search.as_deref())
        .map(str::to_lowercase)
        .filter(|s| !s.is_empty())
}

/// A change as the SQL writes it: `models` as JSON, then for each limit whether it is set
/// and its value (`rpm`, `tpm`, `budget_tokens`). An empty model pattern or a limit too
/// large for the database is [`StoreError::InvalidKey`].
#[allow(clippy::type_complexity)]
pub(crate) fn checked_change(
    change: &KeyChange,
) -> Result<(Option<String>, [(bool, Option<i64>); 3]), StoreError> {
    let models = match &change.models {
        None => None,
        Some(patterns) => {
            let mut models = Vec::with_capacity(patterns.len());
            for pattern in patterns {
                let pattern = pattern.trim();
                if pattern.is_empty() {
                    return Err(StoreError::InvalidKey(
                        "a model pattern must not be empty".into(),
                    ));
                }
                models.push(pattern.to_owned());
            }
            Some(crate::codec::to_json(&models)?)
        }
    };
    let limit = |value: Option<Option<u64>>, what: &str| -> Result<_, StoreError> {
        match value {
            None => Ok((false, None)),
            Some(None) => Ok((true, None)),
            Some(Some(n)) => match i64::try_from(n) {
                Ok(n) => Ok((true, Some(n))),
                Err(_) => Err(StoreError::InvalidKey(format!("{what} {n} is too large"))),
            },
        }
    };
    Ok((
        models,
        [
            limit(change.rpm, "rpm")?,
            limit(change.tpm, "tpm")?,
            limit(change.budget_tokens, "budget_tokens")?,
        ],
    ))
}
