//! Choosing a backend from a location, and where the store lives by default.
//!
//! Promises: `postgres://…` and `postgresql://…` open [`PgStore`](crate::PgStore); anything
//! else is a SQLite file path. [`open_configured`] reads [`STORE_URL_VAR`] first, else the
//! default SQLite file ([`DB_FILE`] in [`data_dir`]: `QORE_DATA_DIR` when set and not
//! empty, else `qore` in the platform's data dir).

use std::path::PathBuf;
use std::sync::Arc;

use crate::{PgStore, SqliteStore, Store, StoreError};

/// The environment variable naming the store (a `postgres://` URL or a SQLite file path).
pub const STORE_URL_VAR: &str = "QORE_STORE_URL";

/// The file name of the database inside the data dir.
pub const DB_FILE: &str = "qore.db";

/// `QORE_DATA_DIR`, else `qore` in the platform's data dir (`$XDG_DATA_HOME/qore` on Linux).
pub fn data_dir() -> Result<PathBuf, StoreError> {
    if let Some(dir) = std::env::var_os("QORE_DATA_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    use etcetera::BaseStrategy as _;
    let dirs =
        etcetera::choose_base_strategy().map_err(|e| StoreError::NoDataDir(e.to_string()))?;
    Ok(dirs.data_dir().join("qore"))
}

/// Whether `location` names a PostgreSQL database.
pub fn is_postgres(location: &str) -> bool {
    let lower = location.trim_start().to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// Open the store at `location` (see the module doc), migrating it as needed.
pub async fn open(location: &str) -> Result<Arc<dyn Store>, StoreError> {
    if is_postgres(location) {
        return Ok(Arc::new(PgStore::connect(location.trim()).await?));
    }
    open_sqlite(PathBuf::from(location)).await
}

async fn open_sqlite(path: PathBuf) -> Result<Arc<dyn Store>, StoreError> {
    let opened = tokio::task::spawn_blocking(move || SqliteStore::open(path)).await;
    let store = opened.map_err(|e| StoreError::Task(e.to_string()))??;
    Ok(Arc::new(store))
}

/// Open `QORE_STORE_URL` when it is set and not empty, else the default SQLite file.
pub async fn open_configured() -> Result<Arc<dyn Store>, StoreError> {
    match std::env::var(STORE_URL_VAR) {
        Ok(location) if !location.trim().is_empty() => open(location.trim()).await,
        _ => open_sqlite(data_dir()?.join(DB_FILE)).await,
    }
}
