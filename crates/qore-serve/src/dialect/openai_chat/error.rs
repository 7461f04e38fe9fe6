//! [`ServeError`] -> OpenAI's error envelope, `{"error": {"message", "type", "param",
//! "code"}}`, the same before the first byte (with `error.status`) and inside a stream
//! (`data: {"error": …}`, on which OpenAI's SDKs raise `APIError`).
//!
//! The names follow what api.openai.com answers in the recorded traffic
//! (`../shared/fixtures`): every 4xx has type `invalid_request_error` and is told apart by
//! `code` (`invalid_api_key` for a 401, `model_not_found` for a 404,
//! `context_length_exceeded`); a 429 is `rate_limit_exceeded` (type `rate_limit_error`), a
//! 5xx `server_error`. OpenAI's SDKs pick their exception by status, not by these names.

use serde_json::{json, Value};

use crate::{ErrorKind, ServeError};

/// The envelope for `error`.
pub fn body(error: &ServeError) -> Value {
    json!({ "error": object(error) })
}

/// The inner error object: `message`, `type`, `param`, `code`.
pub fn object(error: &ServeError) -> Value {
    let (kind, code) = names(error.kind);
    let code = error.code.unwrap_or(code);
    json!({
        "message": error.message,
        "type": kind,
        "param": error.param,
        "code": code,
    })
}

/// OpenAI's `type` and `code` for a kind of failure.
pub fn names(kind: ErrorKind) -> (&'static str, Option<&'static str>) {
    match kind {
        ErrorKind::InvalidRequest => ("invalid_request_error", None),
        ErrorKind::ContextLength => ("invalid_request_error", Some("context_length_exceeded")),
        ErrorKind::Authentication => ("invalid_request_error", Some("invalid_api_key")),
        ErrorKind::Permission => ("invalid_request_error", Some("permission_denied")),
        ErrorKind::NotFound => ("invalid_request_error", Some("model_not_found")),
        ErrorKind::TooLarge => ("invalid_request_error", Some("request_too_large")),
        ErrorKind::RateLimit => ("rate_limit_error", Some("rate_limit_exceeded")),
        ErrorKind::Overloaded => ("server_error", Some("server_is_overloaded")),
        ErrorKind::Upstream => ("server_error", Some("upstream_error")),
        ErrorKind::Internal => ("server_error", None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_openai_names_and_the_envelope_shape() {
        let cases = [
            (
                ErrorKind::InvalidRequest,
                "invalid_request_error",
                Value::Null,
            ),
            (
                ErrorKind::ContextLength,
                "invalid_request_error",
                json!("context_length_exceeded"),
            ),
            (
                ErrorKind::Authentication,
                "invalid_request_error",
                json!("invalid_api_key"),
            ),
            (
                ErrorKind::Permission,
                "invalid_request_error",
                json!("permission_denied"),
            ),
            (
                ErrorKind::NotFound,
                "invalid_request_error",
                json!("model_not_found"),
            ),
            (
                ErrorKind::TooLarge,
                "invalid_request_error",
                json!("request_too_large"),
            ),
            (
                ErrorKind::RateLimit,
                "rate_limit_error",
                json!("rate_limit_exceeded"),
            ),
            (
                ErrorKind::Overloaded,
                "server_error",
                json!("server_is_overloaded"),
            ),
            (ErrorKind::Upstream, "server_error", json!("upstream_error")),
            (ErrorKind::Internal, "server_error", Value::Null),
        ];
        for (kind, type_name, code) in cases {
            let body = body(&ServeError::new(kind, "went wrong"));
            assert_eq!(body["error"]["type"], type_name, "{kind:?}");
            assert_eq!(body["error"]["code"], code, "{kind:?}");
            assert_eq!(body["error"]["message"], "went wrong");
            assert!(body["error"]["param"].is_null());
            assert_eq!(body.as_object().unwrap().len(), 1);
        }
        let body = body(&ServeError::invalid("messages[2].content", "bad"));
        assert_eq!(body["error"]["param"], "messages[2].content");
    }

    #[test]
    fn the_client_reads_the_envelope_back() {
        use qore_client::Protocol as _;
        let error = ServeError::new(ErrorKind::RateLimit, "slow down");
        let text = body(&error).to_string();
        let info = qore_client::protocols::openai_chat::OpenAiChat::default().error(429, &text);
        assert!(info.message.contains("slow down"), "{}", info.message);
        assert_eq!(info.status(), Some(429));
    }
}
