//! Responses with `store`: a response id names a stored turn (being written).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;

use crate::app::{answer, error_response, App, RESPONSES};
use crate::{ErrorKind, ServeError};

pub async fn create(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    answer(app, &RESPONSES, headers, body, |_, _| Ok(None)).await
}

pub async fn retrieve(Path(id): Path<String>) -> Response {
    let error = ServeError::new(ErrorKind::NotFound, format!("no stored response {id:?}"));
    error_response(&RESPONSES, &error)
}

pub async fn delete(Path(id): Path<String>) -> Response {
    let error = ServeError::new(ErrorKind::NotFound, format!("no stored response {id:?}"));
    error_response(&RESPONSES, &error)
}
