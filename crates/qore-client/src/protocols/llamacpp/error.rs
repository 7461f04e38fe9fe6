//! llama.cpp error envelopes: `{"error": {"code", "message", "type"}}`, as an HTTP error body
//! (e.g. `501 not_supported_error` from `/infill` for a model without FIM tokens, `503
//! unavailable_error` while loading) or as a `data:` frame inside a 200 stream. The status
//! and the body (or frame) are kept verbatim.

use qore_core::ErrorInfo;
use serde_json::Value;

use crate::protocols::shared;
use crate::transport::http::http_error;

/// An HTTP error answer.
pub fn from_http(status: u16, body: &str) -> ErrorInfo {
    let (message, error_type) = match serde_json::from_str::<Value>(body) {
        Ok(value) => read(value.get("error").unwrap_or(&value)),
        Err(_) => (None, None),
    };
    http_error(status, body, message, error_type)
}

/// An error frame inside a 200 stream; its `code` is the status.
pub fn in_stream(error: &Value, frame: &str) -> ErrorInfo {
    shared::in_stream_error(error, frame, read(error), shared::code_status(error))
}

/// The message and type of the `error` member: a string or an object; nothing else is read.
fn read(error: &Value) -> (Option<String>, Option<String>) {
    shared::message_and_type(error).unwrap_or((None, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use qore_core::ErrorCategory;

    #[test]
    fn reads_the_envelope_and_keeps_status_and_body() {
        let body = r#"{"error":{"code":501,"message":"Infill is not supported by this model: prefix token is missing. ","type":"not_supported_error"}}"#;
        let err = from_http(501, body);
        assert_eq!(err.category, ErrorCategory::Provider);
        assert_eq!(
            err.message,
            "HTTP 501: Infill is not supported by this model: prefix token is missing. "
        );
        let detail = err.provider.unwrap();
        assert_eq!(detail.status, Some(501));
        assert_eq!(detail.error_type.as_deref(), Some("not_supported_error"));
        assert_eq!(detail.body.as_deref(), Some(body));
        let auth = from_http(
            401,
            r#"{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}"#,
        );
        assert_eq!(auth.category, ErrorCategory::Auth);
        assert_eq!(from_http(500, "oops").message, "HTTP 500: oops");
    }

    #[test]
    fn reads_an_error_frame() {
        let frame = r#"{"error":{"code":500,"message":"slot unavailable","type":"server_error"}}"#;
        let value: Value = serde_json::from_str(frame).unwrap();
        let err = in_stream(&value["error"], frame);
        assert_eq!(err.message, "slot unavailable");
        let detail = err.provider.unwrap();
        assert_eq!(detail.status, Some(500));
        assert_eq!(detail.error_type.as_deref(), Some("server_error"));
        assert_eq!(detail.body.as_deref(), Some(frame));
    }
}
