//! Responses API errors: over HTTP and inside a stream.
//!
//! - HTTP: OpenAI and OpenRouter send `{"error": {"message", "type", "code", "param"}}`, the
//!   ChatGPT Codex backend `{"detail": "..."}`; the envelope reader is Chat Completions' (the
//!   same shapes), so the message, the type (else the code), the status and the verbatim
//!   body are kept.
//! - In a stream: an `error` event (`{"type": "error", "code", "message", "param"}`, or
//!   with the same fields nested under `error`), and `response.failed`, whose response
//!   carries `error: {"code", "message"}`. Both keep the provider's code as the error type
//!   and the frame as the body. Errors are rare, so they are read as `serde_json::Value`.

use qore_core::{ErrorInfo, ProviderDetail};
use serde_json::Value;

use crate::protocols::openai_chat;

/// An HTTP error answer.
pub fn from_http(status: u16, body: &str) -> ErrorInfo {
    openai_chat::error::from_http(status, body)
}

/// An `error` event (`frame` is its data).
pub fn in_stream(frame: &str) -> ErrorInfo {
    let value: Value = serde_json::from_str(frame).unwrap_or(Value::Null);
    let inner = value
        .get("error")
        .filter(|e| e.is_object())
        .unwrap_or(&value);
    let status = [&value, inner]
        .iter()
        .find_map(|v| v.get("status").and_then(Value::as_u64))
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (100..600).contains(s));
    build(inner, "the stream reported an error", status, frame)
}

/// The `error` of a response whose status is `failed` (`raw`: the frame or body).
pub fn failed(error: Option<&Value>, raw: &str) -> ErrorInfo {
    build(
        error.unwrap_or(&Value::Null),
        "the response failed",
        None,
        raw,
    )
}

fn build(inner: &Value, fallback: &str, status: Option<u16>, raw: &str) -> ErrorInfo {
    let text = |key: &str| match inner.get(key) {
        Some(Value::String(text)) if !text.is_empty() => Some(text.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let message = text("message").unwrap_or_else(|| fallback.to_owned());
    // An error event's own `type` is "error"; the code (else a nested type) says more.
    let error_type = text("code").or_else(|| text("type").filter(|t| t != "error"));
    ErrorInfo::provider(message).with_detail(ProviderDetail {
        status,
        error_type,
        body: Some(raw.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use qore_core::ErrorCategory;

    #[test]
    fn http_envelopes_keep_type_status_and_body() {
        let body = r#"{"error":{"code":"model_not_found","message":"The requested model 'x' does not exist.","param":"model","type":"invalid_request_error"}}"#;
        let error = from_http(400, body);
        assert_eq!(error.category, ErrorCategory::Provider);
        assert_eq!(
            error.message,
            "HTTP 400: The requested model 'x' does not exist."
        );
        let detail = error.provider.unwrap();
        assert_eq!(detail.status, Some(400));
        assert_eq!(detail.error_type.as_deref(), Some("invalid_request_error"));
        assert_eq!(detail.body.as_deref(), Some(body));
        let codex = from_http(
            401,
            r#"{"detail":"Could not parse your authentication token."}"#,
        );
        assert_eq!(codex.category, ErrorCategory::Auth);
        assert_eq!(
            codex.message,
            "HTTP 401: Could not parse your authentication token."
        );
    }

    #[test]
    fn error_events_flat_or_nested() {
        let flat = r#"{"type":"error","code":"rate_limit_exceeded","message":"Slow down","param":null,"sequence_number":3}"#;
        let error = in_stream(flat);
        assert_eq!(error.message, "Slow down");
        let detail = error.provider.unwrap();
        assert_eq!(detail.error_type.as_deref(), Some("rate_limit_exceeded"));
        assert_eq!(detail.status, None);
        assert_eq!(detail.body.as_deref(), Some(flat));
        let nested = r#"{"type":"error","status":429,"error":{"type":"usage_limit_reached","message":"Limit reached"}}"#;
        let error = in_stream(nested);
        assert_eq!(error.message, "Limit reached");
        assert_eq!(error.status(), Some(429));
        assert_eq!(
            error.provider.unwrap().error_type.as_deref(),
            Some("usage_limit_reached")
        );
        assert_eq!(
            in_stream("not json").message,
            "the stream reported an error"
        );
    }

    #[test]
    fn failed_responses_read_their_error() {
        let error = failed(
            Some(&serde_json::json!({"code": "server_error", "message": "The model failed."})),
            "frame",
        );
        assert_eq!(error.message, "The model failed.");
        assert_eq!(
            error.provider.unwrap().error_type.as_deref(),
            Some("server_error")
        );
        assert_eq!(failed(None, "frame").message, "the response failed");
    }
}
