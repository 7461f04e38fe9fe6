//! The SQLite schema and how a connection is set up: WAL, foreign keys, a busy timeout, and
//! the versioned schema migrated on open with `rusqlite_migration` (`PRAGMA user_version`).
//!
//! Promises: every connection runs in WAL mode with `synchronous = NORMAL` and foreign keys
//! on, waits up to
//! [`BUSY_TIMEOUT`] for another process's write lock instead of failing, and starts its
//! transactions IMMEDIATE (so a writer queues for the lock rather than failing on upgrade).
//! Opening migrates the schema to the latest version in one transaction; when two processes
//! migrate the same new file at once, the one that loses sees the winner's schema and goes on.
//!
//! Durability: in WAL mode, `NORMAL` syncs at checkpoints, not at every commit. A killed
//! process (SIGKILL, a panic, Ctrl-C) loses nothing committed: the commit is in the WAL file
//! the OS already holds. A power loss or kernel crash may lose the last commits, never the
//! database's consistency. That is the trade SQLite documents for WAL; the session bench
//! (`qore-session`'s `sessions`) showed the per-commit fsync of `FULL` as the bottleneck of
//! many sessions writing at once.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, TransactionBehavior};
use rusqlite_migration::{Migrations, M};

use crate::StoreError;

/// How long a write waits for another process's lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The schema version a SQLite file is migrated to when it is opened.
pub const SCHEMA_VERSION: usize = 6;

/// Migration 1: sessions, their turns, and each turn's messages (see the crate doc).
const V1: &str = "
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    name        TEXT UNIQUE,
    title       TEXT,
    project_dir TEXT,
    agent       TEXT,
    model       TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    parent_id   TEXT REFERENCES sessions(id) ON DELETE SET NULL
);
CREATE INDEX sessions_updated ON sessions(updated_at);
CREATE INDEX sessions_project ON sessions(project_dir, updated_at);
CREATE TABLE turns (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER NOT NULL,
    model       TEXT,
    agent       TEXT,
    usage       TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('finished', 'failed', 'cancelled')),
    undone      INTEGER NOT NULL DEFAULT 0 CHECK (undone IN (0, 1)),
    UNIQUE (session_id, seq)
);
CREATE TABLE messages (
    id      INTEGER PRIMARY KEY,
    turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    role    TEXT NOT NULL,
    content TEXT NOT NULL,
    UNIQUE (turn_id, seq)
);
";

/// Migration 2: the files each turn changed, with their prior content, for undo.
const V2: &str = "
CREATE TABLE file_changes (
    id         INTEGER PRIMARY KEY,
    turn_id    INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    path       TEXT NOT NULL,
    before     BLOB,
    after_hash TEXT,
    restorable INTEGER NOT NULL CHECK (restorable IN (0, 1)),
    CHECK (restorable = 1 OR before IS NULL),
    UNIQUE (turn_id, path)
);
";

/// Migration 3: `qore serve`'s API keys (hashed), its usage counters per day, key, model and
/// agent, and the Responses API's stored response ids (see the crate doc). Plain SQL (no
/// SQLite-only types), so another backend can create the same tables.
const V3: &str = "
CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    hash          TEXT NOT NULL UNIQUE,
    models        TEXT NOT NULL DEFAULT '[]',
    rpm           INTEGER,
    tpm           INTEGER,
    budget_tokens INTEGER,
    created_at    INTEGER NOT NULL,
    revoked_at    INTEGER
);
CREATE TABLE usage (
    day        TEXT NOT NULL,
    key_id     TEXT NOT NULL DEFAULT '',
    model      TEXT NOT NULL DEFAULT '',
    agent      TEXT NOT NULL DEFAULT '',
    requests   INTEGER NOT NULL DEFAULT 0,
    errors     INTEGER NOT NULL DEFAULT 0,
    tokens_in  INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, key_id, model, agent)
);
CREATE INDEX usage_key ON usage(key_id, day);
CREATE TABLE responses (
    id         TEXT PRIMARY KEY,
    key_id     TEXT NOT NULL DEFAULT '',
    session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    turn_id    INTEGER REFERENCES turns(id) ON DELETE CASCADE,
    pending    TEXT,
    object     TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL
);
CREATE INDEX responses_session ON responses(session_id);
CREATE INDEX responses_turn ON responses(turn_id);
";

/// Migration 4: the rate-limit window, one row per admitted request or recorded tokens of a
/// key, kept for 60 seconds (see the `limits` module).
const V4: &str = "
CREATE TABLE rate_events (
    key_id   TEXT NOT NULL,
    at       INTEGER NOT NULL,
    requests INTEGER NOT NULL DEFAULT 0,
    tokens   INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX rate_events_key ON rate_events(key_id, at);
";

/// Migration 5: `qore serve`'s request log, one row per request (see the crate's
/// `request_log` module), newest first by id, pruned by start time.
const V5: &str = "
CREATE TABLE request_log (
    id            TEXT PRIMARY KEY,
    at_ms         INTEGER NOT NULL,
    key_id        TEXT NOT NULL DEFAULT '',
    dialect       TEXT NOT NULL DEFAULT '',
    model         TEXT NOT NULL DEFAULT '',
    agent         TEXT NOT NULL DEFAULT '',
    upstream      TEXT NOT NULL DEFAULT '',
    status        INTEGER NOT NULL,
    error_kind    TEXT NOT NULL DEFAULT '',
    tokens_in     INTEGER NOT NULL DEFAULT 0,
    tokens_out    INTEGER NOT NULL DEFAULT 0,
    cost_micros   INTEGER,
    ttfb_ms       INTEGER,
    duration_ms   INTEGER NOT NULL DEFAULT 0,
    session_id    TEXT NOT NULL DEFAULT '',
    response_id   TEXT NOT NULL DEFAULT '',
    request_body  TEXT,
    response_body TEXT
);
CREATE INDEX request_log_at ON request_log(at_ms);
CREATE INDEX request_log_key ON request_log(key_id, id);
";

/// Migration 6: each key counts the changes of its globs and limits (the admin API's
/// `PATCH`), so the keys' version changes with them and every process reloads its copy.
const V6: &str = "
ALTER TABLE api_keys ADD COLUMN changes INTEGER NOT NULL DEFAULT 0;
";

fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(V1),
        M::up(V2),
        M::up(V3),
        M::up(V4),
        M::up(V5),
        M::up(V6),
    ])
}

/// Open (creating the file and its directory) and migrate the database at `path`.
pub(super) fn open_connection(path: &Path) -> Result<Connection, StoreError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
            path: dir.to_owned(),
            source,
        })?;
    }
    let opened = |source| StoreError::Open {
        path: path.to_owned(),
        source,
    };
    let mut conn = Connection::open(path).map_err(opened)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(opened)?;
    conn.set_transaction_behavior(TransactionBehavior::Immediate);
    let mode = enable_wal(&conn).map_err(opened)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::NotWal {
            path: path.to_owned(),
            mode,
        });
    }
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(opened)?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(opened)?;
    migrate(&mut conn, path)?;
    Ok(conn)
}

/// Switch to WAL. Switching needs the file to itself and SQLite does not wait for that with the
/// busy handler, so while another process is creating the same new file, retry until
/// [`BUSY_TIMEOUT`].
fn enable_wal(conn: &Connection) -> rusqlite::Result<String> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)) {
            Err(e)
                if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            done => return done,
        }
    }
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let migrations = migrations();
    match migrations.to_latest(conn) {
        Ok(()) => Ok(()),
        // Another process migrated between our version check and our transaction.
        Err(_) if schema_version(conn) == Ok(SCHEMA_VERSION) => Ok(()),
        Err(source) => Err(StoreError::Migration {
            path: path.to_owned(),
            source,
        }),
    }
}

/// The schema version recorded in the file (`PRAGMA user_version`).
pub fn schema_version(conn: &Connection) -> Result<usize, rusqlite::Error> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    Ok(usize::try_from(version).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqlite::Db;

    #[test]
    fn a_connection_is_wal_normal_sync_with_foreign_keys() {
        let dir = tempfile::tempdir().unwrap();
        let conn = open_connection(&dir.path().join("q.db")).unwrap();
        let read = |pragma: &str| -> String {
            conn.query_row(&format!("PRAGMA {pragma}"), [], |r| {
                r.get::<_, rusqlite::types::Value>(0)
            })
            .map(|v| match v {
                rusqlite::types::Value::Integer(n) => n.to_string(),
                rusqlite::types::Value::Text(t) => t,
                other => format!("{other:?}"),
            })
            .unwrap()
        };
        // (pragma, expected): synchronous 1 is NORMAL.
        for (pragma, expected) in [
            ("journal_mode", "wal"),
            ("synchronous", "1"),
            ("foreign_keys", "1"),
        ] {
            assert_eq!(read(pragma), expected, "PRAGMA {pragma}");
        }
    }

    #[test]
    fn a_version_1_database_migrates_and_keeps_its_turns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        let old = Connection::open(&path).unwrap();
        old.execute_batch(V1).unwrap();
        old.execute_batch(
            r#"INSERT INTO sessions (id, created_at, updated_at) VALUES ('s1', 1, 1);
           INSERT INTO turns (session_id, seq, started_at, finished_at, usage, status)
             VALUES ('s1', 1, 1, 2, '{}', 'finished');
           INSERT INTO messages (turn_id, seq, role, content) VALUES
             (1, 1, 'user', '{"role":"user","blocks":[{"type":"text","text":"hi"}]}'),
             (1, 2, 'assistant', '{"role":"assistant","blocks":[{"type":"text","text":"yo"}]}');
           PRAGMA user_version = 1;"#,
        )
        .unwrap();
        drop(old);
        let store = Db::open(&path).unwrap();
        assert_eq!(schema_version(&store.conn).unwrap(), SCHEMA_VERSION);
        let last = store.last_undoable_turn("s1").unwrap().unwrap();
        assert_eq!((last.seq, last.file_changes.len()), (1, 0));
        assert_eq!(last.messages[1].text(), "yo");
        assert_eq!(store.history("s1").unwrap().len(), 2);
        let tables: i64 = (store.conn)
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'file_changes'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(tables, 1);
    }
}
