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
//! line. Stored responses belong to the key that made them: another key's id does not exist.
//!
//! Durable before acknowledged: the response (and its turn) is committed before the caller
//! is told its id: before the 200, or before `response.completed`. When that write fails the
//! caller gets a 503 with `Retry-After` in OpenAI's envelope (no id), or, streaming, the
//! stream ends in `response.failed` (the id it carries was never completed, and a GET of it
//! is 404 once the store answers). The turn may be kept even so when only the response row
//! failed: the caller was told nothing of it. Nothing of a conversation is kept in the
//! process: every read goes to the store, so a conversation started on one server continues
//! on any other sharing it. A store that cannot be reached while reading (a GET, a
//! `previous_response_id`) is a 503 with `Retry-After`, never a 404: "not found" means not
//! found. A missing response answers as OpenAI does: a GET or DELETE 404 `Response with id
//! '…' not found.` (code `null`), a `previous_response_id` 400
//! `previous_response_not_found` (as recorded from api.openai.com).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use qore_core::{History, Message, Role, StreamOutcome};
use qore_store::{
    NewResponse, NewSession, ResponseRecord, Store, StoreError, TurnRecord, TurnStatus,
};

use crate::answer::{answer, Prepare};
use crate::dialect::openai_responses::response::response_object;
use crate::exchange::After;
use crate::gate::Caller;
use crate::respond::error_response;
use crate::state::{App, RESPONSES};
use crate::{ErrorKind, Inbound, ReplyMeta, ServeError};

/// `POST /v1/responses`.
pub async fn create(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    let kept = app.clone();
    let prepare: Prepare =
        Box::new(move |inbound, caller| Box::pin(prepare(kept, inbound, caller)));
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

async fn prepare(
    app: Arc<App>,
    mut inbound: Inbound,
    caller: Caller,
) -> Result<(Inbound, Option<After>), ServeError> {
    // What this request brings: its input, less the instructions (never stored).
    let (system, new_input): (Vec<Message>, Vec<Message>) =
        (inbound.history.iter().cloned()).partition(|m| m.role == Role::System);
    let point = match &inbound.previous_response_id {
        Some(id) => {
            let record = owned(&app, id, &caller, no_previous).await?;
            let point = point_of(&record)?;
            let mut messages = system;
            messages.extend(history_to(&app, &point).await?);
            messages.extend(new_input.iter().cloned());
            inbound.history = History::from(messages);
            point
        }
        None => Point::default(),
    };
    if !inbound.store {
        return Ok((inbound, None));
    }
    let key_id = caller.key_id.clone().unwrap_or_default();
    let model = inbound.model.clone();
    let after: After = Box::new(move |outcome: StreamOutcome, meta: ReplyMeta| {
        Box::pin(async move {
            let StreamOutcome::Finished {
                message,
                stop_reason,
                usage,
            } = outcome
            else {
                return Ok(None);
            };
            let object = response_object(
                &meta,
                std::slice::from_ref(&message),
                &usage,
                stop_reason.as_ref(),
            );
            let mut open = point.pending.clone();
            open.extend(new_input);
            open.push(message);
            let response = Answered {
                id: &meta.id,
                key_id: &key_id,
                model: &model,
                usage: &usage,
                object,
            };
            let store = app.gate.store();
            save(&**store, &point, open, response).await.map_err(|err| {
                tracing::warn!(
                    "response {} not stored (answered as failed): {err}",
                    meta.id
                );
                app.gate.store_failed("storing a response", &err)
            })
        })
    });
    Ok((inbound, Some(after)))
}

/// A response to store, as answered.
struct Answered<'a> {
    id: &'a str,
    key_id: &'a str,
    model: &'a str,
    usage: &'a qore_core::Usage,
    object: serde_json::Value,
}

/// Write the response: a whole turn appended (or a new session), else kept as pending; the
/// session it names, for the request log.
async fn save(
    store: &dyn Store,
    point: &Point,
    open: Vec<Message>,
    response: Answered<'_>,
) -> Result<Option<String>, StoreError> {
    if open.is_empty() {
        return Ok(None);
    }
    let turn = whole_turn(&open, response.model, response.usage);
    let object = response.object.to_string();
    let Some(turn) = turn else {
        let pending = serde_json::to_string(&open).unwrap_or_else(|_| "[]".into());
        let new = NewResponse {
            id: response.id,
            key_id: response.key_id,
            session_id: point.session.as_deref(),
            turn_id: point.turn,
            pending: Some(&pending),
            object: &object,
        };
        store.put_response(&new).await?;
        return Ok(point.session.clone());
    };
    let session = session_for(store, point, response.model).await?;
    let turn_id = store.append_turn(&session, &turn).await?;
    let new = NewResponse {
        id: response.id,
        key_id: response.key_id,
        session_id: Some(&session),
        turn_id: Some(turn_id),
        pending: None,
        object: &object,
    };
    store.put_response(&new).await?;
    Ok(Some(session))
}

/// The session a new turn after `point` goes to: its own when `point` is its last turn,
/// else a new one (holding the turns up to `point`, linked to the original).
async fn session_for(store: &dyn Store, point: &Point, model: &str) -> Result<String, StoreError> {
    let new = |parent: Option<String>| NewSession {
        agent: None,
        model: Some(model.to_owned()),
        parent_id: parent,
        ..NewSession::default()
    };
    let Some(session) = &point.session else {
        return store.create_session(&new(None)).await;
    };
    let ids = store.turn_ids(session).await?;
    if ids.last() == point.turn.as_ref() || (point.turn.is_none() && ids.is_empty()) {
        return Ok(session.clone());
    }
    let turns = store.turns(session).await?;
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
    let import = qore_store::SessionImport {
        session: new(Some(session.clone())),
        title: None,
        created_at: None,
        turns: kept,
    };
    store.import_session(&import).await
}

/// The stored response `id`, if `caller` made it (else `missing`: another key's id does not
/// exist).
async fn owned(
    app: &App,
    id: &str,
    caller: &Caller,
    missing: fn(&str) -> ServeError,
) -> Result<ResponseRecord, ServeError> {
    match app.gate.store().response(id).await {
        Ok(Some(record)) if record.key_id == caller.key_id.clone().unwrap_or_default() => {
            Ok(record)
        }
        Ok(_) => Err(missing(id)),
        Err(err) => Err(app.gate.store_failed("reading a stored response", &err)),
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
async fn history_to(app: &App, point: &Point) -> Result<Vec<Message>, ServeError> {
    let mut messages = Vec::new();
    if let (Some(session), Some(turn)) = (&point.session, point.turn) {
        let turns = (app.gate.store().turns(session).await)
            .map_err(|err| app.gate.store_failed("reading a conversation", &err))?;
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
    match find(&app, &headers, &id).await {
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
    if let Err(error) = find(&app, &headers, &id).await {
        return error_response(&RESPONSES, &error);
    }
    if let Err(err) = app.gate.store().delete_response(&id).await {
        let error = app.gate.store_failed("deleting a stored response", &err);
        return error_response(&RESPONSES, &error);
    }
    axum::Json(serde_json::json!({"id": id, "object": "response", "deleted": true})).into_response()
}

async fn find(app: &App, headers: &HeaderMap, id: &str) -> Result<ResponseRecord, ServeError> {
    let caller = app.gate.authenticate(headers).await?;
    owned(app, id, &caller, no_response).await
}

/// A GET or DELETE of a response that does not exist, as api.openai.com answers it.
pub(crate) fn no_response(id: &str) -> ServeError {
    ServeError::new(
        ErrorKind::NotFound,
        format!("Response with id '{id}' not found."),
    )
    .with_code(None)
}

/// A `previous_response_id` that does not exist, as api.openai.com answers it (a 400).
pub(crate) fn no_previous(id: &str) -> ServeError {
    let error = ServeError::invalid(
        "previous_response_id",
        format!("Previous response with id '{id}' not found."),
    );
    error.with_code(Some("previous_response_not_found"))
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
