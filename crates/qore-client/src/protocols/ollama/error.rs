//! Ollama error envelopes: `{"error": "message"}`, as an HTTP error body or as a line inside
//! a 200 stream. The status and the body (or line) are kept verbatim; an envelope of another
//! shape (`{"error": {"message", "type"}}` from proxies) is read too.

use qore_core::ErrorInfo;
use serde_json::Value;

use crate::protocols::shared;
use crate::transport::http::http_error;

/// An HTTP error answer.
pub fn from_http(status: u16, body: &str) -> ErrorInfo {
    let (message, error_type) = match serde_json::from_str::<Value>(body) {
        Ok(Value::Object(map)) => match map.get("error") {
            Some(error) => read(error),
            None => (
                map.get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                None,
            ),
        },
        _ => (None, None),
    };
    http_error(status, body, message, error_type)
}

/// An `{"error": ...}` line inside a 200 answer.
pub fn in_stream(error: &Value, line: &str) -> ErrorInfo {
    shared::in_stream_error(error, line, read(error), None)
}

/// The message and type of the `error` member, whatever its shape: a string or an object as
/// usual, `null` as nothing, any other value as its JSON text.
fn read(error: &Value) -> (Option<String>, Option<String>) {
    match error {
        Value::Null => (None, None),
        other => shared::message_and_type(other).unwrap_or_else(|| (Some(other.to_string()), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qore_core::ErrorCategory;

    #[test]
    fn reads_the_string_envelope_and_keeps_status_and_body() {
        let body = r#"{"error":"model \"nope\" not found, try pulling it first"}"#;
        let err = from_http(404, body);
        assert_eq!(err.category, ErrorCategory::Provider);
        assert_eq!(
            err.message,
            "HTTP 404: model \"nope\" not found, try pulling it first"
        );
        let detail = err.provider.unwrap();
        assert_eq!(detail.status, Some(404));
        assert_eq!(detail.body.as_deref(), Some(body));
        assert_eq!(
            from_http(401, r#"{"error":"unauthorized"}"#).category,
            ErrorCategory::Auth
        );
        assert_eq!(
            from_http(502, "bad gateway").message,
            "HTTP 502: bad gateway"
        );
    }

    #[test]
    fn reads_an_object_envelope_and_stream_lines() {
        let err = from_http(
            400,
            r#"{"error":{"message":"bad","type":"invalid_request"}}"#,
        );
        assert_eq!(err.message, "HTTP 400: bad");
        assert_eq!(
            err.provider.unwrap().error_type.as_deref(),
            Some("invalid_request")
        );
        let line = r#"{"error":"an error was encountered while running the model"}"#;
        let value: Value = serde_json::from_str(line).unwrap();
        let err = in_stream(&value["error"], line);
        assert_eq!(
            err.message,
            "an error was encountered while running the model"
        );
        assert_eq!(err.provider.unwrap().body.as_deref(), Some(line));
    }
}
