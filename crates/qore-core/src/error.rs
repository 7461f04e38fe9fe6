//! Typed errors shared by every layer.
//!
//! [`ErrorInfo`] keeps what the provider said (HTTP status and body) so nothing is lost
//! between the wire and the user. Cancellation is deliberately *not* an error: it is its own
//! outcome ([`crate::StreamOutcome::Cancelled`]).

use serde::{Deserialize, Serialize};

/// Which part of the system failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCategory {
    /// Bad or missing configuration (URL, model, profile).
    Config,
    /// The provider refused our credentials (401/403).
    Auth,
    /// Connect, DNS, TLS, timeouts, a connection cut mid-stream.
    Network,
    /// The provider answered with an error, or sent something we cannot decode.
    Provider,
    /// A request we built or received failed validation before it was sent.
    Validation,
    /// A tool failed.
    Tool,
    /// A limit of the tool loop ended the turn (the round limit, a repeated call).
    Limit,
}

/// What the provider sent with an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderDetail {
    /// HTTP status, when the error came with one (absent for errors inside a 200 stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The provider's error type or code (`invalid_request_error`, `model_not_found`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// The raw body (or stream frame) as received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

/// An error with its category, a human message, and the provider's detail when there is one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{category:?} error: {message}")]
pub struct ErrorInfo {
    /// What kind of failure this is (decides retries and how a front end reports it).
    pub category: ErrorCategory,
    /// One line saying what went wrong, for people.
    pub message: String,
    /// What the provider answered (status, error type, body), when the failure came from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderDetail>,
    /// How long the provider asked the caller to wait before trying again (`Retry-After`,
    /// `retry-after-ms`, or its body's retry hint), in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl ErrorInfo {
    /// An error of `category` saying `message`.
    pub fn new(category: ErrorCategory, message: impl Into<String>) -> Self {
        ErrorInfo {
            category,
            message: message.into(),
            provider: None,
            retry_after_ms: None,
        }
    }

    /// A configuration error: a bad URL, header, profile or setting; retrying cannot help.
    pub fn config(message: impl Into<String>) -> Self {
        Self::new(ErrorCategory::Config, message)
    }

    /// An authentication error: a missing, wrong or expired key.
    pub fn auth(message: impl Into<String>) -> Self {
        Self::new(ErrorCategory::Auth, message)
    }

    /// A network error: connecting, a timeout, a connection cut mid-answer.
    pub fn network(message: impl Into<String>) -> Self {
        Self::new(ErrorCategory::Network, message)
    }

    /// An error the provider reported (a 4xx/5xx answer or an error event in the stream).
    pub fn provider(message: impl Into<String>) -> Self {
        Self::new(ErrorCategory::Provider, message)
    }

    /// A request that failed validation before it was sent (arguments, schema, sizes).
    pub fn validation(message: impl Into<String>) -> Self {
        Self::new(ErrorCategory::Validation, message)
    }

    /// The same error carrying what the provider answered.
    pub fn with_detail(mut self, detail: ProviderDetail) -> Self {
        self.provider = Some(detail);
        self
    }

    /// The HTTP status the provider answered with, if any.
    pub fn status(&self) -> Option<u16> {
        self.provider.as_ref().and_then(|d| d.status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_info_round_trips_and_keeps_status_and_body() {
        let err = ErrorInfo::provider("model not found").with_detail(ProviderDetail {
            status: Some(404),
            error_type: Some("model_not_found".into()),
            body: Some(r#"{"error":{"message":"model not found"}}"#.into()),
        });
        let json = serde_json::to_string(&err).unwrap();
        let back: ErrorInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back, err);
        assert_eq!(back.status(), Some(404));
        assert_eq!(err.to_string(), "Provider error: model not found");
    }
}
