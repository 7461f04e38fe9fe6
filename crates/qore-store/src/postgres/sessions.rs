//! Writing sessions and turns on PostgreSQL.
//!
//! Promises (the same as SQLite's, `sqlite::sessions`):
//! - a turn is checked ([`TurnRecord::checked_messages`]) before anything is sent; its
//!   `updated_at` is ticked from the store clock (`clock`: one round trip, a transaction of
//!   its own that waits for no disk), then the turn is written by ONE statement (its own
//!   transaction): the session's `updated_at` and title, the turn, all its messages and file
//!   changes. Two round trips once the statements are prepared. Two turns appended to one session at once both land,
//!   with consecutive `seq`s: the later one, finding its `seq` taken, is sent again;
//! - an import is one pipelined transaction (`BEGIN`, the session, each turn, `COMMIT`):
//!   one round trip, wholly there or wholly absent;
//! - names are trimmed and unique ([`StoreError::NameTaken`]); a parent that is not there is
//!   [`StoreError::NotFound`] on create and dropped on import; a turn id that is not there is
//!   [`StoreError::NoSuchTurn`].

use std::time::SystemTime;

use crate::codec::{millis, new_id, role_word, to_json};
use crate::sessions::{checked_name, checked_session, ImportRow};
use crate::turn::title_of;
use crate::{NewSession, SessionImport, StoreError, TurnId, TurnRecord};

use super::clock::tick;
use super::conn::{pipeline, Conn, Step};
use super::errors::violated;
use super::PgStore;

/// The messages and file changes of the turn `t` (the tail of both turn statements).
macro_rules! turn_parts {
    () => {
        "), m AS (
    INSERT INTO messages (turn_id, seq, role, content)
    SELECT t.id, x.seq, x.role, x.content
    FROM t, unnest($10::text[], $11::text[]) WITH ORDINALITY AS x(role, content, seq)
), f AS (
    INSERT INTO file_changes (turn_id, path, before, after_hash, restorable)
    SELECT t.id, x.path, x.before, x.after_hash, x.restorable
    FROM t, unnest($12::text[], $13::bytea[], $14::text[], $15::bool[])
         AS x(path, before, after_hash, restorable)
)
SELECT id FROM t"
    };
}

/// Append a turn to session `$1` as its next, touching the session with the ticked
/// `updated_at` `$2` (never moving it back: a concurrent append may have ticked later).
const APPEND: &str = concat!(
    "WITH s AS (
    UPDATE sessions SET updated_at = greatest(sessions.updated_at, $2::bigint),
                        title = coalesce(sessions.title, $3::text)
    WHERE sessions.id = $1::text
    RETURNING sessions.id
), t AS (
    INSERT INTO turns (session_id, seq, started_at, finished_at, model, agent, usage, status,
                       undone)
    SELECT s.id, coalesce((SELECT max(seq) FROM turns WHERE session_id = $1::text), 0) + 1,
           $4::bigint, $5::bigint, $6::text, $7::text, $8::text, $9::text, false
    FROM s
    RETURNING id
",
    turn_parts!()
);

/// Insert a turn of session `$1` at `seq` `$2` (an import or a copy).
pub(super) const INSERT_TURN: &str = concat!(
    "WITH t AS (
    INSERT INTO turns (session_id, seq, started_at, finished_at, model, agent, usage, status,
                       undone)
    VALUES ($1::text, $2::bigint, $3::bigint, $4::bigint, $5::text, $6::text, $7::text,
            $8::text, $9::bool)
    RETURNING id
",
    turn_parts!()
);

/// A new session; `$8` is its ticked `updated_at`.
const CREATE: &str = "
INSERT INTO sessions (id, name, project_dir, agent, model, created_at, updated_at, parent_id)
VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint, $8::bigint, $7::text)";

/// An imported session; `$8` is its ticked `updated_at`.
const IMPORT: &str = "
INSERT INTO sessions (id, name, title, project_dir, agent, model, created_at, updated_at,
                      parent_id)
SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint, $8::bigint,
       (SELECT id FROM sessions WHERE id = $9::text)";

/// How often an append is sent: each retry follows another append to the same session that
/// committed first, so an append fails this way only with more than this many appending to
/// one session at once.
const APPEND_TRIES: usize = 32;

/// A checked turn as statement parameters.
pub(super) struct TurnParams<'t> {
    pub started: i64,
    pub finished: i64,
    pub model: Option<&'t str>,
    pub agent: Option<&'t str>,
    pub usage: String,
    pub status: &'static str,
    pub roles: Vec<&'static str>,
    pub contents: Vec<String>,
    pub paths: Vec<&'t str>,
    pub befores: Vec<Option<&'t [u8]>>,
    pub hashes: Vec<Option<&'t str>>,
    pub restorable: Vec<bool>,
}

impl<'t> TurnParams<'t> {
    /// `turn`'s rows, after [`TurnRecord::checked_messages`].
    pub(super) fn of(turn: &'t TurnRecord) -> Result<TurnParams<'t>, StoreError> {
        let messages = turn.checked_messages()?;
        let changes = &turn.file_changes;
        Ok(TurnParams {
            started: millis(turn.started_at),
            finished: millis(turn.finished_at),
            model: turn.model.as_deref(),
            agent: turn.agent.as_deref(),
            usage: to_json(&turn.usage)?,
            status: turn.status.as_str(),
            roles: messages.iter().map(|m| role_word(m.role)).collect(),
            contents: messages
                .into_iter()
                .map(to_json)
                .collect::<Result<_, _>>()?,
            paths: changes.iter().map(|c| c.path.as_str()).collect(),
            befores: changes.iter().map(|c| c.before.as_deref()).collect(),
            hashes: changes.iter().map(|c| c.after_hash.as_deref()).collect(),
            restorable: changes.iter().map(|c| c.restorable).collect(),
        })
    }
}

/// A session write's error: a taken name, a missing parent, or what `doing` met.
fn session_error(
    conn: &Conn<'_>,
    doing: &str,
    name: Option<&str>,
    parent: Option<&str>,
) -> impl Fn(tokio_postgres::Error) -> StoreError {
    let (name, parent) = (name.map(str::to_owned), parent.map(str::to_owned));
    let teller = conn.shared.teller.clone();
    let doing = doing.to_owned();
    move |e| match (violated(&e), &name, &parent) {
        (Some("sessions_name_key"), Some(name), _) => StoreError::NameTaken(name.clone()),
        (Some("sessions_parent_id_fkey"), _, Some(parent)) => StoreError::NotFound(parent.clone()),
        _ => teller.db(&doing, e),
    }
}

pub(super) async fn create_session(
    store: &PgStore,
    new: &NewSession,
) -> Result<String, StoreError> {
    const DOING: &str = "create a session";
    let id = new_id();
    let (name, project) = checked_session(new)?;
    let now = millis(SystemTime::now());
    let conn = store.conn(DOING).await?;
    let statement = conn.prepare(DOING, CREATE).await?;
    let updated = tick(&conn, DOING, now).await?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 8] = [
        &id,
        &name,
        &project,
        &new.agent,
        &new.model,
        &now,
        &new.parent_id,
        &updated,
    ];
    (conn.execute(&statement, &params).await).map_err(session_error(
        &conn,
        DOING,
        name,
        new.parent_id.as_deref(),
    ))?;
    conn.committed();
    Ok(id)
}

pub(super) async fn append_turn(
    store: &PgStore,
    session: &str,
    turn: &TurnRecord,
) -> Result<TurnId, StoreError> {
    const DOING: &str = "append a turn";
    let p = TurnParams::of(turn)?;
    let title = title_of(&turn.user);
    let conn = store.conn(DOING).await?;
    let statement = conn.prepare(DOING, APPEND).await?;
    let mut tries = 0;
    loop {
        let updated = tick(&conn, DOING, millis(SystemTime::now())).await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 15] = [
            &session,
            &updated,
            &title,
            &p.started,
            &p.finished,
            &p.model,
            &p.agent,
            &p.usage,
            &p.status,
            &p.roles,
            &p.contents,
            &p.paths,
            &p.befores,
            &p.hashes,
            &p.restorable,
        ];
        tries += 1;
        match conn.query(&statement, &params).await {
            Ok(rows) => {
                let Some(row) = rows.first() else {
                    return Err(StoreError::NotFound(session.to_owned()));
                };
                let id = super::conn::Cols::of(row, &conn, DOING).at::<i64>(0)?;
                conn.committed();
                return Ok(TurnId(id));
            }
            Err(e) if violated(&e) == Some("turns_session_id_seq_key") && tries < APPEND_TRIES => {}
            Err(e) => return Err(conn.shared.teller.db(DOING, e)),
        }
    }
}

pub(super) async fn import_session(
    store: &PgStore,
    import: &SessionImport,
) -> Result<String, StoreError> {
    const DOING: &str = "import a session";
    let turns = (import.turns.iter())
        .map(|t| TurnParams::of(&t.record))
        .collect::<Result<Vec<_>, _>>()?;
    let new = &import.session;
    let row = ImportRow::of(import)?;
    let conn = store.conn(DOING).await?;
    let session_statement = conn.prepare(DOING, IMPORT).await?;
    let turn_statement = conn.prepare(DOING, INSERT_TURN).await?;
    let updated = tick(&conn, DOING, row.now).await?;
    let session_params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] = [
        &row.id,
        &row.name,
        &row.title,
        &row.project,
        &new.agent,
        &new.model,
        &row.created,
        &updated,
        &new.parent_id,
    ];
    let seqs: Vec<i64> = (1..=turns.len() as i64).collect();
    let turn_params: Vec<_> = (turns.iter().zip(&import.turns).zip(&seqs))
        .map(|((p, turn), seq)| turn_params(&row.id, seq, p, &turn.undone))
        .collect();
    let mut steps: Vec<Step<'_>> = vec![conn.step_begin("BEGIN")];
    steps.push(conn.step(&session_statement, &session_params));
    steps.extend(
        turn_params
            .iter()
            .map(|params| conn.step(&turn_statement, params)),
    );
    steps.push(conn.step_commit());
    match pipeline(steps).await {
        Ok(_) => {
            conn.committed();
            Ok(row.id)
        }
        Err(e) => {
            let error = session_error(&conn, DOING, row.name, None)(e);
            Err(conn.rollback(error).await)
        }
    }
}

/// The parameters of [`INSERT_TURN`].
pub(super) fn turn_params<'a>(
    session: &'a String,
    seq: &'a i64,
    p: &'a TurnParams<'_>,
    undone: &'a bool,
) -> [&'a (dyn tokio_postgres::types::ToSql + Sync); 15] {
    [
        session,
        seq,
        &p.started,
        &p.finished,
        &p.model,
        &p.agent,
        &p.usage,
        &p.status,
        undone,
        &p.roles,
        &p.contents,
        &p.paths,
        &p.befores,
        &p.hashes,
        &p.restorable,
    ]
}

pub(super) async fn rename(store: &PgStore, session: &str, name: &str) -> Result<(), StoreError> {
    const DOING: &str = "rename a session";
    let name = checked_name(name)?;
    let id = super::read::session(store, session).await?.id;
    let conn = store.conn(DOING).await?;
    let statement = conn
        .prepare(DOING, "UPDATE sessions SET name = $2 WHERE id = $1")
        .await?;
    (conn.execute(&statement, &[&id, &name]).await).map_err(session_error(
        &conn,
        DOING,
        Some(name),
        None,
    ))?;
    conn.committed();
    Ok(())
}

pub(super) async fn remove(store: &PgStore, session: &str) -> Result<(), StoreError> {
    const DOING: &str = "remove a session";
    let id = super::read::session(store, session).await?.id;
    let conn = store.conn(DOING).await?;
    let statement = conn
        .prepare(DOING, "DELETE FROM sessions WHERE id = $1")
        .await?;
    (conn.execute(&statement, &[&id]).await).map_err(conn.shared.teller.err(DOING))?;
    conn.committed();
    Ok(())
}

pub(super) async fn mark_undone(store: &PgStore, turn: TurnId) -> Result<(), StoreError> {
    const DOING: &str = "mark a turn undone";
    let conn = store.conn(DOING).await?;
    let statement = conn
        .prepare(DOING, "UPDATE turns SET undone = true WHERE id = $1")
        .await?;
    let touched =
        (conn.execute(&statement, &[&turn.0]).await).map_err(conn.shared.teller.err(DOING))?;
    if touched == 0 {
        return Err(StoreError::NoSuchTurn(turn.0));
    }
    conn.committed();
    Ok(())
}
