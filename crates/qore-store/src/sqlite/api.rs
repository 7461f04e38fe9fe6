//! The [`Store`] interface of [`SqliteStore`]: each method hands its (owned) arguments to the
//! blocking pool, where the module holding its SQL runs on the connection (see the parent
//! module's promises).

use std::path::Path;

use async_trait::async_trait;
use qore_core::History;

use crate::interface::{LimitCheck, LimitVerdict, ResponseCopy, SessionCopy, Store};
use crate::{
    KeyRecord, KeysVersion, NewKey, NewResponse, NewSession, ResponseRecord, SessionImport,
    SessionInfo, StoreError, StoredTurn, TurnId, TurnRecord, UndoableTurn, UsageRow,
};

use super::SqliteStore;

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

    async fn key_page(&self, query: &crate::KeyQuery) -> Result<Vec<KeyRecord>, StoreError> {
        let query = query.clone();
        self.run(move |db| db.key_page(&query)).await
    }

    async fn change_key(
        &self,
        name_or_id: &str,
        change: &crate::KeyChange,
    ) -> Result<KeyRecord, StoreError> {
        let (name_or_id, change) = (name_or_id.to_owned(), change.clone());
        self.run(move |db| db.change_key(&name_or_id, &change))
            .await
    }

    async fn session_page(
        &self,
        query: &crate::SessionQuery,
    ) -> Result<Vec<SessionInfo>, StoreError> {
        let query = query.clone();
        self.run(move |db| db.session_page(&query)).await
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

    async fn usage_sums(&self, query: &crate::UsageQuery) -> Result<Vec<UsageRow>, StoreError> {
        let query = query.clone();
        self.run(move |db| {
            db.usage_sums(
                query.by,
                query.by_agent,
                query.key_id.as_deref(),
                query.since.as_deref(),
                query.until.as_deref(),
            )
        })
        .await
    }

    async fn record_requests(&self, rows: &[crate::RequestLogRow]) -> Result<(), StoreError> {
        let rows = rows.to_vec();
        self.run(move |db| db.record_requests(&rows)).await
    }

    async fn request_log(
        &self,
        query: &crate::LogQuery,
    ) -> Result<Vec<crate::RequestLogRow>, StoreError> {
        let query = query.clone();
        self.run(move |db| db.request_log(&query)).await
    }

    async fn request_entry(&self, id: &str) -> Result<Option<crate::RequestLogRow>, StoreError> {
        let id = id.to_owned();
        self.run(move |db| db.request_entry(&id)).await
    }

    async fn prune_request_log(&self, before_ms: i64) -> Result<u64, StoreError> {
        self.run(move |db| db.prune_request_log(before_ms)).await
    }

    async fn admit(&self, check: &LimitCheck) -> Result<LimitVerdict, StoreError> {
        let check = check.clone();
        self.run(move |db| db.admit(&check)).await
    }

    async fn put_response(&self, new: &NewResponse<'_>) -> Result<ResponseRecord, StoreError> {
        // Owned, to cross onto the blocking pool; the write sets the time.
        let owned = new.record(0);
        self.run(move |db| db.put_response(&owned.as_new())).await
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
