//! The [`Store`] interface of [`PgStore`]: each method hands over to the module that holds
//! its SQL (see the parent module's promises).

use std::path::Path;

use async_trait::async_trait;
use qore_core::History;

use crate::interface::{LimitCheck, LimitVerdict, ResponseCopy, SessionCopy, Store};
use crate::{
    KeyRecord, KeysVersion, NewKey, NewResponse, NewSession, ResponseRecord, SessionImport,
    SessionInfo, StoreCounters, StoreError, StoredTurn, TurnId, TurnRecord, UndoableTurn, UsageRow,
};

use super::{copy, keys, limits, read, responses, sessions, usage, PgStore};

#[async_trait]
impl Store for PgStore {
    fn location(&self) -> String {
        self.shared.teller.location.clone()
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let conn = self.watch_conn("ping").await?;
        conn.row("ping", "SELECT 1", &[]).await.map(drop)
    }

    fn counters(&self) -> StoreCounters {
        self.shared.counters.read()
    }

    async fn create_session(&self, new: &NewSession) -> Result<String, StoreError> {
        sessions::create_session(self, new).await
    }

    async fn append_turn(&self, session: &str, turn: &TurnRecord) -> Result<TurnId, StoreError> {
        sessions::append_turn(self, session, turn).await
    }

    async fn import_session(&self, import: &SessionImport) -> Result<String, StoreError> {
        sessions::import_session(self, import).await
    }

    async fn rename(&self, session: &str, name: &str) -> Result<(), StoreError> {
        sessions::rename(self, session, name).await
    }

    async fn remove(&self, session: &str) -> Result<(), StoreError> {
        sessions::remove(self, session).await
    }

    async fn mark_undone(&self, turn: TurnId) -> Result<(), StoreError> {
        sessions::mark_undone(self, turn).await
    }

    async fn session(&self, key: &str) -> Result<SessionInfo, StoreError> {
        read::session(self, key).await
    }

    async fn list_sessions(&self, project: Option<&Path>) -> Result<Vec<SessionInfo>, StoreError> {
        read::list_sessions(self, project).await
    }

    async fn session_ids(&self) -> Result<Vec<String>, StoreError> {
        read::session_ids(self).await
    }

    async fn latest_for_project(&self, project: &Path) -> Result<Option<SessionInfo>, StoreError> {
        read::latest_for_project(self, project).await
    }

    async fn history(&self, session: &str) -> Result<History, StoreError> {
        read::history(self, session).await
    }

    async fn turn_ids(&self, session: &str) -> Result<Vec<TurnId>, StoreError> {
        read::turn_ids(self, session).await
    }

    async fn turns(&self, session: &str) -> Result<Vec<StoredTurn>, StoreError> {
        read::turns(self, session).await
    }

    async fn last_undoable_turn(&self, session: &str) -> Result<Option<UndoableTurn>, StoreError> {
        read::last_undoable_turn(self, session).await
    }

    async fn create_key(&self, new: &NewKey) -> Result<KeyRecord, StoreError> {
        keys::create_key(self, new).await
    }

    async fn keys(&self) -> Result<Vec<KeyRecord>, StoreError> {
        keys::keys(self).await
    }

    async fn key_by_hash(&self, hash: &str) -> Result<Option<KeyRecord>, StoreError> {
        keys::key_by_hash(self, hash).await
    }

    async fn key(&self, name_or_id: &str) -> Result<KeyRecord, StoreError> {
        keys::find_key(self, name_or_id).await
    }

    async fn revoke_key(&self, name_or_id: &str) -> Result<KeyRecord, StoreError> {
        keys::revoke_key(self, name_or_id).await
    }

    async fn keys_version(&self) -> Result<KeysVersion, StoreError> {
        keys::keys_version(self).await
    }

    async fn record_usage(&self, rows: &[UsageRow]) -> Result<(), StoreError> {
        usage::record_usage(self, rows).await
    }

    async fn usage(
        &self,
        key_id: Option<&str>,
        since: Option<&str>,
    ) -> Result<Vec<UsageRow>, StoreError> {
        usage::usage(self, key_id, since).await
    }

    async fn tokens_used(&self, key_id: &str) -> Result<u64, StoreError> {
        usage::tokens_used(self, key_id).await
    }

    async fn admit(&self, check: &LimitCheck) -> Result<LimitVerdict, StoreError> {
        limits::admit(self, check).await
    }

    async fn put_response(&self, new: &NewResponse<'_>) -> Result<ResponseRecord, StoreError> {
        responses::put_response(self, new).await
    }

    async fn response(&self, id: &str) -> Result<Option<ResponseRecord>, StoreError> {
        responses::response(self, id).await
    }

    async fn delete_response(&self, id: &str) -> Result<bool, StoreError> {
        responses::delete_response(self, id).await
    }

    async fn responses(&self) -> Result<Vec<ResponseCopy>, StoreError> {
        copy::responses(self).await
    }

    async fn copy_session(&self, copy: &SessionCopy) -> Result<bool, StoreError> {
        copy::copy_session(self, copy).await
    }

    async fn copy_key(&self, key: &KeyRecord) -> Result<bool, StoreError> {
        copy::copy_key(self, key).await
    }

    async fn copy_usage(&self, row: &UsageRow) -> Result<bool, StoreError> {
        copy::copy_usage(self, row).await
    }

    async fn copy_response(&self, copy: &ResponseCopy) -> Result<bool, StoreError> {
        copy::copy_response(self, copy).await
    }
}
