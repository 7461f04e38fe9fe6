//! qore's store: everything qore keeps (conversations, API keys, usage, rate-limit
//! counters, stored responses) behind one async interface, [`Store`], with two backends:
//! [`SqliteStore`] (one file, the embedded default) and [`PgStore`] (PostgreSQL: several
//! `qore serve` processes share it).
//!
//! Promises:
//! - [`open`] takes a location: `postgres://…` / `postgresql://…` is PostgreSQL, anything
//!   else a SQLite file path; [`open_configured`] is `QORE_STORE_URL` when set, else `qore.db`
//!   in `QORE_DATA_DIR`, else in `qore` under the platform's data dir (`$XDG_DATA_HOME/qore`
//!   on Linux).
//! - Every promise of the [`Store`] interface (whole turns, well-formed history, lookup by id,
//!   name or prefix, order, import, copy, keys, usage, atomic limits, failures) holds on both
//!   backends: one conformance suite (`tests/conformance/`) runs unchanged against each.
//! - SQLite (`sqlite` module): WAL mode, foreign keys on, a busy timeout, so two processes
//!   writing different sessions at once both succeed; the schema is versioned (`PRAGMA
//!   user_version`, migrated on open with `rusqlite_migration`). PostgreSQL (`postgres`
//!   module): the same tables in its own types, migrated with `refinery` under an advisory
//!   lock. The two backends have the same shape (one file per kind of record: `sessions`,
//!   `read`, `keys`, `usage`, `limits`, `responses`, `copy`, `migrate`, and `api` for the
//!   [`Store`] impl); neither uses the other. What they share (the records, the checks
//!   before a write, row decoding, the rate-limit rule) is in the crate's own modules.
//! - Append-only: a turn is committed whole in one transaction, so a process killed
//!   mid-write loses at most that turn and every earlier turn is intact. A malformed turn is
//!   refused, and a failed or cancelled turn is recorded without its partial assistant
//!   message, so the stored history is always well-formed.
//!
//! # Schema (SQLite version 6; PostgreSQL the same tables)
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
//! | | `changes` | how often its globs and limits were changed (the keys' version sums it) |
//! | `usage` | `day`, `key_id`, `model`, `agent` | primary key: UTC date `YYYY-MM-DD`, the key's id (`''`: no key), the model as requested, the agent that answered (`''`: none) |
//! | | `requests`, `errors` | requests answered, and how many of them failed |
//! | | `tokens_in`, `tokens_out` | tokens the provider reported, summed |
//! | `responses` | `id` | TEXT primary key: a Responses API response id |
//! | | `key_id` | the key that created it (`''`: no key) |
//! | | `session_id`, `turn_id` | the last whole turn of the conversation it continues (cascade delete with either); NULL: none yet |
//! | | `pending` | JSON array of `qore_core::Message`: the open turn's messages after that turn (a reply that ended in calls of the caller's tools); NULL: none |
//! | | `object` | the response as it was answered (JSON), for `GET /v1/responses/{id}` |
//! | | `created_at` | when it was stored |
//! | `rate_events` | `key_id`, `at` | UNIQUE: a key and the end (ms) of a whole second, kept until 60 s after it |
//! | | `requests`, `tokens` | the requests admitted and the tokens recorded (for `tpm`) in that second |
//!
//! Version 1 had no `file_changes`, version 2 none of `qore serve`'s tables, version 3 no
//! `rate_events`; opening an
//! older file adds what it lacks and keeps its sessions (a version 1 file's turns have no
//! recorded changes).
//!
//! For example, every user prompt of a project:
//! `SELECT json_extract(content, '$.blocks[0].text') FROM messages m JOIN turns t ON
//! t.id = m.turn_id JOIN sessions s ON s.id = t.session_id WHERE m.seq = 1 AND
//! s.project_dir = '/src/app';`

mod codec;
mod error;
mod file_changes;
mod interface;
mod keys;
mod limits;
mod listing;
mod location;
mod lookup;
mod migrate;
mod open;
mod postgres;
mod request_log;
mod responses;
mod sessions;
mod sqlite;
mod turn;
mod usage;

pub use codec::time_of;
pub use error::StoreError;
pub use file_changes::{FileChange, UndoableTurn};
pub use interface::{LimitCheck, LimitVerdict, ResponseCopy, SessionCopy, Store, StoreCounters};
pub use keys::{KeyRecord, KeysVersion, NewKey};
pub use listing::{KeyChange, KeyQuery, SessionQuery, MOST_SESSIONS};
pub use location::{passwords, shown};
pub use migrate::{copy_store, CopyCount, CopyReport};
pub use open::{data_dir, is_postgres, open, open_configured, DB_FILE, STORE_URL_VAR};
pub use postgres::PgStore;
pub use request_log::{
    log_id, log_id_floor, LogQuery, RequestLogRow, UsageGroup, UsageQuery, MOST_PER_PAGE,
};
pub use responses::{NewResponse, ResponseRecord};
pub use sessions::{ImportTurn, NewSession, SessionImport, SessionInfo, StoredTurn, TurnId};
pub use sqlite::{schema_version, SqliteStore, BUSY_TIMEOUT, SCHEMA_VERSION};
pub use turn::{check_well_formed, title_of, TurnRecord, TurnStatus};
pub use usage::{is_day, utc_day, UsageRow};
