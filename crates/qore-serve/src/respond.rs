//! The helpers every handler answers with: [`error_response`] (a `ServeError` in the
//! caller's dialect, with its status and `Retry-After`), [`read_body`] (the body under the
//! limit: 413 past it, 408 past the listener's body deadline) and [`now_secs`].

use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::dialect::Dialect;
use crate::{ErrorKind, ServeError};

/// `error` in `dialect`'s envelope, with its status and `Retry-After`.
pub fn error_response(dialect: &dyn Dialect, error: &ServeError) -> Response {
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, axum::Json(dialect.error_body(error))).into_response();
    if let Some(seconds) = error.retry_after {
        if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
            response.headers_mut().insert("retry-after", value);
        }
    }
    response
}

/// The body, or 413 past `limit` bytes, or 408 past the listener's body deadline.
pub async fn read_body(body: Body, limit: usize) -> Result<bytes::Bytes, ServeError> {
    axum::body::to_bytes(body, limit).await.map_err(|err| {
        if let Some(late) = crate::listen::body_deadline(&err) {
            return ServeError::new(ErrorKind::InvalidRequest, late.to_string()).with_status(408);
        }
        ServeError::new(
            ErrorKind::TooLarge,
            format!("the request body is over the limit of {limit} bytes"),
        )
    })
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
