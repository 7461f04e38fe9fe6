//! qore's session store: conversations kept in one SQLite file.
//!
//! Promises:
//! - The file is `qore.db` in `QORE_DATA_DIR`, else in `qore` under the platform's data dir
//!   (`$XDG_DATA_HOME/qore` on Linux): [`Store::open_default`]; any path: [`Store::open`].
//! - WAL mode, foreign keys on, a busy timeout: two processes writing different sessions at
//!   once both succeed. The schema is versioned (`PRAGMA user_version`, migrated on open with
//!   `rusqlite_migration`).
//! - Append-only: [`Store::append_turn`] commits one whole turn in one transaction, so a
//!   process killed mid-write loses at most that turn and every earlier turn is intact. A
//!   malformed turn (a tool call without its result, a result without its call) is refused,
//!   and a failed or cancelled turn is recorded without its partial assistant message, so the
//!   stored history is always well-formed. [`Store::import_session`] writes a whole session
//!   (an import) in one transaction under the same check, keeping the times it is given.
//! - A session is found by id, name or unique id prefix ([`Store::session`]: the one
//!   resolver); [`Store::list_sessions`] gives counts and the latest reported usage;
//!   [`Store::turns`] reads whole turns back (for export).
//! - A turn's file changes (what its tools wrote, with the prior content) are committed in
//!   the turn's transaction; [`Store::last_undoable_turn`] reads them back for undo.
//! - `qore serve`'s tables: API keys stored as hashes and only ever revoked, never deleted
//!   ([`Store::create_key`], [`Store::key_by_hash`], [`Store::revoke_key`], and
//!   [`Store::keys_version`] to notice another process's changes); usage counters that add up
//!   per UTC day, key, model and agent ([`Store::record_usage`], [`Store::usage`],
//!   [`Store::tokens_used`]); Responses API ids naming a stored turn ([`Store::put_response`],
//!   [`Store::response`], [`Store::delete_response`]). Each is one plain SQL statement, the
//!   surface a second backend implements.
//!
//! # Schema (version 3)
//!
//! Times are integer milliseconds since the Unix epoch (`datetime(created_at / 1000,
//! 'unixepoch')` in `sqlite3`); JSON columns are qore-core's serde form, readable as is.
//!
//! | table | column | meaning |
//! |---|---|---|
//! | `sessions` | `id` | TEXT primary key: a lowercase ULID (time-prefixed, sorts by creation) |
//! | | `name` | UNIQUE, optional user-given name |
//! | | `title` | the first user line, trimmed, ≤ 80 characters |
//! | | `project_dir` | the project directory the session belongs to |
//! | | `agent`, `model` | what the session was created with |
//! | | `created_at`, `updated_at` | `updated_at` strictly increases across the store |
//! | | `parent_id` | for a compressed session: its original (NULL once that is removed) |
//! | `turns` | `id` | INTEGER primary key ([`TurnId`]) |
//! | | `session_id`, `seq` | the session (cascade delete) and the turn's 1-based position |
//! | | `started_at`, `finished_at`, `model`, `agent` | how the turn ran |
//! | | `usage` | JSON of `qore_core::Usage`, e.g. `{"input_tokens":12,"output_tokens":3}` |
//! | | `status` | `finished`, `failed` or `cancelled` |
//! | | `undone` | 1 once undone: kept, but left out of the history |
//! | `messages` | `turn_id`, `seq` | the turn (cascade delete) and 1-based position in it |
//! | | `role` | `user`, `assistant` (copied from the JSON, for queries) |
//! | | `content` | JSON of `qore_core::Message`: `{"role":…,"blocks":[{"type":"text",…}]}` |
//! | `file_changes` | `turn_id`, `path` | the turn (cascade delete) and a file it changed, relative to the project directory (`/`-separated), once per turn |
//! | | `before` | BLOB: the file's content before the turn; NULL when it did not exist (or was not recorded) |
//! | | `after_hash` | lowercase hex SHA-256 of what the turn left; NULL when it left no file |
//! | | `restorable` | 0 when `before` was not recorded (the file was larger than the limit, 8 MiB) |
//! | `api_keys` | `id` | TEXT primary key: a lowercase ULID |
//! | | `name` | UNIQUE, not empty: what `qore serve keys` shows and takes |
//! | | `hash` | UNIQUE lowercase hex SHA-256 of the key's text (the text is never stored) |
//! | | `models` | JSON array of glob patterns over agent names and `provider/model`; `[]`: every model |
//! | | `rpm`, `tpm` | most requests, and tokens in and out, in any 60 seconds; NULL: no limit |
//! | | `budget_tokens` | most tokens in and out over the key's life (from `usage`); NULL: no limit |
//! | | `created_at`, `revoked_at` | `revoked_at` NULL while the key is valid; a revoked key stays |
//! | `usage` | `day`, `key_id`, `model`, `agent` | primary key: UTC date `YYYY-MM-DD`, the key's id (`''`: no key), the model as requested, the agent that answered (`''`: none) |
//! | | `requests`, `errors` | requests answered, and how many of them failed |
//! | | `tokens_in`, `tokens_out` | tokens the provider reported, summed |
//! | `responses` | `id` | TEXT primary key: a Responses API response id |
//! | | `key_id` | the key that created it (`''`: no key) |
//! | | `session_id`, `turn_id` | the last whole turn of the conversation it continues (cascade delete with either); NULL: none yet |
//! | | `pending` | JSON array of `qore_core::Message`: the open turn's messages after that turn (a reply that ended in calls of the caller's tools); NULL: none |
//! | | `object` | the response as it was answered (JSON), for `GET /v1/responses/{id}` |
//! | | `created_at` | when it was stored |
//!
//! Version 1 had no `file_changes`, version 2 none of `qore serve`'s tables; opening an
//! older file adds what it lacks and keeps its sessions (a version 1 file's turns have no
//! recorded changes).
//!
//! For example, every user prompt of a project:
//! `SELECT json_extract(content, '$.blocks[0].text') FROM messages m JOIN turns t ON
//! t.id = m.turn_id JOIN sessions s ON s.id = t.session_id WHERE m.seq = 1 AND
//! s.project_dir = '/src/app';`

mod error;
mod file_changes;
mod keys;
mod read;
mod responses;
mod schema;
mod store;
mod turn;
mod usage;

pub use error::StoreError;
pub use file_changes::{FileChange, UndoableTurn};
pub use keys::{KeyRecord, KeysVersion, NewKey};
pub use read::{time_of, SessionInfo, StoredTurn};
pub use responses::{NewResponse, ResponseRecord};
pub use schema::{data_dir, schema_version, BUSY_TIMEOUT, SCHEMA_VERSION};
pub use store::{ImportTurn, NewSession, SessionImport, Store, TurnId, DB_FILE};
pub use turn::{check_well_formed, title_of, TurnRecord, TurnStatus};
pub use usage::{is_day, utc_day, UsageRow};
