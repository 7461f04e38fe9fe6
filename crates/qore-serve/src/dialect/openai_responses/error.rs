//! Errors in OpenAI's words: the HTTP envelope `{"error": {"message", "type", "param",
//! "code"}}` (the same as Chat Completions'), and the `error` of a `failed` response
//! (`{"code", "message"}`), which is what a stream that fails after its first byte carries
//! in `response.failed`. Codes are the ones OpenAI's clients act on
//! (`context_length_exceeded`, `rate_limit_exceeded`, `invalid_api_key` …).

use serde_json::{json, Value};

use crate::{ErrorKind, ServeError};

/// OpenAI's `type` and `code` for a kind of failure.
pub fn type_and_code(kind: ErrorKind) -> (&'static str, Option<&'static str>) {
    match kind {
        ErrorKind::InvalidRequest => ("invalid_request_error", None),
        ErrorKind::ContextLength => ("invalid_request_error", Some("context_length_exceeded")),
        ErrorKind::Authentication => ("invalid_request_error", Some("invalid_api_key")),
        ErrorKind::Permission => ("invalid_request_error", Some("model_not_permitted")),
        ErrorKind::NotFound => ("invalid_request_error", Some("not_found")),
        ErrorKind::TooLarge => ("invalid_request_error", Some("request_too_large")),
        ErrorKind::RateLimit => ("rate_limit_error", Some("rate_limit_exceeded")),
        ErrorKind::Overloaded => ("server_error", Some("server_overloaded")),
        ErrorKind::Upstream => ("server_error", Some("upstream_error")),
        ErrorKind::Internal => ("server_error", None),
    }
}

/// The HTTP error body.
pub fn error_body(error: &ServeError) -> Value {
    let (kind, code) = type_and_code(error.kind);
    json!({"error": {
        "message": error.message,
        "type": kind,
        "param": error.param,
        "code": code,
    }})
}

/// The `error` of a `failed` response: a code from the set the Responses API uses there
/// (`server_error`, `rate_limit_exceeded`, `invalid_prompt`, `context_length_exceeded`).
pub fn failed_error(error: &ServeError) -> Value {
    let code = match error.kind {
        ErrorKind::RateLimit => "rate_limit_exceeded",
        ErrorKind::ContextLength => "context_length_exceeded",
        ErrorKind::InvalidRequest => "invalid_prompt",
        _ => "server_error",
    };
    json!({"code": code, "message": error.message})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_name_type_param_and_code() {
        let cases = [
            (
                ServeError::invalid("input[0].content", "bad"),
                json!({"error": {"message": "bad", "type": "invalid_request_error",
                    "param": "input[0].content", "code": null}}),
            ),
            (
                ServeError::new(ErrorKind::ContextLength, "too long"),
                json!({"error": {"message": "too long", "type": "invalid_request_error",
                    "param": null, "code": "context_length_exceeded"}}),
            ),
            (
                ServeError::new(ErrorKind::RateLimit, "slow down"),
                json!({"error": {"message": "slow down", "type": "rate_limit_error",
                    "param": null, "code": "rate_limit_exceeded"}}),
            ),
        ];
        for (error, expected) in cases {
            assert_eq!(error_body(&error), expected);
        }
        let failed = failed_error(&ServeError::new(ErrorKind::Upstream, "boom"));
        assert_eq!(failed, json!({"code": "server_error", "message": "boom"}));
    }
}
