//! [`Store`]: the one async interface over everything qore keeps (sessions, turns, file
//! changes, API keys, usage, rate-limit counters, stored responses), and what each method
//! promises whichever backend answers it.
//!
//! Two backends implement it: [`SqliteStore`](crate::SqliteStore) (one file, the embedded
//! default) and [`PgStore`](crate::PgStore) (PostgreSQL, for several processes behind a load
//! balancer). [`open`](crate::open) picks one from a location. One conformance suite
//! (`tests/conformance/`) runs unchanged against both, so every promise below holds on both:
//!
//! - **Whole turns, append-only.** [`Store::append_turn`] writes one turn (its messages and
//!   file changes) in one transaction, after [`TurnRecord::checked_messages`]: a malformed turn
//!   is refused, a failed or cancelled turn is kept without its partial answer. A process
//!   killed mid-write leaves the turn wholly there or wholly absent.
//! - **Lookup.** A session is found by exact id, then exact name, then unique id prefix
//!   ([`Store::session`]); an ambiguous prefix lists its candidates. A key likewise by exact
//!   name, exact id, unique id prefix ([`Store::key`]).
//! - **Order.** `updated_at` strictly increases across the store, so newest-first listings
//!   are a total order; turns keep their 1-based `seq`; history skips undone turns.
//! - **Import** writes a whole session in one transaction under the same check, keeping the
//!   times it is given. **Copy** ([`Store::copy_session`] and friends, for `qore store
//!   migrate`) keeps ids and times as they are and writes nothing that is already there.
//! - **Keys** are hashes, never deleted, only revoked; [`Store::keys_version`] changes when
//!   any process creates, changes ([`Store::change_key`]) or revokes one; [`Store::key_page`]
//!   and [`Store::session_page`] filter and page in the database.
//! - **Usage** rows add up per (day, key, model, agent) in one upsert each, so writers in
//!   several processes never lose each other's counts.
//! - **Request log** rows page newest first by id (a ULID of the start time); a listing
//!   carries no bodies; usage sums are computed by the database over every row kept.
//! - **Limits** ([`Store::admit`]) are decided by one atomic step in the database: with
//!   `rpm = 10`, exactly 10 requests are admitted in any 60 seconds, whichever processes ask.
//! - **Failures.** A database that cannot be reached (refused, timed out, no free
//!   connection) is [`StoreError::Unavailable`](crate::StoreError::Unavailable), never a hang
//!   past the backend's connect timeout; every other failure is an error naming what was
//!   being done. Nothing panics on what the database returns.

use std::path::Path;

use async_trait::async_trait;
use qore_core::History;

use crate::{
    KeyRecord, KeysVersion, NewKey, NewResponse, ResponseRecord, SessionImport, SessionInfo,
    StoreError, StoredTurn, TurnId, TurnRecord, UndoableTurn, UsageRow,
};

/// What [`Store::admit`] is asked: one request of a key with limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitCheck {
    pub key_id: String,
    /// Most requests in any 60 seconds.
    pub rpm: Option<u64>,
    /// Most tokens (in and out, as recorded by [`Store::record_usage`]) in any 60 seconds.
    pub tpm: Option<u64>,
    /// Most tokens over the key's life (the sum of its usage rows).
    pub budget_tokens: Option<u64>,
    /// The request's estimated tokens, checked against `tpm` and the budget.
    pub estimate: u64,
}

/// What [`Store::admit`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitVerdict {
    /// Admitted (and counted against `rpm`). The requests left in the window after this one,
    /// and the tokens left before it, for the limits the key has.
    Admitted {
        requests_left: Option<u64>,
        tokens_left: Option<u64>,
    },
    /// `rpm` reached: the milliseconds until the oldest counted request leaves the window.
    Requests { retry_after_ms: u64 },
    /// `tpm` would be passed: the milliseconds until enough tokens leave the window.
    Tokens { retry_after_ms: u64 },
    /// The lifetime budget is spent (or this request's estimate would pass it); it never
    /// frees up. `spent` is the key's lifetime tokens.
    Budget { spent: u64 },
}

/// A whole session as it is, for [`Store::copy_session`]: its row and every turn.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionCopy {
    pub info: SessionInfo,
    /// Oldest first, undone ones included, with their `seq`.
    pub turns: Vec<StoredTurn>,
}

/// A stored response as it is, for [`Store::copy_response`]: the turn it names is given by
/// its place in its session (turn ids differ between stores).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseCopy {
    pub record: ResponseRecord,
    /// The `seq` of `record.turn_id` in `record.session_id`.
    pub turn_seq: Option<i64>,
}

/// Database work a store has done since it was opened (what the benchmark counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreCounters {
    /// Statements sent to the database (each one round trip).
    pub statements: u64,
    /// Transactions committed.
    pub transactions: u64,
}

/// Everything qore keeps, behind one async interface (see the module doc for the promises).
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Where the store is, for messages: a path, or a URL without its password.
    fn location(&self) -> String;

    /// Whether the database answers now (a cheap query).
    async fn ping(&self) -> Result<(), StoreError>;

    /// What this handle has sent to the database so far.
    fn counters(&self) -> StoreCounters {
        StoreCounters::default()
    }

    // --- sessions and turns ---

    /// Create a session and return its id (a lowercase ULID: ids sort by creation).
    async fn create_session(&self, new: &crate::NewSession) -> Result<String, StoreError>;
    /// Commit one whole turn (checked first) and return its id; sets the session's title
    /// from the first user message when it has none.
    async fn append_turn(&self, session: &str, turn: &TurnRecord) -> Result<TurnId, StoreError>;
    /// Write a whole session with its turns in one transaction and return its new id.
    async fn import_session(&self, import: &SessionImport) -> Result<String, StoreError>;
    /// Give a session (id, name or prefix) a new unique name.
    async fn rename(&self, session: &str, name: &str) -> Result<(), StoreError>;
    /// Delete a session (id, name or prefix) with its turns, messages, changes, responses.
    async fn remove(&self, session: &str) -> Result<(), StoreError>;
    /// Mark a turn undone: kept, but left out of the history.
    async fn mark_undone(&self, turn: TurnId) -> Result<(), StoreError>;
    /// The session whose id or name is `key`, else the one whose id starts with it.
    async fn session(&self, key: &str) -> Result<SessionInfo, StoreError>;
    /// Sessions newest first (by last write), of `project` only when given.
    async fn list_sessions(&self, project: Option<&Path>) -> Result<Vec<SessionInfo>, StoreError>;
    /// Every session's id, in id order.
    async fn session_ids(&self) -> Result<Vec<String>, StoreError>;
    /// The most recently written session of a project directory.
    async fn latest_for_project(&self, project: &Path) -> Result<Option<SessionInfo>, StoreError>;
    /// The conversation of a session (exact id): its turns that are not undone, in order.
    async fn history(&self, session: &str) -> Result<History, StoreError>;
    /// A session's turn ids, oldest first, undone ones included.
    async fn turn_ids(&self, session: &str) -> Result<Vec<TurnId>, StoreError>;
    /// Every stored turn of a session (exact id), oldest first, undone ones included.
    async fn turns(&self, session: &str) -> Result<Vec<StoredTurn>, StoreError>;
    /// The newest turn of a session (exact id) that is not undone, with its file changes.
    async fn last_undoable_turn(&self, session: &str) -> Result<Option<UndoableTurn>, StoreError>;

    // --- API keys ---

    /// Store a new key (valid from now) and return its record.
    async fn create_key(&self, new: &NewKey) -> Result<KeyRecord, StoreError>;
    /// Every key, revoked ones included, oldest first.
    async fn keys(&self) -> Result<Vec<KeyRecord>, StoreError>;
    /// The key whose hash this is, revoked or not.
    async fn key_by_hash(&self, hash: &str) -> Result<Option<KeyRecord>, StoreError>;
    /// The key named `name_or_id`: exact name, exact id, else the one id starting with it.
    async fn key(&self, name_or_id: &str) -> Result<KeyRecord, StoreError>;
    /// Revoke a key (see [`Store::key`]); a revoked key keeps its first revocation time.
    async fn revoke_key(&self, name_or_id: &str) -> Result<KeyRecord, StoreError>;
    /// A value that changes whenever any process creates, changes or revokes a key.
    async fn keys_version(&self) -> Result<KeysVersion, StoreError>;
    /// A page of keys in id order, filtered by the database (see [`crate::KeyQuery`]).
    async fn key_page(&self, query: &crate::KeyQuery) -> Result<Vec<KeyRecord>, StoreError>;
    /// Change the globs and limits `change` gives of a key (see [`Store::key`]), in one
    /// statement; the key as it now is.
    async fn change_key(
        &self,
        name_or_id: &str,
        change: &crate::KeyChange,
    ) -> Result<KeyRecord, StoreError>;
    /// A page of sessions newest first by id, filtered by the database (see
    /// [`crate::SessionQuery`]).
    async fn session_page(
        &self,
        query: &crate::SessionQuery,
    ) -> Result<Vec<SessionInfo>, StoreError>;

    // --- usage and limits ---

    /// Add each row's counts to its stored (day, key, model, agent) row, all in one
    /// transaction; a row's tokens also count against its key's `tpm` window from now.
    async fn record_usage(&self, rows: &[UsageRow]) -> Result<(), StoreError>;
    /// The stored rows, of one key id (`''`: no key) and from the day `since` on when given;
    /// by key, model, agent, then day.
    async fn usage(
        &self,
        key_id: Option<&str>,
        since: Option<&str>,
    ) -> Result<Vec<UsageRow>, StoreError>;
    /// Every token, in and out, recorded for a key id.
    async fn tokens_used(&self, key_id: &str) -> Result<u64, StoreError>;
    /// Decide one request of a key against its limits in one atomic step, counting it when
    /// admitted.
    async fn admit(&self, check: &LimitCheck) -> Result<LimitVerdict, StoreError>;

    /// Usage summed by the database, grouped by `query.by` (days in UTC), of one key id when
    /// given, from day `since` to day `until` (both included) when given; ordered by the
    /// group. With `by_agent`, one row per group and agent (the agent in its field), ordered
    /// by the group, then the agent.
    async fn usage_sums(&self, query: &crate::UsageQuery) -> Result<Vec<UsageRow>, StoreError>;

    // --- the request log (`qore serve`) ---

    /// Write a batch of request rows in one transaction (an id already there is kept).
    async fn record_requests(&self, rows: &[crate::RequestLogRow]) -> Result<(), StoreError>;
    /// One page of the request log, newest first, without bodies.
    async fn request_log(
        &self,
        query: &crate::LogQuery,
    ) -> Result<Vec<crate::RequestLogRow>, StoreError>;
    /// One request with its bodies.
    async fn request_entry(&self, id: &str) -> Result<Option<crate::RequestLogRow>, StoreError>;
    /// Delete the requests that started before `before_ms`; how many.
    async fn prune_request_log(&self, before_ms: i64) -> Result<u64, StoreError>;

    // --- stored responses (the Responses API) ---

    /// Store a response id naming a turn of the given session.
    async fn put_response(&self, new: &NewResponse<'_>) -> Result<ResponseRecord, StoreError>;
    /// The stored response `id`, if there is one.
    async fn response(&self, id: &str) -> Result<Option<ResponseRecord>, StoreError>;
    /// Forget a response id (its turn stays); whether there was one.
    async fn delete_response(&self, id: &str) -> Result<bool, StoreError>;

    // --- copying between stores (`qore store migrate`) ---

    /// Every stored response with the `seq` of the turn it names, oldest first.
    async fn responses(&self) -> Result<Vec<ResponseCopy>, StoreError>;
    /// Write a session exactly as it is (its id, name, times, turns with their `seq`, undone
    /// flags, messages and file changes) in one transaction; `false`, writing nothing, when a
    /// session with its id is already there.
    async fn copy_session(&self, copy: &SessionCopy) -> Result<bool, StoreError>;
    /// Write a key exactly as it is; `false` when a key with its id is already there.
    async fn copy_key(&self, key: &KeyRecord) -> Result<bool, StoreError>;
    /// Write a usage row as it is; `false` when its (day, key, model, agent) is already there.
    async fn copy_usage(&self, row: &UsageRow) -> Result<bool, StoreError>;
    /// Write a response as it is, naming the copied turn; `false` when its id is there.
    async fn copy_response(&self, copy: &ResponseCopy) -> Result<bool, StoreError>;
}
