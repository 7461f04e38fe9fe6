//! Picking the one record a lookup by unique id prefix found (sessions and keys, both
//! backends).
//!
//! Promises: one record found is the answer; none is the caller's "not found" error; several
//! are [`StoreError::Ambiguous`] listing at most [`MOST_CANDIDATES`] of them in the order
//! found, then "…" when there were more. A prefix query asks for `MOST_CANDIDATES + 1` rows,
//! so it can tell. An empty prefix finds nothing ([`id_range`]).

use crate::StoreError;

/// How many candidates an ambiguous prefix lists (then "…").
pub(crate) const MOST_CANDIDATES: usize = 20;

/// The one record of `found`, else `none()` when there is none, else the candidates (each
/// as `label` names it) of the ambiguous `prefix`.
pub(crate) fn the_one<T>(
    mut found: Vec<T>,
    prefix: &str,
    none: impl FnOnce() -> StoreError,
    label: impl Fn(&T) -> String,
) -> Result<T, StoreError> {
    match found.len() {
        0 => Err(none()),
        1 => Ok(found.remove(0)),
        n => {
            let mut candidates: Vec<String> =
                found.iter().take(MOST_CANDIDATES).map(label).collect();
            if n > MOST_CANDIDATES {
                candidates.push("…".to_owned());
            }
            Err(StoreError::Ambiguous {
                prefix: prefix.to_owned(),
                candidates,
            })
        }
    }
}

/// The range of ids that start with `prefix` (lowercased), as (lowest, past the highest), so
/// that a primary key's index finds them: ids are lowercase ASCII and compare bytewise
/// (SQLite's BINARY, PostgreSQL's `COLLATE "C"`), so every id starting with the prefix sorts
/// between it and it followed by the highest character. `None` for an empty prefix, which names no one record.
pub(crate) fn id_range(prefix: &str) -> Option<(String, String)> {
    if prefix.is_empty() {
        return None;
    }
    let lower = prefix.to_lowercase();
    let upper = format!("{lower}\u{10FFFF}");
    Some((lower, upper))
}
