//! [`SqliteStore`]: the [`Store`](crate::Store) on one SQLite file, the embedded default.
//!
//! Promises:
//! - one connection (WAL, foreign keys, a busy timeout, IMMEDIATE transactions: see
//!   `migrate`) behind a mutex; each call runs on tokio's blocking pool, so a slow disk never
//!   stalls the async workers;
//! - several processes may open the same file: SQLite's write lock serialises them, so turns,
//!   usage and limit counters stay exact across processes on one machine;
//! - every method behaves as on PostgreSQL (the same errors, order and checks, from the
//!   crate's shared records and rules); the SQL is in `sessions`, `read`, `keys`, `usage`,
//!   `limits`, `responses`, `copy`, and [`Store`](crate::Store) hands over to it in `api`.

mod api;
mod copy;
mod keys;
mod limits;
mod migrate;
mod read;
mod request_log;
mod responses;
mod sessions;
mod usage;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use self::migrate::open_connection;
pub use self::migrate::{schema_version, BUSY_TIMEOUT, SCHEMA_VERSION};
use crate::{data_dir, StoreError, DB_FILE};

/// The store on one SQLite file. Cheap to clone: clones share the connection.
#[derive(Clone)]
pub struct SqliteStore {
    db: Arc<Mutex<Db>>,
    path: PathBuf,
}

impl SqliteStore {
    /// Open (creating and migrating as needed) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref().to_owned();
        let db = Db::open(&path)?;
        Ok(SqliteStore {
            db: Arc::new(Mutex::new(db)),
            path,
        })
    }

    /// Open `qore.db` in [`data_dir`](crate::data_dir).
    pub fn open_default() -> Result<SqliteStore, StoreError> {
        SqliteStore::open(data_dir()?.join(DB_FILE))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Run `work` on the connection, on the blocking pool.
    async fn run<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Db) -> Result<T, StoreError> + Send + 'static,
    {
        let db = Arc::clone(&self.db);
        let joined = tokio::task::spawn_blocking(move || {
            let mut db = db.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            work(&mut db)
        })
        .await;
        joined.map_err(|e| StoreError::Task(e.to_string()))?
    }
}

/// An open session database: the synchronous handle every SQL module of this backend adds
/// its methods to.
pub(crate) struct Db {
    conn: Connection,
}

impl Db {
    /// Open (creating and migrating as needed) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Db, StoreError> {
        let conn = open_connection(path.as_ref())?;
        Ok(Db { conn })
    }

    /// Whether the database answers.
    pub fn ping(&self) -> Result<(), StoreError> {
        self.conn.query_row("SELECT 1", [], |_| Ok(()))?;
        Ok(())
    }
}
