//! Anthropic's error envelope: `{"type": "error", "error": {"type", "message"}}`, as the body
//! of an HTTP error answer and as an `event: error` frame inside a stream that already
//! started.
//!
//! Promises: every [`ErrorKind`] has Anthropic's own type name (`invalid_request_error`,
//! `authentication_error`, `permission_error`, `not_found_error`, `request_too_large`,
//! `rate_limit_error`, `api_error`, `overloaded_error`), so Anthropic's SDKs raise the
//! exception class they would for Anthropic itself; the message is the [`ServeError`]'s one
//! line, and a context overflow's starts with Anthropic's `prompt is too long` (Claude Code
//! tells an overflow by those words), whatever the upstream said.

use serde_json::{json, Value};

use crate::dialect::sse;
use crate::{ErrorKind, ServeError};

/// Anthropic's `error.type` for `kind`.
pub fn error_type(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::InvalidRequest | ErrorKind::ContextLength => "invalid_request_error",
        ErrorKind::Authentication => "authentication_error",
        ErrorKind::Permission => "permission_error",
        ErrorKind::NotFound => "not_found_error",
        ErrorKind::TooLarge => "request_too_large",
        ErrorKind::RateLimit => "rate_limit_error",
        ErrorKind::Overloaded => "overloaded_error",
        ErrorKind::Upstream | ErrorKind::Internal => "api_error",
    }
}

/// The envelope for `error` (the body of its HTTP answer and the data of its stream event).
pub fn body(error: &ServeError) -> Value {
    const OVERFLOW: &str = "prompt is too long";
    let message = match error.kind {
        ErrorKind::ContextLength if !error.message.starts_with(OVERFLOW) => {
            format!("{OVERFLOW}: {}", error.message)
        }
        _ => error.message.clone(),
    };
    json!({
        "type": "error",
        "error": {"type": error_type(error.kind), "message": message},
    })
}

/// Append the in-stream error event for `error`.
pub fn stream_event(error: &ServeError, out: &mut Vec<u8>) {
    sse::frame(out, Some("error"), &body(error));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_anthropics_type_name() {
        let table = [
            (ErrorKind::InvalidRequest, "invalid_request_error", 400),
            (ErrorKind::ContextLength, "invalid_request_error", 400),
            (ErrorKind::Authentication, "authentication_error", 401),
            (ErrorKind::Permission, "permission_error", 403),
            (ErrorKind::NotFound, "not_found_error", 404),
            (ErrorKind::TooLarge, "request_too_large", 413),
            (ErrorKind::RateLimit, "rate_limit_error", 429),
            (ErrorKind::Overloaded, "overloaded_error", 503),
            (ErrorKind::Upstream, "api_error", 502),
            (ErrorKind::Internal, "api_error", 500),
        ];
        for (kind, name, status) in table {
            let error = ServeError::new(kind, "went wrong");
            assert_eq!(error.status, status);
            let message = match kind {
                ErrorKind::ContextLength => "prompt is too long: went wrong",
                _ => "went wrong",
            };
            assert_eq!(
                body(&error),
                json!({"type": "error", "error": {"type": name, "message": message}})
            );
        }
        let said = ServeError::new(ErrorKind::ContextLength, "prompt is too long: 9001 > 8192");
        assert_eq!(
            body(&said)["error"]["message"],
            "prompt is too long: 9001 > 8192"
        );
    }

    #[test]
    fn the_stream_event_is_named_error() {
        let mut out = Vec::new();
        stream_event(&ServeError::new(ErrorKind::Overloaded, "busy"), &mut out);
        let text = String::from_utf8(out).unwrap();
        let data = text.strip_prefix("event: error\ndata: ").unwrap();
        let data = data.strip_suffix("\n\n").unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(data).unwrap(),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
        );
    }
}
