//! HTTP over reqwest (rustls): one client with a connect timeout; the idle timeout between
//! received bytes is enforced by the response stream (see [`crate::ResponseStream`]).
//!
//! Promises: every transport failure becomes an [`ErrorInfo`] of category `Network` whose
//! message carries the whole cause chain; every non-2xx answer becomes an [`ErrorInfo`]
//! that keeps the HTTP status and the body verbatim (the codec only adds what it can read
//! from the body: the provider's message and error type); the response stream then caps the
//! body and shortens the message ([`super::bad_answer`]);
//! - TLS trusts the bundled webpki roots and the operating system's roots, read when a client
//!   is built (`rustls-native-certs`, which honours `SSL_CERT_FILE` and `SSL_CERT_DIR`), so
//!   a corporate proxy's CA installed on the machine, or named by `SSL_CERT_FILE`, works;
//! - [`redact`] takes the API key out of an error, for servers that echo the credential.

use std::error::Error as _;
use std::time::Duration;

use qore_core::{ErrorCategory, ErrorInfo, ProviderDetail, ResponseEvent};

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

/// What stands in for a redacted credential.
pub const REDACTED: &str = "[redacted]";

/// Replaces every occurrence of `secret` (the API key) in the error's message and provider
/// detail with [`REDACTED`]: some servers quote the credential they refused, and an error
/// travels on to logs, `--json` output and saved sessions.
pub fn redact(error: &mut ErrorInfo, secret: &str) {
    if secret.is_empty() {
        return;
    }
    let detail = error.provider.as_mut();
    let fields = detail.map(|d| [d.body.as_mut(), d.error_type.as_mut()]);
    let fields = fields.into_iter().flatten().flatten();
    for text in std::iter::once(&mut error.message).chain(fields) {
        if text.contains(secret) {
            *text = text.replace(secret, REDACTED);
        }
    }
}

/// [`redact`] for an error event of a stream whose request carried `secret`.
pub(crate) fn redact_event(event: &mut ResponseEvent, secret: Option<&str>) {
    if let (ResponseEvent::Error { error }, Some(secret)) = (event, secret) {
        redact(error, secret);
    }
}

/// A request that got no answer, as an error; a connect timeout that ended it is named with
/// its value (`connect`), so the user sees which setting was in force.
pub(crate) fn request_failed(err: &reqwest::Error, connect: Option<Duration>) -> ErrorInfo {
    failed_while(None, err, connect)
}

/// [`request_failed`], its message led by what was being done (`listing models at URL`).
pub(crate) fn failed_while(
    doing: Option<&str>,
    err: &reqwest::Error,
    connect: Option<Duration>,
) -> ErrorInfo {
    let what = match connect {
        Some(limit) if err.is_connect() && err.is_timeout() => format!(
            "no connection within the connect timeout ({} s)",
            limit.as_secs_f64()
        ),
        _ => "request failed".to_owned(),
    };
    match doing {
        Some(doing) => network_error(&format!("{doing}: {what}"), err),
        None => network_error(&what, err),
    }
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

    #[test]
    fn a_redacted_error_keeps_everything_but_the_secret() {
        let body = r#"{"error":"bad key sk-canary (Bearer sk-canary)","type":"sk-canary"}"#;
        let mut err = http_error(401, body, None, Some("sk-canary".into()));
        redact(&mut err, "sk-canary");
        let text = serde_json::to_string(&err).unwrap();
        assert!(!text.contains("sk-canary"), "{text}");
        assert_eq!(err.status(), Some(401));
        let detail = err.provider.unwrap();
        assert_eq!(
            detail.body.as_deref(),
            Some(r#"{"error":"bad key [redacted] (Bearer [redacted])","type":"[redacted]"}"#)
        );
        assert_eq!(detail.error_type.as_deref(), Some(REDACTED));
        // An empty key redacts nothing.
        let mut err = http_error(500, "boom", None, None);
        redact(&mut err, "");
        assert_eq!(err.message, "HTTP 500: boom");
    }
}
