//! The endpoints beside chat: `/v1/models` (in the caller's dialect: Anthropic's shape when
//! the request carries `anthropic-version`, OpenAI's otherwise), `/readyz` (the store
//! answers: 503 while it does not, 200 again once it does, without a restart),
//! `/v1/messages/count_tokens`, and `/v1/completions` (fill-in-the-middle).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::dialect::Dialect;
use crate::respond::{error_response, now_secs, read_body};
use crate::route::is_chat_agent;
use crate::state::{App, MESSAGES};

/// What the caller's key may use: the chat agents, the configured `provider/model` names
/// and the local model.
pub async fn models(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let caller = match app.gate.authenticate(&headers).await {
        Ok(caller) => caller,
        Err(error) => return error_response(dialect_of(&headers), &error),
    };
    let config = app.manager.config();
    let mut names: Vec<String> = (config.catalog.all())
        .filter(|a| !a.hidden && is_chat_agent(&app.manager, &a.name))
        .map(|a| a.name.clone())
        .collect();
    names.extend(app.settings.models.iter().cloned());
    names.push("local/default".to_owned());
    names.retain(|name| app.gate.permits(&caller, name));
    names.dedup();
    let created = now_secs();
    if headers.contains_key("anthropic-version") {
        let data: Vec<_> = (names.iter())
            .map(|id| json!({"type": "model", "id": id, "display_name": id, "created_at": "1970-01-01T00:00:00Z"}))
            .collect();
        return axum::Json(json!({
            "data": data,
            "has_more": false,
            "first_id": names.first(),
            "last_id": names.last(),
        }))
        .into_response();
    }
    let data: Vec<_> = (names.iter())
        .map(|id| json!({"id": id, "object": "model", "created": created, "owned_by": "qore"}))
        .collect();
    axum::Json(json!({"object": "list", "data": data})).into_response()
}

fn dialect_of(headers: &HeaderMap) -> &'static dyn Dialect {
    match headers.contains_key("anthropic-version") {
        true => &MESSAGES,
        false => &crate::state::CHAT,
    }
}

/// 200 when the store answers, 503 when it does not (or while draining).
pub async fn ready(State(app): State<Arc<App>>) -> Response {
    if app.stopping.is_cancelled() {
        return (StatusCode::SERVICE_UNAVAILABLE, "draining\n").into_response();
    }
    match app.gate.store_answers().await {
        Ok(()) => "ready\n".into_response(),
        Err(message) => (StatusCode::SERVICE_UNAVAILABLE, format!("{message}\n")).into_response(),
    }
}

/// `POST /v1/messages/count_tokens`: the heuristic count qore's sessions use.
pub async fn count_tokens(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    let dialect: &dyn Dialect = &MESSAGES;
    if let Err(error) = app.gate.authenticate(&headers).await {
        return error_response(dialect, &error);
    }
    let bytes = match read_body(body, app.settings.body_limit).await {
        Ok(bytes) => bytes,
        Err(error) => return error_response(dialect, &error),
    };
    match crate::dialect::anthropic::count_tokens::respond(&bytes, &headers) {
        Ok(answer) => axum::Json(answer).into_response(),
        Err(error) => error_response(dialect, &error),
    }
}
