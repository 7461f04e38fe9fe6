//! Anthropic error envelopes: `{"type": "error", "error": {"type": "overloaded_error",
//! "message": "Overloaded"}, "request_id": ...}`, as the body of an HTTP error answer, as an
//! `error` event inside a 200 stream, or as a 200 whole body.
//!
//! Promises: the HTTP status and the body (or stream frame) are kept verbatim; the provider's
//! `error.type` becomes the error type and its `error.message` the message. Gateways that
//! send other shapes (`{"error": "text"}`, `{"error": {"message", "code"}}`, a top-level
//! `message`) are read too; a body with none of them is its own message.

use qore_core::{ErrorInfo, ProviderDetail};
use serde_json::Value;

use super::wire::WireError;
use crate::transport::http::http_error;

/// An HTTP error answer.
pub fn from_http(status: u16, body: &str) -> ErrorInfo {
    let (message, error_type) = match serde_json::from_str::<Value>(body) {
        Ok(value) => read_envelope(&value),
        Err(_) => (None, None),
    };
    http_error(status, body, message, error_type)
}

/// An error that arrived with a 200 answer: an `error` event (`raw` is its frame) or a whole
/// body that is an error envelope. No HTTP status: the answer's own was a success.
pub fn in_stream(error: Option<&WireError<'_>>, raw: &str) -> ErrorInfo {
    let error_type = error.and_then(|e| e.kind.non_empty()).map(str::to_owned);
    let message = error.and_then(|e| e.message.non_empty());
    let text = match (&error_type, message) {
        (Some(kind), Some(message)) => format!("{kind}: {message}"),
        (None, Some(message)) => message.to_owned(),
        (Some(kind), None) => kind.clone(),
        (None, None) => format!("the provider reported an error: {}", raw.trim()),
    };
    ErrorInfo::provider(text).with_detail(ProviderDetail {
        status: None,
        error_type,
        body: Some(raw.to_owned()),
    })
}

/// The message and type of an error envelope, whatever its shape.
fn read_envelope(value: &Value) -> (Option<String>, Option<String>) {
    let inner = match value.get("error") {
        Some(Value::String(text)) => return (Some(text.clone()), None),
        Some(inner @ Value::Object(_)) => inner,
        _ => value,
    };
    let text = |key: &str| match inner.get(key) {
        Some(Value::String(text)) if !text.is_empty() => Some(text.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let message = text("message");
    let error_type = text("type")
        .filter(|kind| kind != "error")
        .or_else(|| text("code"));
    (message, error_type)
}

#[cfg(test)]
mod tests {
    use super::*;
    use qore_core::ErrorCategory;

    #[test]
    fn reads_the_anthropic_envelope_and_keeps_status_and_body() {
        let body = r#"{"error":{"message":"API key is invalid.","type":"authentication_error"},"request_id":null,"type":"error"}"#;
        let err = from_http(401, body);
        assert_eq!(err.category, ErrorCategory::Auth);
        assert_eq!(err.message, "HTTP 401: API key is invalid.");
        let detail = err.provider.unwrap();
        assert_eq!(detail.status, Some(401));
        assert_eq!(detail.error_type.as_deref(), Some("authentication_error"));
        assert_eq!(detail.body.as_deref(), Some(body));

        let overloaded = from_http(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert_eq!(overloaded.category, ErrorCategory::Provider);
        assert_eq!(overloaded.message, "HTTP 529: Overloaded");
        assert_eq!(
            overloaded.provider.unwrap().error_type.as_deref(),
            Some("overloaded_error")
        );
    }

    #[test]
    fn reads_gateway_shapes_and_falls_back_to_the_body() {
        let gateway = from_http(402, r#"{"error":{"message":"no credits","code":402}}"#);
        assert_eq!(gateway.message, "HTTP 402: no credits");
        assert_eq!(gateway.provider.unwrap().error_type.as_deref(), Some("402"));
        assert_eq!(
            from_http(500, r#"{"error":"boom"}"#).message,
            "HTTP 500: boom"
        );
        assert_eq!(
            from_http(502, "<html>bad gateway</html>").message,
            "HTTP 502: <html>bad gateway</html>"
        );
    }

    #[test]
    fn an_error_in_a_200_answer_has_no_status() {
        let raw = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let wire: crate::protocols::anthropic::wire::StreamEvent<'_> =
            serde_json::from_str(raw).unwrap();
        let err = in_stream(wire.error.as_deref(), raw);
        assert_eq!(err.category, ErrorCategory::Provider);
        assert_eq!(err.message, "overloaded_error: Overloaded");
        let detail = err.provider.unwrap();
        assert_eq!(detail.status, None);
        assert_eq!(detail.error_type.as_deref(), Some("overloaded_error"));
        assert_eq!(detail.body.as_deref(), Some(raw));
        assert!(in_stream(None, "{}").message.contains("{}"));
    }
}
