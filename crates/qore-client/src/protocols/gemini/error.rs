//! Gemini error envelopes: `{"error": {"code", "message", "status", "details": [...]}}`
//! (Google's `google.rpc.Status`), as an HTTP error body, as a chunk of a 200 stream or as
//! a whole 200 body; a streamed answer requested without `alt=sse` wraps it in an array.
//!
//! Promises: the status and the body are kept verbatim; the message is the envelope's
//! `message`, the type its `status` (`NOT_FOUND`, `RESOURCE_EXHAUSTED`…). An invalid API key
//! is an Auth error even though Gemini answers it with 400 (`reason: API_KEY_INVALID` in
//! `details`). [`retry_delay`] reads the server's advice from a `RetryInfo` detail
//! (`"retryDelay": "3s"`) so a retry loop can honour it.

use std::time::Duration;

use qore_core::{ErrorCategory, ErrorInfo, ProviderDetail};
use serde_json::Value;

use crate::transport::http::http_error;

/// An HTTP error answer.
pub fn from_http(status: u16, body: &str) -> ErrorInfo {
    let value = serde_json::from_str::<Value>(body).ok();
    let status_object = value.as_ref().and_then(status_object);
    let (message, error_type) = match status_object {
        Some(object) => (text(object, "message"), text(object, "status")),
        None => (None, None),
    };
    let mut error = http_error(status, body, message, error_type);
    if status_object.is_some_and(is_auth_failure) {
        error.category = ErrorCategory::Auth;
    }
    error
}

/// An error object that arrived inside a 200 answer (`data: {"error": {...}}`); `raw` is
/// the frame or body it came in.
pub fn in_stream(error: &Value, raw: &str) -> ErrorInfo {
    let message = text(error, "message").unwrap_or_else(|| error.to_string());
    let mut info = ErrorInfo::provider(message).with_detail(ProviderDetail {
        status: error
            .get("code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok()),
        error_type: text(error, "status"),
        body: Some(raw.to_owned()),
    });
    if is_auth_failure(error) {
        info.category = ErrorCategory::Auth;
    }
    info
}

/// How long the server asks to wait before retrying, from a `google.rpc.RetryInfo` detail
/// of the error body (`"retryDelay": "3s"`, `"0.5s"`, or `{"seconds", "nanos"}`).
pub fn retry_delay(body: &str) -> Option<Duration> {
    let value = serde_json::from_str::<Value>(body).ok()?;
    let details = status_object(&value)?.get("details")?.as_array()?;
    details
        .iter()
        .filter(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|d| parse_delay(d.get("retryDelay")?))
}

fn parse_delay(delay: &Value) -> Option<Duration> {
    match delay {
        Value::String(text) => {
            let seconds: f64 = text.trim().strip_suffix('s')?.trim().parse().ok()?;
            Duration::try_from_secs_f64(seconds).ok()
        }
        Value::Object(_) => {
            let seconds = delay.get("seconds").map_or(Some(0), |s| match s {
                Value::String(s) => s.parse().ok(),
                other => other.as_u64(),
            })?;
            let nanos = delay.get("nanos").and_then(Value::as_u64).unwrap_or(0);
            Some(Duration::from_secs(seconds) + Duration::from_nanos(nanos.min(999_999_999)))
        }
        _ => None,
    }
}

/// The `google.rpc.Status` object of an envelope (`{"error": {...}}`, or the first element
/// of an array of them).
fn status_object(value: &Value) -> Option<&Value> {
    let envelope = match value {
        Value::Array(items) => items.first()?,
        other => other,
    };
    envelope.get("error").filter(|e| e.is_object())
}

fn text(object: &Value, key: &str) -> Option<String> {
    object
        .get(key)
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

/// A rejected credential, whatever HTTP status carried it.
fn is_auth_failure(status: &Value) -> bool {
    let by_status = matches!(
        status.get("status").and_then(Value::as_str),
        Some("UNAUTHENTICATED" | "PERMISSION_DENIED")
    );
    let by_reason = status
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| d.get("reason").and_then(Value::as_str))
        .any(|reason| {
            matches!(
                reason,
                "API_KEY_INVALID" | "API_KEY_EXPIRED" | "API_KEY_SERVICE_BLOCKED"
            )
        });
    by_status || by_reason
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUOTA: &str = r#"{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}"#;

    #[test]
    fn reads_message_status_and_keeps_the_body() {
        let error = from_http(
            404,
            r#"{"error": {"code": 404, "message": "models/x is not found for API version v1beta", "status": "NOT_FOUND"}}"#,
        );
        assert_eq!(error.category, ErrorCategory::Provider);
        assert_eq!(
            error.message,
            "HTTP 404: models/x is not found for API version v1beta"
        );
        let detail = error.provider.unwrap();
        assert_eq!(detail.status, Some(404));
        assert_eq!(detail.error_type.as_deref(), Some("NOT_FOUND"));
        assert!(detail.body.unwrap().contains("v1beta"));
        let quota = from_http(429, QUOTA);
        assert_eq!(quota.message, "HTTP 429: You exceeded your current quota.");
        assert_eq!(
            from_http(502, "<html>bad gateway</html>").message,
            "HTTP 502: <html>bad gateway</html>"
        );
        let array = from_http(
            500,
            r#"[{"error":{"code":500,"message":"internal","status":"INTERNAL"}}]"#,
        );
        assert_eq!(array.message, "HTTP 500: internal");
    }

    #[test]
    fn an_invalid_key_is_an_auth_error_despite_its_400() {
        let body = r#"{"error":{"code":400,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"googleapis.com","reason":"API_KEY_INVALID"}],"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}"#;
        let error = from_http(400, body);
        assert_eq!(error.category, ErrorCategory::Auth);
        assert_eq!(error.status(), Some(400));
        let other = from_http(
            400,
            r#"{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}"#,
        );
        assert_eq!(other.category, ErrorCategory::Provider);
        assert_eq!(
            from_http(
                403,
                r#"{"error":{"code":403,"message":"no","status":"PERMISSION_DENIED"}}"#
            )
            .category,
            ErrorCategory::Auth
        );
    }

    #[test]
    fn retry_delay_reads_retry_info() {
        assert_eq!(retry_delay(QUOTA), Some(Duration::from_secs(37)));
        let fractional = r#"{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}"#;
        assert_eq!(retry_delay(fractional), Some(Duration::from_millis(1500)));
        let object = r#"{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{"seconds":"2","nanos":500000000}}]}}"#;
        assert_eq!(retry_delay(object), Some(Duration::from_millis(2500)));
        assert_eq!(retry_delay(r#"{"error":{"code":429,"message":"x"}}"#), None);
        assert_eq!(retry_delay("not json"), None);
        let negative = r#"{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"-3s"}]}}"#;
        assert_eq!(retry_delay(negative), None);
    }

    #[test]
    fn errors_inside_a_200_answer_keep_code_and_frame() {
        let error: Value = serde_json::from_str(
            r#"{"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}"#,
        )
        .unwrap();
        let info = in_stream(&error, "data-frame");
        assert_eq!(info.message, "The model is overloaded.");
        assert_eq!(info.status(), Some(503));
        let detail = info.provider.unwrap();
        assert_eq!(detail.error_type.as_deref(), Some("UNAVAILABLE"));
        assert_eq!(detail.body.as_deref(), Some("data-frame"));
    }
}
