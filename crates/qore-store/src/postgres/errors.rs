//! What a PostgreSQL failure means for the caller.
//!
//! Promises: a database that cannot be reached (connection refused or reset, connect timeout,
//! any I/O error, a closed connection, no free connection in the pool, SQLSTATE class 08, or
//! the server shutting down or starting: 57P01, 57P02, 57P03; a call with no answer within
//! `call_timeout`) is
//! [`StoreError::Unavailable`] with one line naming the store (without its password), what
//! was being done and why; every other error is [`StoreError::Postgres`] naming what was
//! being done. Constraint violations are told apart by the constraint's name
//! ([`violated`]), which the migration gives every constraint explicitly.

use std::time::Duration;

use deadpool_postgres::{PoolError, TimeoutType};
use tokio_postgres::error::SqlState;

use crate::error::one_line;
use crate::StoreError;

/// Whether `error` says the database cannot be reached now (see the module doc).
pub(super) fn is_unreachable(error: &tokio_postgres::Error) -> bool {
    if error.is_closed() {
        return true;
    }
    if let Some(code) = error.code() {
        return code.code().starts_with("08")
            || [
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
                SqlState::CANNOT_CONNECT_NOW,
            ]
            .contains(code);
    }
    let Some(io) = io_cause(error) else {
        // A connect timeout without an I/O error beneath it.
        return error.to_string() == "timeout waiting for server";
    };
    // A certificate the TLS handshake refused is no outage: retrying will not help.
    io.kind() != std::io::ErrorKind::InvalidData
}

fn io_cause(error: &tokio_postgres::Error) -> Option<&std::io::Error> {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        source = cause.source();
    }
    None
}

/// The constraint a unique (23505), foreign key (23503) or check (23514) violation names.
pub(super) fn violated(error: &tokio_postgres::Error) -> Option<&str> {
    let db = error.as_db_error()?;
    let code = db.code();
    if [
        SqlState::UNIQUE_VIOLATION,
        SqlState::FOREIGN_KEY_VIOLATION,
        SqlState::CHECK_VIOLATION,
    ]
    .contains(code)
    {
        db.constraint()
    } else {
        None
    }
}

/// How errors of one store are told (its location, its pool's limits).
#[derive(Debug, Clone)]
pub(super) struct Teller {
    pub location: String,
    pub pool_max_size: usize,
    pub pool_timeout: Duration,
    pub call_timeout: Duration,
}

impl Teller {
    /// `error`, met while doing `doing`, as the caller sees it.
    pub(super) fn db(&self, doing: &str, error: tokio_postgres::Error) -> StoreError {
        if is_unreachable(&error) {
            StoreError::Unavailable(format!(
                "{}: cannot {doing}: {}",
                self.location,
                one_line(&error)
            ))
        } else {
            StoreError::Postgres {
                doing: doing.to_owned(),
                source: error,
            }
        }
    }

    /// A closure mapping a database error met while doing `doing`.
    pub(super) fn err<'a>(
        &'a self,
        doing: &'a str,
    ) -> impl Fn(tokio_postgres::Error) -> StoreError + 'a {
        move |error| self.db(doing, error)
    }

    /// Failing to get a connection from the pool.
    pub(super) fn pool(&self, doing: &str, error: PoolError) -> StoreError {
        let why = match error {
            PoolError::Backend(error) => return self.db(doing, error),
            PoolError::Timeout(TimeoutType::Wait) => format!(
                "no free connection within {:?} (all {} in use)",
                self.pool_timeout, self.pool_max_size
            ),
            PoolError::Timeout(TimeoutType::Create) => "connecting timed out".to_owned(),
            PoolError::Timeout(TimeoutType::Recycle) => {
                "checking a pooled connection timed out".to_owned()
            }
            other => one_line(&other),
        };
        StoreError::Unavailable(format!("{}: cannot {doing}: {why}", self.location))
    }

    /// A call that got no answer within `call_timeout` (a server that accepts and never
    /// answers, or holds a lock for longer).
    pub(super) fn no_answer(&self, doing: &str) -> StoreError {
        StoreError::Unavailable(format!(
            "{}: cannot {doing}: no answer from the database within {:?}",
            self.location, self.call_timeout
        ))
    }

    /// A migration's failure: [`StoreError::Unavailable`] when the database went away.
    pub(super) fn migration(&self, error: refinery::Error) -> StoreError {
        let mut source = std::error::Error::source(&error);
        while let Some(cause) = source {
            if let Some(pg) = cause.downcast_ref::<tokio_postgres::Error>() {
                if is_unreachable(pg) {
                    return StoreError::Unavailable(format!(
                        "{}: cannot migrate: {}",
                        self.location,
                        one_line(&error)
                    ));
                }
            }
            source = cause.source();
        }
        StoreError::PgMigration { source: error }
    }
}
