//! Chat Completions error envelopes.
//!
//! OpenAI and most compatible servers send `{"error": {"message", "type", "code"}}`;
//! some send `{"error": "text"}`, Mistral `{"object": "error", "message", "type"}`,
//! others `{"message": ...}` or `{"detail": ...}`. Whatever the shape, the status and the
//! body are kept verbatim.

use qore_core::ErrorInfo;
use serde_json::Value;

use crate::protocols::shared;
use crate::transport::http::http_error;

/// An HTTP error answer.
pub fn from_http(status: u16, body: &str) -> ErrorInfo {
    let (message, error_type) = match serde_json::from_str::<Value>(body) {
        Ok(value) => read_envelope(&value),
        Err(_) => (None, None),
    };
    http_error(status, body, message, error_type)
}

/// An error object that arrived inside a 200 stream (`data: {"error": ...}`).
pub fn in_stream(error: &Value, frame: &str) -> ErrorInfo {
    let envelope = serde_json::json!({ "error": error });
    let read = read_envelope(&envelope);
    shared::in_stream_error(error, frame, read, shared::code_status(error))
}

/// The message and type/code of an error envelope, whatever its shape.
pub fn read_envelope(value: &Value) -> (Option<String>, Option<String>) {
    let inner = match value.get("error") {
        Some(Value::String(text)) => return (Some(text.clone()), None),
        Some(inner @ Value::Object(_)) => inner,
        _ => value,
    };
    let message = ["message", "detail", "msg"]
        .iter()
        .find_map(|key| match inner.get(*key) {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        });
    let error_type = ["type", "code"]
        .iter()
        .find_map(|key| match inner.get(*key) {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        });
    (message, error_type)
}

#[cfg(test)]
mod tests {
    use super::*;
    use qore_core::ErrorCategory;

    #[test]
    fn reads_the_shapes_seen_in_the_wild() {
        let openai = from_http(
            404,
            r#"{"error":{"message":"The model `x` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#,
        );
        assert_eq!(openai.message, "HTTP 404: The model `x` does not exist");
        assert_eq!(
            openai.provider.as_ref().unwrap().error_type.as_deref(),
            Some("invalid_request_error")
        );
        let mistral = from_http(
            401,
            r#"{"object":"error","message":"Unauthorized","type":"invalid_request_error"}"#,
        );
        assert_eq!(mistral.category, ErrorCategory::Auth);
        assert_eq!(mistral.message, "HTTP 401: Unauthorized");
        assert_eq!(
            from_http(500, r#"{"error":"boom"}"#).message,
            "HTTP 500: boom"
        );
        assert_eq!(
            from_http(502, "<html>bad gateway</html>").message,
            "HTTP 502: <html>bad gateway</html>"
        );
    }
}
