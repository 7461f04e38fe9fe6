//! [`SqliteStore`]: the [`Store`] on one SQLite file, the embedded default.
//!
//! Promises: one connection (WAL, foreign keys, a busy timeout, IMMEDIATE transactions: see
//! `schema`) behind a mutex; each call runs on tokio's blocking pool, so a slow disk never
//! stalls the async workers. Several processes may open the same file: SQLite's write lock
//! serialises them, so turns, usage and limit counters stay exact across processes on one
//! machine. The SQL itself is in the modules beside this one (`store`, `read`, `keys`,
//! `usage`, `responses`, `file_changes`, `limits`, `copy`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use qore_core::History;

use crate::interface::{LimitCheck, LimitVerdict, ResponseCopy, SessionCopy, Store};
use crate::store::Db;
use crate::{
    data_dir, KeyRecord, KeysVersion, NewKey, NewResponse, NewSession, ResponseRecord,
    SessionImport, SessionInfo, StoreError, StoredTurn, TurnId, TurnRecord, UndoableTurn, UsageRow,
    DB_FILE,
};

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

#[async_trait]
impl Store for SqliteStore {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.run(|db| db.ping()).await
    }

    async fn create_session(&self, new: &NewSession) -> Result<String, StoreError> {
        let new = new.clone();
        self.run(move |db| db.create_session(&new)).await
    }

    async fn append_turn(&self, session: &str, turn: &TurnRecord) -> Result<TurnId, StoreError> {
        let (session, turn) = (session.to_owned(), turn.clone());
        self.run(move |db| db.append_turn(&session, &turn)).await
    }

    async fn import_session(&self, import: &SessionImport) -> Result<String, StoreError> {
        let import = import.clone();
        self.run(move |db| db.import_session(&import)).await
    }

    async fn rename(&self, session: &str, name: &str) -> Result<(), StoreError> {
        let (session, name) = (session.to_owned(), name.to_owned());
        self.run(move |db| db.rename(&session, &name)).await
    }

    async fn remove(&self, session: &str) -> Result<(), StoreError> {
        let session = session.to_owned();
        self.run(move |db| db.remove(&session)).await
    }

    async fn mark_undone(&self, turn: TurnId) -> Result<(), StoreError> {
        self.run(move |db| db.mark_undone(turn)).await
    }

    async fn session(&self, key: &str) -> Result<SessionInfo, StoreError> {
        let key = key.to_owned();
        self.run(move |db| db.session(&key)).await
    }

    async fn list_sessions(&self, project: Option<&Path>) -> Result<Vec<SessionInfo>, StoreError> {
        let project = project.map(Path::to_owned);
        self.run(move |db| db.list_sessions(project.as_deref()))
            .await
    }

    async fn session_ids(&self) -> Result<Vec<String>, StoreError> {
        self.run(|db| db.session_ids()).await
    }

    async fn latest_for_project(&self, project: &Path) -> Result<Option<SessionInfo>, StoreError> {
        let project = project.to_owned();
        self.run(move |db| db.latest_for_project(&project)).await
    }

    async fn history(&self, session: &str) -> Result<History, StoreError> {
        let session = session.to_owned();
        self.run(move |db| db.history(&session)).await
    }

    async fn turn_ids(&self, session: &str) -> Result<Vec<TurnId>, StoreError> {
        let session = session.to_owned();
        self.run(move |db| db.turn_ids(&session)).await
    }

    async fn turns(&self, session: &str) -> Result<Vec<StoredTurn>, StoreError> {
        let session = session.to_owned();
        self.run(move |db| db.turns(&session)).await
    }

    async fn last_undoable_turn(&self, session: &str) -> Result<Option<UndoableTurn>, StoreError> {
        let session = session.to_owned();
        self.run(move |db| db.last_undoable_turn(&session)).await
    }

    async fn create_key(&self, new: &NewKey) -> Result<KeyRecord, StoreError> {
        let new = new.clone();
        self.run(move |db| db.create_key(&new)).await
    }

    async fn keys(&self) -> Result<Vec<KeyRecord>, StoreError> {
        self.run(|db| db.keys()).await
    }

    async fn key_by_hash(&self, hash: &str) -> Result<Option<KeyRecord>, StoreError> {
        let hash = hash.to_owned();
        self.run(move |db| db.key_by_hash(&hash)).await
    }

    async fn key(&self, name_or_id: &str) -> Result<KeyRecord, StoreError> {
        let name_or_id = name_or_id.to_owned();
        self.run(move |db| db.key(&name_or_id)).await
    }

    async fn revoke_key(&self, name_or_id: &str) -> Result<KeyRecord, StoreError> {
        let name_or_id = name_or_id.to_owned();
        self.run(move |db| db.revoke_key(&name_or_id)).await
    }

    async fn keys_version(&self) -> Result<KeysVersion, StoreError> {
        self.run(|db| db.keys_version()).await
    }

    async fn record_usage(&self, rows: &[UsageRow]) -> Result<(), StoreError> {
        let rows = rows.to_vec();
        self.run(move |db| db.record_usage(&rows)).await
    }

    async fn usage(
        &self,
        key_id: Option<&str>,
        since: Option<&str>,
    ) -> Result<Vec<UsageRow>, StoreError> {
        let (key_id, since) = (key_id.map(str::to_owned), since.map(str::to_owned));
        self.run(move |db| db.usage(key_id.as_deref(), since.as_deref()))
            .await
    }

    async fn tokens_used(&self, key_id: &str) -> Result<u64, StoreError> {
        let key_id = key_id.to_owned();
        self.run(move |db| db.tokens_used(&key_id)).await
    }

    async fn admit(&self, check: &LimitCheck) -> Result<LimitVerdict, StoreError> {
        let check = check.clone();
        self.run(move |db| db.admit(&check)).await
    }

    async fn put_response(&self, new: &NewResponse<'_>) -> Result<ResponseRecord, StoreError> {
        let owned = OwnedResponse::of(new);
        self.run(move |db| db.put_response(&owned.borrowed())).await
    }

    async fn response(&self, id: &str) -> Result<Option<ResponseRecord>, StoreError> {
        let id = id.to_owned();
        self.run(move |db| db.response(&id)).await
    }

    async fn delete_response(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.run(move |db| db.delete_response(&id)).await
    }

    async fn responses(&self) -> Result<Vec<ResponseCopy>, StoreError> {
        self.run(|db| db.responses()).await
    }

    async fn copy_session(&self, copy: &SessionCopy) -> Result<bool, StoreError> {
        let copy = copy.clone();
        self.run(move |db| db.copy_session(&copy)).await
    }

    async fn copy_key(&self, key: &KeyRecord) -> Result<bool, StoreError> {
        let key = key.clone();
        self.run(move |db| db.copy_key(&key)).await
    }

    async fn copy_usage(&self, row: &UsageRow) -> Result<bool, StoreError> {
        let row = row.clone();
        self.run(move |db| db.copy_usage(&row)).await
    }

    async fn copy_response(&self, copy: &ResponseCopy) -> Result<bool, StoreError> {
        let copy = copy.clone();
        self.run(move |db| db.copy_response(&copy)).await
    }
}

/// A [`NewResponse`] that owns its text, to cross onto the blocking pool.
struct OwnedResponse {
    id: String,
    key_id: String,
    session_id: Option<String>,
    turn_id: Option<TurnId>,
    pending: Option<String>,
    object: String,
}

impl OwnedResponse {
    fn of(new: &NewResponse<'_>) -> OwnedResponse {
        OwnedResponse {
            id: new.id.to_owned(),
            key_id: new.key_id.to_owned(),
            session_id: new.session_id.map(str::to_owned),
            turn_id: new.turn_id,
            pending: new.pending.map(str::to_owned),
            object: new.object.to_owned(),
        }
    }

    fn borrowed(&self) -> NewResponse<'_> {
        NewResponse {
            id: &self.id,
            key_id: &self.key_id,
            session_id: self.session_id.as_deref(),
            turn_id: self.turn_id,
            pending: self.pending.as_deref(),
            object: &self.object,
        }
    }
}
