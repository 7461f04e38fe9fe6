//! Conversations kept in the store: Responses with `store` (the default) and
//! `previous_response_id`, `GET`/`DELETE /v1/responses/{id}`, and Chat Completions or
//! Messages requests that name a session with `x-qore-session`.
//!
//! A response id names a point in a stored conversation: the session's turns up to one turn,
//! then, when the response ended in calls of the caller's tools, the messages of the turn
//! still open (`pending`: the store keeps only whole turns). Continuing from it prepends that
//! history to the request's input; a response whose reply closes the turn appends the whole
//! turn. Continuing from an earlier response than the session's last turn starts a new
//! session (linked by `parent_id`) holding the turns up to it, so every session stays one
//! line. Stored responses belong to the key that made them: another key's id is 404.
//!
//! The store is written before the reply's last byte goes out, so a caller that continues at
//! once finds its response.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use qore_core::{History, Message, Role, StreamOutcome};
use qore_session::SharedStore;
use qore_store::{NewResponse, NewSession, ResponseRecord, Store, TurnRecord, TurnStatus};

use crate::app::{answer, error_response, App, RESPONSES};
use crate::dialect::openai_responses::response::response_object;
use crate::exchange::After;
use crate::gate::Caller;
use crate::{ErrorKind, Inbound, ReplyMeta, ServeError};

/// `POST /v1/responses`.
pub async fn create(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    let Some(store) = app.manager.store().cloned() else {
        return answer(app, &RESPONSES, headers, body, |_, _| Ok(None)).await;
    };
    let prepare = move |inbound: &mut Inbound, caller: &Caller| prepare(&store, inbound, caller);
    answer(app, &RESPONSES, headers, body, prepare).await
}

/// Where a stored response left its conversation.
#[derive(Debug, Clone, Default)]
struct Point {
    session: Option<String>,
    /// The last whole turn (`None`: none yet).
    turn: Option<qore_store::TurnId>,
    /// Messages of the open turn after it.
    pending: Vec<Message>,
}

fn prepare(
    store: &SharedStore,
    inbound: &mut Inbound,
    caller: &Caller,
) -> Result<Option<After>, ServeError> {
    // What this request brings: its input, less the instructions (never stored).
    let (system, new_input): (Vec<Message>, Vec<Message>) =
        (inbound.history.iter().cloned()).partition(|m| m.role == Role::System);
    let point = match &inbound.previous_response_id {
        Some(id) => {
            let record = owned(store, id, caller)?;
            let point = point_of(&record)?;
            let mut messages = system;
            messages.extend(history_to(store, &point)?);
            messages.extend(new_input.iter().cloned());
            inbound.history = History::from(messages);
            point
        }
        None => Point::default(),
    };
    if !inbound.store {
        return Ok(None);
    }
    let store = store.clone();
    let key_id = caller.key_id.clone().unwrap_or_default();
    let model = inbound.model.clone();
    Ok(Some(Box::new(
        move |outcome: &StreamOutcome, meta: &ReplyMeta| {
            let StreamOutcome::Finished {
                message,
                stop_reason,
                usage,
            } = outcome
            else {
                return;
            };
            let object = response_object(
                meta,
                std::slice::from_ref(message),
                usage,
                stop_reason.as_ref(),
            );
            let mut open = point.pending.clone();
            open.extend(new_input);
            open.push(message.clone());
            let saved = tokio::task::block_in_place(|| {
                let mut store = store.lock().unwrap_or_else(|p| p.into_inner());
                save(
                    &mut store, &point, open, &meta.id, &key_id, &model, usage, object,
                )
            });
            if let Err(err) = saved {
                tracing::warn!("response {} not stored: {err}", meta.id);
            }
        },
    )))
}

/// Write the response: a whole turn appended (or a new session), else kept as pending.
#[allow(clippy::too_many_arguments)]
fn save(
    store: &mut Store,
    point: &Point,
    open: Vec<Message>,
    id: &str,
    key_id: &str,
    model: &str,
    usage: &qore_core::Usage,
    object: serde_json::Value,
) -> Result<(), qore_store::StoreError> {
    if open.is_empty() {
        return Ok(());
    }
    let turn = whole_turn(&open, model, usage);
    let object = object.to_string();
    let Some(turn) = turn else {
        let pending = serde_json::to_string(&open).unwrap_or_else(|_| "[]".into());
        return store
            .put_response(&NewResponse {
                id,
                key_id,
                session_id: point.session.as_deref(),
                turn_id: point.turn,
                pending: Some(&pending),
                object: &object,
            })
            .map(|_| ());
    };
    let session = session_for(store, point, model)?;
    let turn_id = store.append_turn(&session, &turn)?;
    store
        .put_response(&NewResponse {
            id,
            key_id,
            session_id: Some(&session),
            turn_id: Some(turn_id),
            pending: None,
            object: &object,
        })
        .map(|_| ())
}

/// The session a new turn after `point` goes to: its own when `point` is its last turn,
/// else a new one (holding the turns up to `point`, linked to the original).
fn session_for(
    store: &mut Store,
    point: &Point,
    model: &str,
) -> Result<String, qore_store::StoreError> {
    let new = |parent: Option<String>| NewSession {
        agent: None,
        model: Some(model.to_owned()),
        parent_id: parent,
        ..NewSession::default()
    };
    let Some(session) = &point.session else {
        return store.create_session(&new(None));
    };
    let ids = store.turn_ids(session)?;
    if ids.last() == point.turn.as_ref() || (point.turn.is_none() && ids.is_empty()) {
        return Ok(session.clone());
    }
    let turns = store.turns(session)?;
    let mut kept = Vec::new();
    for turn in turns {
        let last = Some(turn.id) == point.turn;
        kept.push(qore_store::ImportTurn {
            record: turn.record,
            undone: turn.undone,
        });
        if last {
            break;
        }
    }
    store.import_session(&qore_store::SessionImport {
        session: new(Some(session.clone())),
        title: None,
        created_at: None,
        turns: kept,
    })
}

/// The stored response `id`, if `caller` made it (else 404: another key's id does not exist).
fn owned(store: &SharedStore, id: &str, caller: &Caller) -> Result<ResponseRecord, ServeError> {
    let found = {
        let store = store.lock().unwrap_or_else(|p| p.into_inner());
        store.response(id)
    };
    let missing = || {
        let mut error = ServeError::new(ErrorKind::NotFound, format!("no stored response {id:?}"));
        error.param = Some("previous_response_id".into());
        error
    };
    match found {
        Ok(Some(record)) if record.key_id == caller.key_id.clone().unwrap_or_default() => {
            Ok(record)
        }
        Ok(_) => Err(missing()),
        Err(err) => Err(
            ServeError::new(ErrorKind::Overloaded, format!("the store: {err}")).with_retry_after(1),
        ),
    }
}

fn point_of(record: &ResponseRecord) -> Result<Point, ServeError> {
    let pending = match &record.pending {
        Some(text) => serde_json::from_str(text).map_err(|err| {
            ServeError::new(
                ErrorKind::Internal,
                format!("stored response {:?} is unreadable: {err}", record.id),
            )
        })?,
        None => Vec::new(),
    };
    Ok(Point {
        session: record.session_id.clone(),
        turn: record.turn_id,
        pending,
    })
}

/// The conversation up to `point`: whole turns up to its turn (undone ones skipped), then
/// its pending messages.
fn history_to(store: &SharedStore, point: &Point) -> Result<Vec<Message>, ServeError> {
    let mut messages = Vec::new();
    if let (Some(session), Some(turn)) = (&point.session, point.turn) {
        let turns = {
            let store = store.lock().unwrap_or_else(|p| p.into_inner());
            store.turns(session)
        };
        let turns = turns.map_err(|err| {
            ServeError::new(ErrorKind::Overloaded, format!("the store: {err}")).with_retry_after(1)
        })?;
        for stored in turns {
            if !stored.undone {
                if let Ok(kept) = stored.record.checked_messages() {
                    messages.extend(kept.into_iter().cloned());
                }
            }
            if stored.id == turn {
                break;
            }
        }
    }
    messages.extend(point.pending.iter().cloned());
    Ok(messages)
}

/// `GET /v1/responses/{id}`: the response as it was answered.
pub async fn retrieve(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    match find(&app, &headers, &id) {
        Ok(record) => match serde_json::from_str::<serde_json::Value>(&record.object) {
            Ok(object) => axum::Json(object).into_response(),
            Err(err) => error_response(
                &RESPONSES,
                &ServeError::new(ErrorKind::Internal, err.to_string()),
            ),
        },
        Err(error) => error_response(&RESPONSES, &error),
    }
}

/// `DELETE /v1/responses/{id}`: the id is forgotten (the session's turns stay).
pub async fn delete(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(error) = find(&app, &headers, &id) {
        return error_response(&RESPONSES, &error);
    }
    if let Some(store) = app.manager.store() {
        let store = store.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(err) = store.delete_response(&id) {
            return error_response(
                &RESPONSES,
                &ServeError::new(ErrorKind::Overloaded, format!("the store: {err}")),
            );
        }
    }
    axum::Json(serde_json::json!({"id": id, "object": "response", "deleted": true})).into_response()
}

fn find(app: &App, headers: &HeaderMap, id: &str) -> Result<ResponseRecord, ServeError> {
    let caller = app.gate.authenticate(headers)?;
    let Some(store) = app.manager.store() else {
        return Err(ServeError::new(
            ErrorKind::NotFound,
            format!("no stored response {id:?}"),
        ));
    };
    owned(store, id, &caller).map_err(|mut e| {
        e.param = None;
        e
    })
}

/// `open` as a finished turn (the first message opens it), `None` unless it is whole: a
/// prompt, then replies whose tool calls are all answered, ending in the answer.
pub(crate) fn whole_turn(
    open: &[Message],
    model: &str,
    usage: &qore_core::Usage,
) -> Option<TurnRecord> {
    let now = std::time::SystemTime::now();
    let (user, replies) = open.split_first()?;
    let turn = TurnRecord {
        user: user.clone(),
        replies: replies.to_vec(),
        usage: *usage,
        model: Some(model.to_owned()),
        agent: None,
        started_at: now,
        finished_at: now,
        status: TurnStatus::Finished,
        file_changes: Vec::new(),
    };
    turn.checked_messages().is_ok().then_some(turn)
}
