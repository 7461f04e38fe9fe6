//! HTTP over reqwest (rustls): one client with a connect timeout; the idle timeout between
//! received bytes is enforced by the response stream (see [`crate::ResponseStream`]).
//!
//! Promises: every transport failure becomes an [`ErrorInfo`] of category `Network` whose
//! message carries the whole cause chain; every non-2xx answer becomes an [`ErrorInfo`]
//! that keeps the HTTP status and the body verbatim (the codec only adds what it can read
//! from the body: the provider's message and error type). The response stream then caps
//! the body and shortens the message ([`super::bad_answer`]).

use std::error::Error as _;
use std::time::Duration;

use qore_core::{ErrorCategory, ErrorInfo, ProviderDetail};

/// Timeouts of the transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Time allowed to establish a connection (TCP + TLS).
    pub connect: Duration,
    /// Longest silence allowed between two received pieces of a response (including the
    /// wait for the response head).
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(120),
        }
    }
}

/// Build the reqwest client shared by all requests of a [`crate::Client`]. A loopback
/// server is reached directly, whatever proxy the environment names.
pub fn build_client(timeouts: &Timeouts, loopback: bool) -> Result<reqwest::Client, ErrorInfo> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(timeouts.connect)
        .tcp_nodelay(true);
    if loopback {
        builder = builder.no_proxy();
    }
    builder
        .build()
        .map_err(|err| ErrorInfo::config(format!("cannot build the HTTP client: {err}")))
}

/// A transport failure as an error: the reqwest error and all its causes, in one line.
pub fn network_error(context: &str, err: &reqwest::Error) -> ErrorInfo {
    let mut message = format!("{context}: {err}");
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    ErrorInfo::network(message)
}

/// The category an HTTP error status belongs to.
pub fn category_for_status(status: u16) -> ErrorCategory {
    match status {
        401 | 403 => ErrorCategory::Auth,
        _ => ErrorCategory::Provider,
    }
}

/// An HTTP error answer as an error. `message` and `error_type` are what the codec read
/// from the provider's envelope; when it read nothing, the body itself is the message.
pub fn http_error(
    status: u16,
    body: &str,
    message: Option<String>,
    error_type: Option<String>,
) -> ErrorInfo {
    let message = match message {
        Some(message) if !message.is_empty() => format!("HTTP {status}: {message}"),
        _ if body.trim().is_empty() => format!("HTTP {status} with an empty body"),
        _ => format!("HTTP {status}: {}", body.trim()),
    };
    ErrorInfo::new(category_for_status(status), message).with_detail(ProviderDetail {
        status: Some(status),
        error_type,
        body: Some(body.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_categories_and_keep_the_body() {
        let err = http_error(401, "{\"e\":1}", Some("bad key".into()), None);
        assert_eq!(err.category, ErrorCategory::Auth);
        assert_eq!(err.status(), Some(401));
        assert_eq!(err.message, "HTTP 401: bad key");
        assert_eq!(err.provider.unwrap().body.as_deref(), Some("{\"e\":1}"));
        assert_eq!(
            http_error(503, "", None, None).category,
            ErrorCategory::Provider
        );
        assert_eq!(
            http_error(404, " nope ", None, None).message,
            "HTTP 404: nope"
        );
    }
}
