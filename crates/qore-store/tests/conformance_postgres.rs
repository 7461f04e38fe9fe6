//! The conformance suite (`conformance/`) against PostgreSQL: one real server per test binary
//! (`qore_testkit::postgres::TestPostgres`, started on first use and stopping by itself when
//! this process exits), a fresh database on it per case; copies between PostgreSQL databases
//! and between PostgreSQL and SQLite, both ways.

mod common;
#[macro_use]
mod conformance;

use std::sync::{Mutex, OnceLock};

use qore_testkit::postgres::TestPostgres;

static SERVER: OnceLock<Result<TestPostgres, String>> = OnceLock::new();

/// Databases are created one at a time (`CREATE DATABASE` copies `template1`, which a
/// concurrent creation may hold), and a failed creation is tried again, twice at most.
static CREATING: Mutex<()> = Mutex::new(());

/// A new empty database on the binary's one server.
fn fresh() -> conformance::Place {
    let server = match SERVER.get_or_init(TestPostgres::start) {
        Ok(server) => server,
        Err(why) => panic!("no PostgreSQL server for the tests: {why}"),
    };
    let _one_at_a_time = CREATING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut failures = Vec::new();
    for _ in 0..3 {
        match server.fresh_database() {
            Ok(url) => return conformance::Place::at(url),
            Err(why) => failures.push(why),
        }
    }
    panic!("cannot create a database: {failures:#?}")
}

/// A new SQLite file, for copies to and from PostgreSQL.
fn sqlite() -> conformance::Place {
    conformance::sqlite_place()
}

conformance_suite!(
    fresh = crate::fresh,
    pairs = [
        postgres_to_postgres => (crate::fresh, crate::fresh),
        sqlite_to_postgres => (crate::sqlite, crate::fresh),
        postgres_to_sqlite => (crate::fresh, crate::sqlite),
    ]
);
