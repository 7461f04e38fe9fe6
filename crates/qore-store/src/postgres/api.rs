//! The [`Store`] interface of [`PgStore`]: each method hands over to the module that holds
//! its SQL, within the store's `call_timeout` (see the parent module's promises).

use std::path::Path;

use async_trait::async_trait;
use qore_core::History;

use crate::interface::{LimitCheck, LimitVerdict, ResponseCopy, SessionCopy, Store};
use crate::{
    KeyRecord, KeysVersion, NewKey, NewResponse, NewSession, ResponseRecord, SessionImport,
    SessionInfo, StoreCounters, StoreError, StoredTurn, TurnId, TurnRecord, UndoableTurn, UsageRow,
};

use super::{copy, keys, limits, read, request_log, responses, sessions, usage, PgStore};

#[async_trait]
impl Store for PgStore {
    fn location(&self) -> String {
        self.shared.teller.location.clone()
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let ping = async {
            let conn = self.watch_conn("ping").await?;
            conn.row("ping", "SELECT 1", &[]).await.map(drop)
        };
        self.within("ping", ping).await
    }

    fn counters(&self) -> StoreCounters {
        self.shared.counters.read()
    }

    async fn create_session(&self, new: &NewSession) -> Result<String, StoreError> {
        self.within("create a session", sessions::create_session(self, new))
            .await
    }

    async fn append_turn(&self, session: &str, turn: &TurnRecord) -> Result<TurnId, StoreError> {
        self.within("append a turn", sessions::append_turn(self, session, turn))
            .await
    }

    async fn import_session(&self, import: &SessionImport) -> Result<String, StoreError> {
        self.within("import a session", sessions::import_session(self, import))
            .await
    }

    async fn rename(&self, session: &str, name: &str) -> Result<(), StoreError> {
        self.within("rename a session", sessions::rename(self, session, name))
            .await
    }

    async fn remove(&self, session: &str) -> Result<(), StoreError> {
        self.within("remove a session", sessions::remove(self, session))
            .await
    }

    async fn mark_undone(&self, turn: TurnId) -> Result<(), StoreError> {
        self.within("mark a turn undone", sessions::mark_undone(self, turn))
            .await
    }

    async fn session(&self, key: &str) -> Result<SessionInfo, StoreError> {
        self.within("read a session", read::session(self, key))
            .await
    }

    async fn list_sessions(&self, project: Option<&Path>) -> Result<Vec<SessionInfo>, StoreError> {
        self.within("list sessions", read::list_sessions(self, project))
            .await
    }

    async fn session_ids(&self) -> Result<Vec<String>, StoreError> {
        self.within("list session ids", read::session_ids(self))
            .await
    }

    async fn latest_for_project(&self, project: &Path) -> Result<Option<SessionInfo>, StoreError> {
        self.within(
            "find the project's latest session",
            read::latest_for_project(self, project),
        )
        .await
    }

    async fn history(&self, session: &str) -> Result<History, StoreError> {
        self.within("read a history", read::history(self, session))
            .await
    }

    async fn turn_ids(&self, session: &str) -> Result<Vec<TurnId>, StoreError> {
        self.within("list turns", read::turn_ids(self, session))
            .await
    }

    async fn turns(&self, session: &str) -> Result<Vec<StoredTurn>, StoreError> {
        self.within("read turns", read::turns(self, session)).await
    }

    async fn last_undoable_turn(&self, session: &str) -> Result<Option<UndoableTurn>, StoreError> {
        self.within(
            "find the last undoable turn",
            read::last_undoable_turn(self, session),
        )
        .await
    }

    async fn create_key(&self, new: &NewKey) -> Result<KeyRecord, StoreError> {
        self.within("create a key", keys::create_key(self, new))
            .await
    }

    async fn keys(&self) -> Result<Vec<KeyRecord>, StoreError> {
        self.within("list keys", keys::keys(self)).await
    }

    async fn key_by_hash(&self, hash: &str) -> Result<Option<KeyRecord>, StoreError> {
        self.within("check a key", keys::key_by_hash(self, hash))
            .await
    }

    async fn key(&self, name_or_id: &str) -> Result<KeyRecord, StoreError> {
        self.within("find a key", keys::find_key(self, name_or_id))
            .await
    }

    async fn revoke_key(&self, name_or_id: &str) -> Result<KeyRecord, StoreError> {
        self.within("revoke a key", keys::revoke_key(self, name_or_id))
            .await
    }

    async fn keys_version(&self) -> Result<KeysVersion, StoreError> {
        self.within("read the keys version", keys::keys_version(self))
            .await
    }

    async fn key_page(&self, query: &crate::KeyQuery) -> Result<Vec<KeyRecord>, StoreError> {
        self.within("list a page of keys", keys::key_page(self, query))
            .await
    }

    async fn change_key(
        &self,
        name_or_id: &str,
        change: &crate::KeyChange,
    ) -> Result<KeyRecord, StoreError> {
        let changed = keys::change_key(self, name_or_id, change);
        self.within("change a key", changed).await
    }

    async fn session_page(
        &self,
        query: &crate::SessionQuery,
    ) -> Result<Vec<SessionInfo>, StoreError> {
        self.within("list a page of sessions", read::session_page(self, query))
            .await
    }

    async fn record_usage(&self, rows: &[UsageRow]) -> Result<(), StoreError> {
        self.within("record usage", usage::record_usage(self, rows))
            .await
    }

    async fn usage(
        &self,
        key_id: Option<&str>,
        since: Option<&str>,
    ) -> Result<Vec<UsageRow>, StoreError> {
        self.within("read usage", usage::usage(self, key_id, since))
            .await
    }

    async fn tokens_used(&self, key_id: &str) -> Result<u64, StoreError> {
        self.within("count tokens used", usage::tokens_used(self, key_id))
            .await
    }

    async fn usage_sums(&self, query: &crate::UsageQuery) -> Result<Vec<UsageRow>, StoreError> {
        let (key_id, since, until) = (&query.key_id, &query.since, &query.until);
        let sums = request_log::usage_sums(
            self,
            query.by,
            query.by_agent,
            key_id.as_deref(),
            since.as_deref(),
            until.as_deref(),
        );
        self.within("sum usage", sums).await
    }

    async fn record_requests(&self, rows: &[crate::RequestLogRow]) -> Result<(), StoreError> {
        let write = request_log::record_requests(self, rows);
        self.within("record requests", write).await
    }

    async fn request_log(
        &self,
        query: &crate::LogQuery,
    ) -> Result<Vec<crate::RequestLogRow>, StoreError> {
        let read = request_log::request_log(self, query);
        self.within("read the request log", read).await
    }

    async fn request_entry(&self, id: &str) -> Result<Option<crate::RequestLogRow>, StoreError> {
        let read = request_log::request_entry(self, id);
        self.within("read a request", read).await
    }

    async fn prune_request_log(&self, before_ms: i64) -> Result<u64, StoreError> {
        let prune = request_log::prune_request_log(self, before_ms);
        self.within("prune the request log", prune).await
    }

    async fn admit(&self, check: &LimitCheck) -> Result<LimitVerdict, StoreError> {
        self.within("check limits", limits::admit(self, check))
            .await
    }

    async fn put_response(&self, new: &NewResponse<'_>) -> Result<ResponseRecord, StoreError> {
        self.within("store a response", responses::put_response(self, new))
            .await
    }

    async fn response(&self, id: &str) -> Result<Option<ResponseRecord>, StoreError> {
        self.within("read a response", responses::response(self, id))
            .await
    }

    async fn delete_response(&self, id: &str) -> Result<bool, StoreError> {
        self.within("delete a response", responses::delete_response(self, id))
            .await
    }

    async fn responses(&self) -> Result<Vec<ResponseCopy>, StoreError> {
        self.within("list responses", copy::responses(self)).await
    }

    async fn copy_session(&self, copy: &SessionCopy) -> Result<bool, StoreError> {
        self.within("copy a session", copy::copy_session(self, copy))
            .await
    }

    async fn copy_key(&self, key: &KeyRecord) -> Result<bool, StoreError> {
        self.within("copy a key", copy::copy_key(self, key)).await
    }

    async fn copy_usage(&self, row: &UsageRow) -> Result<bool, StoreError> {
        self.within("copy usage", copy::copy_usage(self, row)).await
    }

    async fn copy_response(&self, copy: &ResponseCopy) -> Result<bool, StoreError> {
        self.within("copy a response", copy::copy_response(self, copy))
            .await
    }
}
