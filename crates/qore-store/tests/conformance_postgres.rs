//! The conformance suite (`conformance/`) against PostgreSQL: one real server per test
//! binary (`qore_testkit::postgres::TestPostgres`, started on first use, stopping and removing
//! its directory by itself when this process exits), a fresh database on it per case; copies
//! between PostgreSQL databases and between PostgreSQL and SQLite, both ways.

mod common;
#[macro_use]
mod conformance;

use std::sync::OnceLock;

use qore_testkit::postgres::TestPostgres;

static SERVER: OnceLock<Result<TestPostgres, String>> = OnceLock::new();

/// A new empty database on the binary's one server.
fn fresh() -> conformance::Place {
    let server = match SERVER.get_or_init(TestPostgres::start) {
        Ok(server) => server,
        Err(why) => panic!("no PostgreSQL server for the tests: {why}"),
    };
    match server.fresh_database() {
        Ok(url) => conformance::Place::at(url),
        Err(why) => panic!("cannot create a database: {why}"),
    }
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
