//! The conformance suite (`conformance/`) against PostgreSQL: one real server per test binary
//! (`qore_testkit::postgres::TestPostgres`, started on first use and stopping by itself when
//! this process exits), a fresh database on it per case; copies between PostgreSQL databases
//! and between PostgreSQL and SQLite, both ways.

mod common;
#[macro_use]
mod conformance;

use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use qore_testkit::postgres::TestPostgres;

static SERVER: OnceLock<Result<TestPostgres, String>> = OnceLock::new();

/// Databases are created one at a time (`CREATE DATABASE` copies `template1`, which a
/// concurrent creation may hold), and a failed creation is tried again, twice at most.
static CREATING: Mutex<()> = Mutex::new(());

/// Start the server, and a watcher that removes its directory (half a gigabyte after a run)
/// once this process has exited and the server has stopped: a static is never dropped, so
/// `TestPostgres`'s own cleanup never runs here.
fn start() -> Result<TestPostgres, String> {
    let server = TestPostgres::start()?;
    let dir = server.dir().display().to_string();
    let watch = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; \
         for _ in $(seq 120); do [ -e '{dir}/data/postmaster.pid' ] || break; sleep 1; done; \
         rm -rf '{dir}'",
        pid = std::process::id()
    );
    (Command::new("sh").args(["-c", &watch]))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot watch the server's directory: {e}"))?;
    Ok(server)
}

/// A new empty database on the binary's one server.
fn fresh() -> conformance::Place {
    let server = match SERVER.get_or_init(start) {
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
