//! The store's one error type.
//!
//! Promises: every failure of the database, the disk or the stored data comes back as a
//! [`StoreError`] whose message names what was being done; nothing here panics.

use std::path::PathBuf;

/// What went wrong in the session store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the data directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no data directory: set QORE_DATA_DIR (the platform's data dir is unknown: {0})")]
    NoDataDir(String),
    #[error("cannot open the session store {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("the session store {path} stays in journal mode '{mode}'; WAL is required")]
    NotWal { path: PathBuf, mode: String },
    #[error("cannot migrate the session store {path}: {source}")]
    Migration {
        path: PathBuf,
        source: rusqlite_migration::Error,
    },
    #[error("session store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("no such session: '{0}'")]
    NotFound(String),
    #[error("ambiguous prefix '{prefix}': matches {}", candidates.join(", "))]
    Ambiguous {
        prefix: String,
        candidates: Vec<String>,
    },
    #[error("a session named '{0}' already exists")]
    NameTaken(String),
    #[error("a session name must not be empty")]
    EmptyName,
    #[error("no turn with id {0}")]
    NoSuchTurn(i64),
    #[error("the path {0} is not valid UTF-8 and cannot be stored")]
    NonUtf8Path(PathBuf),
    #[error("refused a malformed turn: {0}")]
    MalformedTurn(String),
    #[error("cannot encode a turn as JSON: {0}")]
    Encode(serde_json::Error),
    #[error("an API key named '{0}' already exists")]
    KeyNameTaken(String),
    #[error("no such API key: '{0}'")]
    NoSuchKey(String),
    #[error("refused an API key: {0}")]
    InvalidKey(String),
    #[error("'{0}' is not a day: expected YYYY-MM-DD")]
    BadDay(String),
    #[error("a stored response with id '{0}' already exists")]
    ResponseTaken(String),
    #[error("the store cannot be reached: {0}")]
    Unavailable(String),
    #[error("PostgreSQL store: cannot {doing}: {}", one_line(source))]
    Postgres {
        doing: String,
        source: tokio_postgres::Error,
    },
    #[error("PostgreSQL store: unexpected answer: {0}")]
    PgUnexpected(String),
    #[error("bad PostgreSQL store location: {0}")]
    PgConfig(String),
    #[error("cannot migrate the PostgreSQL store: {}", one_line(source))]
    PgMigration { source: refinery::Error },
    #[error("a store task failed: {0}")]
    Task(String),
    #[error("stored {what} is not valid: {source}")]
    Corrupt {
        what: String,
        source: serde_json::Error,
    },
}

/// An error with its sources, on one line: `what: why: deeper why`.
pub(crate) fn one_line(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl StoreError {
    /// Whether the database could not be reached (refused, timed out, no free connection;
    /// on SQLite, a file another process kept locked past the busy timeout): worth retrying
    /// later, unlike every other error.
    pub fn is_unavailable(&self) -> bool {
        use rusqlite::ErrorCode::{DatabaseBusy, DatabaseLocked};
        match self {
            StoreError::Unavailable(_) => true,
            StoreError::Sqlite(e) => {
                matches!(e.sqlite_error_code(), Some(DatabaseBusy | DatabaseLocked))
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite(code: i32) -> StoreError {
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(code),
            None,
        ))
    }

    #[test]
    fn only_an_unreachable_or_locked_store_is_unavailable() {
        let cases = [
            (StoreError::Unavailable("down".into()), true),
            (sqlite(rusqlite::ffi::SQLITE_BUSY), true),
            (sqlite(rusqlite::ffi::SQLITE_LOCKED), true),
            (sqlite(rusqlite::ffi::SQLITE_READONLY), false),
            (sqlite(rusqlite::ffi::SQLITE_CONSTRAINT), false),
            (StoreError::NotFound("s".into()), false),
        ];
        for (error, unavailable) in cases {
            assert_eq!(error.is_unavailable(), unavailable, "{error}");
        }
    }
}
