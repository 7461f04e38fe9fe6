//! What an answer that is not the API's becomes: a short error that says what happened, with
//! the body kept (capped) for whoever wants to look.
//!
//! Promises:
//! - [`tidy`]: every error leaving a response stream has a one-line message of at most
//!   [`MESSAGE_MAX`] characters (whitespace runs collapsed, cut with `…`), and a provider body
//!   of at most [`BODY_CAP`] bytes (cut on a character boundary);
//! - [`http_answer`]: a non-2xx answer whose body is JSON keeps the message the codec read
//!   from the provider's envelope (and its error type); any other body (an HTML page from a
//!   proxy or CDN, plain text) gets a message naming the status with its reason, the host,
//!   the page title (HTML) or first line (text), the content type and the size, e.g.
//!   `HTTP 502 Bad Gateway from api.example.com: "502 Bad Gateway" (text/html, 20 KB)`;
//! - [`not_a_stream`] / [`not_json`]: a 2xx answer that is an HTML page or plain text where
//!   an event stream or JSON (a stream) or JSON (a model listing, a probe) was expected is a
//!   provider error saying so in the same terms (not "empty", not undecodable JSON);
//! - a content type is looked at by its essence ([`essence`]: lowercase, no parameters),
//!   computed once, when the head comes ([`Head::of`]);
//! - [`empty_response`]: a 2xx answer with nothing in it says that.

use qore_core::{ErrorCategory, ErrorInfo, ProviderDetail};

/// The longest error message, in characters.
pub const MESSAGE_MAX: usize = 280;

/// The most of a body kept in an error's detail, in bytes.
pub const BODY_CAP: usize = 64 * 1024;

/// Characters of a text body's first line quoted in a message.
const QUOTED_MAX: usize = 120;

/// Make `error` one short line with a capped body (see the module doc).
pub fn tidy(error: &mut ErrorInfo) {
    let fits = error.message.chars().count() <= MESSAGE_MAX
        && !error.message.contains(['\n', '\r', '\t'])
        && !error.message.contains("  ");
    if !fits {
        error.message = one_line(&error.message, MESSAGE_MAX);
    }
    if let Some(body) = error.provider.as_mut().and_then(|d| d.body.as_mut()) {
        if body.len() > BODY_CAP {
            let mut cut = BODY_CAP;
            while !body.is_char_boundary(cut) {
                cut -= 1;
            }
            body.truncate(cut);
        }
    }
}

/// `error`, [`tidy`].
pub fn tidied(mut error: ErrorInfo) -> ErrorInfo {
    tidy(&mut error);
    error
}

/// `host` or `host:port` of a URL, as error messages name the server.
pub fn host(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or("the server");
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// `text` on one line (whitespace runs collapsed), cut to at most `max` characters, the last
/// of them `…` when it was cut.
pub fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max.saturating_sub(1)) {
        Some((cut, _)) if line.chars().count() > max => format!("{}…", &line[..cut]),
        _ => line,
    }
}

/// A response head, as error messages name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The HTTP status.
    pub status: u16,
    /// `host` or `host:port` the answer came from.
    pub host: String,
    /// The content type's [`essence`] (`""` when the answer named none).
    pub content_type: String,
}

impl Head {
    /// The head of `response`.
    pub fn of(response: &reqwest::Response) -> Self {
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        Head {
            status: response.status().as_u16(),
            host: host(response.url()),
            content_type: essence(content_type),
        }
    }

    /// This head with its whole `body` (only [`BODY_CAP`] bytes of it are looked at).
    pub fn with_body<'a>(&'a self, body: &'a [u8]) -> Answer<'a> {
        Answer {
            status: self.status,
            host: &self.host,
            content_type: &self.content_type,
            body: &body[..body.len().min(BODY_CAP)],
            size: body.len(),
        }
    }
}

/// What is known of an answer: its head and (the start of) its body.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    /// The HTTP status.
    pub status: u16,
    /// `host` or `host:port` the answer came from.
    pub host: &'a str,
    /// The content type's [`essence`].
    pub content_type: &'a str,
    /// The body bytes received (at most [`BODY_CAP`] of them are kept).
    pub body: &'a [u8],
    /// The body's whole size in bytes.
    pub size: usize,
}

/// A non-2xx answer: `error` is what the codec read; a body that is not JSON replaces its
/// message with one that says what the body is.
pub fn http_answer(mut error: ErrorInfo, answer: &Answer<'_>) -> ErrorInfo {
    let body = answer.body;
    let json = serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok();
    if !json && !body.trim_ascii().is_empty() {
        error.message = format!("{}: {}", head(answer), what(answer));
    }
    error
}

/// A 2xx answer whose content type says it is a page or plain text, not the API's stream or
/// JSON.
pub fn not_a_stream(answer: &Answer<'_>) -> ErrorInfo {
    not_the_api(answer, "an event stream or JSON")
}

/// A 2xx answer whose content type says it is a page or plain text, not the API's JSON.
pub fn not_json(answer: &Answer<'_>) -> ErrorInfo {
    not_the_api(answer, "JSON")
}

fn not_the_api(answer: &Answer<'_>, expected: &str) -> ErrorInfo {
    ErrorInfo::provider(format!(
        "{} is not {expected} but {}",
        head(answer),
        what(answer)
    ))
    .with_detail(ProviderDetail {
        status: Some(answer.status),
        error_type: None,
        body: Some(String::from_utf8_lossy(answer.body).into_owned()),
    })
}

/// The error for a 2xx answer that carried nothing.
pub fn empty_response(status: u16, what: &str) -> ErrorInfo {
    ErrorInfo::new(
        ErrorCategory::Provider,
        format!("the server sent an empty response (HTTP {status} with {what})"),
    )
    .with_detail(ProviderDetail {
        status: Some(status),
        error_type: None,
        body: Some(String::new()),
    })
}

/// A content type's essence: its media type, lowercase, without parameters
/// (`Text/HTML; charset=utf-8` is `text/html`).
pub fn essence(content_type: &str) -> String {
    let media_type = content_type.split(';').next().unwrap_or("");
    media_type.trim().to_ascii_lowercase()
}

/// Whether a 2xx answer's content type ([`essence`]) is a page or text, never the API's
/// (whose streams are `text/event-stream` or NDJSON and whose bodies are JSON).
pub fn is_page_or_text(essence: &str) -> bool {
    matches!(
        essence,
        "text/html" | "application/xhtml+xml" | "text/plain"
    )
}

/// `HTTP 502 Bad Gateway from host`.
fn head(answer: &Answer<'_>) -> String {
    let reason = reqwest::StatusCode::from_u16(answer.status)
        .ok()
        .and_then(|s| s.canonical_reason());
    match reason {
        Some(reason) => format!("HTTP {} {reason} from {}", answer.status, answer.host),
        None => format!("HTTP {} from {}", answer.status, answer.host),
    }
}

/// `"Page title" (text/html, 20 KB)` or `"first line" (text/plain, 95 B)`.
fn what(answer: &Answer<'_>) -> String {
    let text = String::from_utf8_lossy(answer.body);
    let content_type = match answer.content_type {
        "" => "no content type",
        other => other,
    };
    let quoted = if is_html(answer.content_type, &text) {
        match html_title(&text) {
            Some(title) => format!("{:?}", one_line(&title, QUOTED_MAX)),
            None => "an HTML page".to_owned(),
        }
    } else {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        format!("{:?}", one_line(first, QUOTED_MAX))
    };
    format!("{quoted} ({content_type}, {})", size(answer.size))
}

fn is_html(essence: &str, text: &str) -> bool {
    let start = text
        .trim_start()
        .get(..15)
        .unwrap_or("")
        .to_ascii_lowercase();
    essence.contains("html") || start.starts_with("<!doctype html") || start.starts_with("<html")
}

/// The text of an HTML page's `<title>` on one line, the common entities (`&amp;`, `&lt;`,
/// `&gt;`, `&quot;`, `&#39;`) decoded.
pub fn html_title(page: &str) -> Option<String> {
    let lower = page.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let title = page[start..end]
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'");
    let title = one_line(&title, usize::MAX);
    (!title.is_empty()).then_some(title)
}

/// A byte count for people: `95 B`, `20 KB`, `3.4 MB`.
pub fn size(bytes: usize) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if b < KB * KB {
        format!("{} KB", (b / KB).round())
    } else {
        format!("{:.1} MB", b / (KB * KB))
    }
}

#[cfg(test)]
#[path = "bad_answer_tests.rs"]
mod tests;
