//! What goes wrong in serving a request, wire-neutral: each dialect writes a [`ServeError`]
//! in its vendor's own error shape (status, type, message, and `Retry-After` where given).
//!
//! A store that cannot be reached is a 503 with `Retry-After` ([`ServeError::from_store`]):
//! OpenAI's `server_error`-typed envelope or Anthropic's `overloaded_error`, per dialect; any
//! other store failure is a 500. Neither carries the store's own words (a location, a query)
//! to the caller: those go to the log.

use qore_core::{ErrorCategory, ErrorInfo};

/// The kinds of failure a caller can tell apart. Each dialect names them in its own words
/// (OpenAI `invalid_request_error`, Anthropic `rate_limit_error`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// 400: the request is malformed, or asks what the target cannot do.
    InvalidRequest,
    /// 400: the conversation does not fit the model's context window.
    ContextLength,
    /// 401: no key, or a key that is unknown or revoked.
    Authentication,
    /// 403: the key may not use this model.
    Permission,
    /// 404: no such model or stored response.
    NotFound,
    /// 413: the request body is over the limit.
    TooLarge,
    /// 429: a limit or budget is passed, here or upstream.
    RateLimit,
    /// 503 (or the upstream's 5xx/529): try again later.
    Overloaded,
    /// 502: the upstream failed or answered something unreadable.
    Upstream,
    /// 500: a bug or an unexpected local failure.
    Internal,
}

impl ErrorKind {
    /// The label used in metrics (`error_category`).
    pub fn label(self) -> &'static str {
        match self {
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::ContextLength => "context_length",
            ErrorKind::Authentication => "authentication",
            ErrorKind::Permission => "permission",
            ErrorKind::NotFound => "not_found",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::RateLimit => "rate_limit",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::Upstream => "upstream",
            ErrorKind::Internal => "internal",
        }
    }

    pub fn default_status(self) -> u16 {
        match self {
            ErrorKind::InvalidRequest | ErrorKind::ContextLength => 400,
            ErrorKind::Authentication => 401,
            ErrorKind::Permission => 403,
            ErrorKind::NotFound => 404,
            ErrorKind::TooLarge => 413,
            ErrorKind::RateLimit => 429,
            ErrorKind::Overloaded => 503,
            ErrorKind::Upstream => 502,
            ErrorKind::Internal => 500,
        }
    }
}

/// A request that cannot be answered (before the first byte), or a stream that failed
/// after it (then written as the dialect's in-stream error event).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ServeError {
    pub kind: ErrorKind,
    /// The HTTP status to answer with (the upstream's where it gave one).
    pub status: u16,
    /// One line, no secret in it.
    pub message: String,
    /// The request field at fault (OpenAI's `param`).
    pub param: Option<String>,
    /// Seconds to wait, sent as `Retry-After`.
    pub retry_after: Option<u64>,
    /// OpenAI's `code` when it is not the kind's own (`Some(None)`: `null`), as for a stored
    /// response that does not exist; other dialects ignore it.
    pub code: Option<Option<&'static str>>,
}

/// The `Retry-After` of a 503 for a store that cannot be reached, in seconds.
pub const STORE_RETRY_AFTER: u64 = 1;

impl ServeError {
    /// A store failure as the caller sees it: 503 with `Retry-After` when the store cannot
    /// be reached now, else 500; `what` names what was being done.
    pub fn from_store(what: &str, error: &qore_store::StoreError) -> Self {
        if error.is_unavailable() {
            ServeError::new(
                ErrorKind::Overloaded,
                format!("the store cannot be reached now ({what}): try again shortly"),
            )
            .with_retry_after(STORE_RETRY_AFTER)
        } else {
            ServeError::new(ErrorKind::Internal, format!("the store failed ({what})"))
        }
    }

    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ServeError {
            kind,
            status: kind.default_status(),
            message: message.into(),
            param: None,
            retry_after: None,
            code: None,
        }
    }

    /// A 400 naming the field at fault.
    pub fn invalid(param: impl Into<String>, message: impl Into<String>) -> Self {
        let mut error = ServeError::new(ErrorKind::InvalidRequest, message);
        error.param = Some(param.into());
        error
    }

    pub fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    /// With OpenAI's `code` set to `code` (`None`: `null`) instead of the kind's own.
    pub fn with_code(mut self, code: Option<&'static str>) -> Self {
        self.code = Some(code);
        self
    }

    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// An upstream failure as the caller should see it: the provider's status kept where it
    /// means the same to the caller (429, 5xx, 400 for a context overflow), its message in
    /// one line.
    pub fn from_upstream(error: &ErrorInfo) -> Self {
        let status = error.status();
        let lower = error.message.to_ascii_lowercase();
        let context = lower.contains("context")
            && (lower.contains("length") || lower.contains("window") || lower.contains("exceed"))
            || lower.contains("too many tokens")
            || lower.contains("prompt is too long");
        let kind = match (error.category, status) {
            (_, Some(429)) => ErrorKind::RateLimit,
            (_, Some(529)) | (_, Some(503)) => ErrorKind::Overloaded,
            (ErrorCategory::Validation, _) | (_, Some(400)) if context => ErrorKind::ContextLength,
            (ErrorCategory::Validation, _) | (_, Some(400)) | (_, Some(422)) => {
                ErrorKind::InvalidRequest
            }
            (ErrorCategory::Auth, _) | (_, Some(401)) | (_, Some(403)) => ErrorKind::Upstream,
            (_, Some(404)) => ErrorKind::NotFound,
            (ErrorCategory::Config, _) => ErrorKind::Internal,
            _ => ErrorKind::Upstream,
        };
        let status = match kind {
            ErrorKind::RateLimit | ErrorKind::Overloaded => status.unwrap_or(503),
            ErrorKind::Upstream if status.is_some_and(|s| s >= 500) => status.unwrap_or(502),
            _ => kind.default_status(),
        };
        let message = error.message.lines().next().unwrap_or("").to_owned();
        ServeError {
            kind,
            status,
            message,
            param: None,
            retry_after: error.retry_after_ms.map(|ms| ms.div_ceil(1000)),
            code: None,
        }
    }
}
