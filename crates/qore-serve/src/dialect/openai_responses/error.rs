//! Errors in OpenAI's words: the HTTP envelope `{"error": {"message", "type", "param",
//! "code"}}` (written by Chat Completions' `error.rs`: the same on both APIs), and the
//! `error` of a `failed` response (`{"code", "message"}`), which a stream that fails after
//! its first byte carries in `response.failed`, with a code OpenAI's clients act on
//! (`context_length_exceeded`, `rate_limit_exceeded` …).

use serde_json::{json, Value};

use crate::{ErrorKind, ServeError};

/// The HTTP error body: Chat Completions' envelope, the same on both OpenAI APIs.
pub fn error_body(error: &ServeError) -> Value {
    crate::dialect::openai_chat::error::body(error)
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
    use qore_client::protocols::openai_responses::OpenAiResponses as ClientResponses;
    use qore_client::Protocol as _;

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
        let text = error_body(&ServeError::new(ErrorKind::RateLimit, "slow down")).to_string();
        let info = ClientResponses::default().error(429, &text);
        assert!(info.message.contains("slow down"), "{}", info.message);
        let failed = failed_error(&ServeError::new(ErrorKind::Upstream, "boom"));
        assert_eq!(failed, json!({"code": "server_error", "message": "boom"}));
    }
}
