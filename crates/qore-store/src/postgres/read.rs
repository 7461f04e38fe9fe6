//! Reading sessions and turns on PostgreSQL.
//!
//! Promises (the same as SQLite's, `sqlite::read`): a session is found by
//! exact id, then exact name, then unique id prefix (an ambiguous one lists at most 20
//! candidates, then "…"); listings are newest first with turn and message counts and the
//! latest reported usage; history skips undone turns. Reads of several statements
//! ([`turns`], [`last_undoable_turn`]) are one pipelined REPEATABLE READ transaction, so
//! they see one state of the store, in one round trip. A row that does not decode is an
//! error naming it, never a panic.

use std::path::Path;

use qore_core::{History, Message};
use tokio_postgres::Row;

use crate::codec::from_json;
use crate::lookup::{id_range, the_one, MOST_CANDIDATES};
use crate::sessions::{path_text, take_turn, SessionRow, TurnRow};
use crate::{FileChange, SessionInfo, StoreError, StoredTurn, TurnId, UndoableTurn};

use super::conn::{pipeline, Cols, Conn};
use super::PgStore;

/// A consistent read of several statements.
const BEGIN_READ: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

macro_rules! select_info {
    () => {
        "SELECT s.id, s.name, s.title, s.project_dir, s.agent, s.model, s.created_at,
       s.updated_at, s.parent_id,
       (SELECT count(*) FROM turns t WHERE t.session_id = s.id),
       (SELECT count(*) FROM turns t JOIN messages m ON m.turn_id = t.id
         WHERE t.session_id = s.id),
       (SELECT t.usage FROM turns t
         WHERE t.session_id = s.id AND NOT t.undone
           AND ((t.usage::jsonb) ->> 'input_tokens') IS NOT NULL
         ORDER BY t.seq DESC LIMIT 1)
FROM sessions s "
    };
}

fn info(row: &Row, conn: &Conn<'_>, doing: &str) -> Result<SessionInfo, StoreError> {
    let c = Cols::of(row, conn, doing);
    let info = SessionInfo {
        id: c.at(0)?,
        name: c.at(1)?,
        title: c.at(2)?,
        project_dir: c.at(3)?,
        agent: c.at(4)?,
        model: c.at(5)?,
        created_at: c.at(6)?,
        updated_at: c.at(7)?,
        parent_id: c.at(8)?,
        turn_count: c.at(9)?,
        message_count: c.at(10)?,
        last_usage: None,
    };
    SessionRow(info, c.at(11)?).decode()
}

async fn infos(
    conn: &Conn<'_>,
    doing: &str,
    sql: &str,
    params: &super::conn::Params<'_>,
) -> Result<Vec<SessionInfo>, StoreError> {
    let rows = conn.rows(doing, sql, params).await?;
    rows.iter().map(|row| info(row, conn, doing)).collect()
}

pub(super) async fn session(store: &PgStore, key: &str) -> Result<SessionInfo, StoreError> {
    const DOING: &str = "find a session";
    if key.contains('\0') {
        return Err(StoreError::NotFound(key.to_owned()));
    }
    let conn = store.conn(DOING).await?;
    let exact = concat!(
        select_info!(),
        "WHERE s.id = $1 OR s.name = $1 ORDER BY s.id = $1 DESC LIMIT 1"
    );
    if let Some(found) = infos(&conn, DOING, exact, &[&key])
        .await?
        .into_iter()
        .next()
    {
        return Ok(found);
    }
    let found = match id_range(key) {
        None => Vec::new(),
        Some((lower, upper)) => {
            let sql = format!(
                "{} WHERE s.id >= $1 AND s.id < $2 AND starts_with(s.id, $1) ORDER BY s.id LIMIT {}",
                select_info!(),
                MOST_CANDIDATES + 1
            );
            infos(&conn, DOING, &sql, &[&lower, &upper]).await?
        }
    };
    the_one(
        found,
        key,
        || StoreError::NotFound(key.to_owned()),
        |s| s.id.clone(),
    )
}

pub(super) async fn list_sessions(
    store: &PgStore,
    project: Option<&Path>,
) -> Result<Vec<SessionInfo>, StoreError> {
    const DOING: &str = "list sessions";
    let project = project.map(path_text).transpose()?;
    let conn = store.conn(DOING).await?;
    let sql = concat!(
        select_info!(),
        "WHERE $1::text IS NULL OR s.project_dir = $1 ORDER BY s.updated_at DESC"
    );
    infos(&conn, DOING, sql, &[&project]).await
}

/// A page of sessions newest first by id (see [`crate::SessionQuery`]).
pub(super) async fn session_page(
    store: &PgStore,
    query: &crate::SessionQuery,
) -> Result<Vec<SessionInfo>, StoreError> {
    const DOING: &str = "list a page of sessions";
    let text = |v: Option<String>| v.map(|t| t.replace('\0', ""));
    let search = text(crate::listing::search_term(&query.search));
    let before = text(query.before.clone());
    let limit = crate::listing::page_size(query.limit);
    let conn = store.conn(DOING).await?;
    let sql = concat!(
        select_info!(),
        "WHERE ($1::text IS NULL OR strpos(lower(coalesce(s.title, '')), $1) > 0
                OR strpos(lower(coalesce(s.name, '')), $1) > 0 OR strpos(s.id, $1) > 0)
           AND ($2::text IS NULL OR s.id < $2)
         ORDER BY s.id DESC LIMIT $3"
    );
    infos(&conn, DOING, sql, &[&search, &before, &limit]).await
}

pub(super) async fn session_ids(store: &PgStore) -> Result<Vec<String>, StoreError> {
    const DOING: &str = "list session ids";
    let conn = store.conn(DOING).await?;
    let rows = conn
        .rows(DOING, "SELECT id FROM sessions ORDER BY id", &[])
        .await?;
    rows.iter()
        .map(|row| Cols::of(row, &conn, DOING).at(0))
        .collect()
}

pub(super) async fn latest_for_project(
    store: &PgStore,
    project: &Path,
) -> Result<Option<SessionInfo>, StoreError> {
    const DOING: &str = "find a project's latest session";
    let project = path_text(project)?;
    let conn = store.conn(DOING).await?;
    let sql = concat!(
        select_info!(),
        "WHERE s.project_dir = $1 ORDER BY s.updated_at DESC LIMIT 1"
    );
    Ok(infos(&conn, DOING, sql, &[&project])
        .await?
        .into_iter()
        .next())
}

pub(super) async fn history(store: &PgStore, session: &str) -> Result<History, StoreError> {
    const DOING: &str = "read a session's history";
    let conn = store.conn(DOING).await?;
    let sql = "SELECT m.id, m.content, s.id FROM sessions s
               LEFT JOIN turns t ON t.session_id = s.id AND NOT t.undone
               LEFT JOIN messages m ON m.turn_id = t.id
               WHERE s.id = $1 ORDER BY t.seq, m.seq";
    let rows = conn.rows(DOING, sql, &[&session]).await?;
    if rows.is_empty() {
        return Err(StoreError::NotFound(session.to_owned()));
    }
    let mut history = History::new();
    for row in &rows {
        let c = Cols::of(row, &conn, DOING);
        if let (Some(id), Some(content)) = (c.at::<Option<i64>>(0)?, c.at::<Option<String>>(1)?) {
            let message: Message = from_json(&content, || format!("message {id}"))?;
            history.push(message);
        }
    }
    Ok(history)
}

pub(super) async fn turn_ids(store: &PgStore, session: &str) -> Result<Vec<TurnId>, StoreError> {
    const DOING: &str = "list a session's turns";
    let conn = store.conn(DOING).await?;
    let sql = "SELECT id FROM turns WHERE session_id = $1 ORDER BY seq";
    let rows = conn.rows(DOING, sql, &[&session]).await?;
    rows.iter()
        .map(|row| Cols::of(row, &conn, DOING).at(0).map(TurnId))
        .collect()
}

const TURNS: &str = "
SELECT t.id, t.seq, t.undone, t.usage, t.model, t.agent, t.started_at, t.finished_at, t.status
FROM sessions s LEFT JOIN turns t ON t.session_id = s.id WHERE s.id = $1 ORDER BY t.seq";
const SESSION_MESSAGES: &str = "
SELECT m.turn_id, m.id, m.content FROM messages m JOIN turns t ON t.id = m.turn_id
WHERE t.session_id = $1 ORDER BY t.seq, m.seq";
const SESSION_CHANGES: &str = "
SELECT f.turn_id, f.path, f.before, f.after_hash, f.restorable
FROM file_changes f JOIN turns t ON t.id = f.turn_id
WHERE t.session_id = $1 ORDER BY t.seq, f.path";

pub(super) async fn turns(store: &PgStore, session: &str) -> Result<Vec<StoredTurn>, StoreError> {
    const DOING: &str = "read a session's turns";
    let conn = store.conn(DOING).await?;
    let [turns, messages, changes] = consistent(
        &conn,
        DOING,
        [TURNS, SESSION_MESSAGES, SESSION_CHANGES],
        &session,
    )
    .await?;
    if turns.is_empty() {
        return Err(StoreError::NotFound(session.to_owned()));
    }
    let mut messages = (messages.iter())
        .map(|row| message(row, &conn, DOING))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .peekable();
    let mut changes = (changes.iter())
        .map(|row| change(row, &conn, DOING))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .peekable();
    let mut stored = Vec::new();
    for row in &turns {
        let c = Cols::of(row, &conn, DOING);
        let Some(id) = c.at::<Option<i64>>(0)? else {
            break; // the session has no turns
        };
        let own = take_turn(&mut messages, id);
        let file_changes = take_turn(&mut changes, id);
        let row = TurnRow {
            id,
            seq: c.at(1)?,
            undone: c.at(2)?,
            usage: c.at(3)?,
            model: c.at(4)?,
            agent: c.at(5)?,
            started_at: c.at(6)?,
            finished_at: c.at(7)?,
            status: c.at(8)?,
        };
        stored.push(row.decode(own, || Ok(file_changes))?);
    }
    Ok(stored)
}

const UNDOABLE: &str = "
SELECT t.id, t.seq FROM sessions s LEFT JOIN turns t
  ON t.id = (SELECT id FROM turns WHERE session_id = s.id AND NOT undone
             ORDER BY seq DESC LIMIT 1)
WHERE s.id = $1";
const UNDOABLE_MESSAGES: &str = "
SELECT m.turn_id, m.id, m.content FROM messages m
WHERE m.turn_id = (SELECT id FROM turns WHERE session_id = $1 AND NOT undone
                   ORDER BY seq DESC LIMIT 1)
ORDER BY m.seq";
const UNDOABLE_CHANGES: &str = "
SELECT f.turn_id, f.path, f.before, f.after_hash, f.restorable FROM file_changes f
WHERE f.turn_id = (SELECT id FROM turns WHERE session_id = $1 AND NOT undone
                   ORDER BY seq DESC LIMIT 1)
ORDER BY f.path";

pub(super) async fn last_undoable_turn(
    store: &PgStore,
    session: &str,
) -> Result<Option<UndoableTurn>, StoreError> {
    const DOING: &str = "find the last undoable turn";
    let conn = store.conn(DOING).await?;
    let queries = [UNDOABLE, UNDOABLE_MESSAGES, UNDOABLE_CHANGES];
    let [turn, messages, changes] = consistent(&conn, DOING, queries, &session).await?;
    let Some(row) = turn.first() else {
        return Err(StoreError::NotFound(session.to_owned()));
    };
    let c = Cols::of(row, &conn, DOING);
    let (Some(id), Some(seq)) = (c.at::<Option<i64>>(0)?, c.at::<Option<i64>>(1)?) else {
        return Ok(None);
    };
    Ok(Some(UndoableTurn {
        id: TurnId(id),
        seq,
        file_changes: (changes.iter())
            .map(|row| change(row, &conn, DOING).map(|(_, c)| c))
            .collect::<Result<_, _>>()?,
        messages: (messages.iter())
            .map(|row| message(row, &conn, DOING).map(|(_, m)| m))
            .collect::<Result<_, _>>()?,
    }))
}

/// Three queries of one session, as one snapshot, in one round trip.
async fn consistent(
    conn: &Conn<'_>,
    doing: &str,
    sql: [&str; 3],
    session: &&str,
) -> Result<[Vec<Row>; 3], StoreError> {
    let [a, b, c] = sql;
    let (a, b, c) = futures_util::future::try_join3(
        conn.prepare(doing, a),
        conn.prepare(doing, b),
        conn.prepare(doing, c),
    )
    .await?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [session];
    let steps = vec![
        conn.step_begin(BEGIN_READ),
        conn.step(&a, &params),
        conn.step(&b, &params),
        conn.step(&c, &params),
        conn.step_commit(),
    ];
    match pipeline(steps).await {
        Ok(answers) => {
            conn.committed();
            let mut answers = answers.into_iter().skip(1);
            let mut next = || answers.next().unwrap_or_default();
            Ok([next(), next(), next()])
        }
        Err(e) => {
            let error = conn.shared.teller.db(doing, e);
            Err(conn.rollback(error).await)
        }
    }
}

/// A (turn id, message) row.
fn message(row: &Row, conn: &Conn<'_>, doing: &str) -> Result<(i64, Message), StoreError> {
    let c = Cols::of(row, conn, doing);
    let (turn, id, content): (i64, i64, String) = (c.at(0)?, c.at(1)?, c.at(2)?);
    Ok((turn, from_json(&content, || format!("message {id}"))?))
}

/// A (turn id, file change) row.
fn change(row: &Row, conn: &Conn<'_>, doing: &str) -> Result<(i64, FileChange), StoreError> {
    let c = Cols::of(row, conn, doing);
    Ok((
        c.at(0)?,
        FileChange {
            path: c.at(1)?,
            before: c.at(2)?,
            after_hash: c.at(3)?,
            restorable: c.at(4)?,
        },
    ))
}
