//! Recorded provider traffic ("cassettes") as plain data.
//!
//! Contract:
//! - A cassette is one YAML file under `<fixtures>/rig-cassettes/<provider>/<scenario>/<case>.yaml`
//!   holding one or more documents separated by `---`; each document is one HTTP exchange
//!   (`when:` = the request, `then:` = the response). [`load_cassettes`] walks the tree
//!   recursively, in sorted path order, and returns every file with its exchanges in file order.
//! - The document shape is checked strictly (unknown keys are an error), so a change in the
//!   recording format fails loudly instead of silently dropping data.
//! - Errors never panic: every failure is a [`CassetteError`] naming the file and the document.
//! - `then.body` is kept exactly as recorded. A few binary responses (audio) are recorded with
//!   `body_encoding: base64`; for those [`Exchange::response_body_encoding`] is `Some("base64")`
//!   (validated at load time) and [`Exchange::response_bytes`] gives the decoded bytes.
//! - `when.body` is `None` when the request had no body (`body: null` in YAML, e.g. GETs).
//! - [`fixtures_dir`] finds the fixtures: env `QORE_FIXTURES`, else `../shared/fixtures` next to
//!   the workspace root. Missing fixtures give `None` (tests skip), except when env `CI` is set
//!   (and not `false`/`0`), where a missing fixtures directory panics: CI must not skip silently.

use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;

/// One recorded file: the exchanges of one test case, in order.
#[derive(Debug, Clone)]
pub struct Cassette {
    /// The YAML file this was loaded from.
    pub path: PathBuf,
    /// First directory under `rig-cassettes` (`anthropic`, `openai`, ...).
    pub provider: String,
    /// The exchanges (YAML documents) in file order.
    pub exchanges: Vec<Exchange>,
}

impl Cassette {
    /// Path below `rig-cassettes` without the extension, e.g.
    /// `anthropic/messages_sessions/sequential_tool_calls_streaming`; falls back to the full path.
    pub fn name(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for comp in self.path.with_extension("").components().rev() {
            let s = comp.as_os_str().to_string_lossy().into_owned();
            if s == "rig-cassettes" {
                parts.reverse();
                return parts.join("/");
            }
            parts.push(s);
        }
        self.path.display().to_string()
    }
}

/// One recorded HTTP exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    pub method: String,
    /// Request path without the query string.
    pub path: String,
    /// Query parameters in recorded order (`query_param` in YAML).
    pub query: Vec<(String, String)>,
    pub request_headers: Vec<(String, String)>,
    /// Exact request body as sent (usually JSON); `None` when there was none.
    pub request_body: Option<String>,
    pub status: u16,
    pub response_headers: Vec<(String, String)>,
    /// Response body exactly as recorded (base64 text when `response_body_encoding` is set).
    pub response_body: String,
    /// `Some("base64")` for the few binary bodies; `None` for text bodies.
    pub response_body_encoding: Option<String>,
}

impl Exchange {
    /// The response `content-type` header (case-insensitive name match).
    pub fn content_type(&self) -> Option<&str> {
        self.response_header("content-type")
    }

    /// First response header with this name (case-insensitive).
    pub fn response_header(&self, name: &str) -> Option<&str> {
        find_header(&self.response_headers, name)
    }

    /// First request header with this name (case-insensitive).
    pub fn request_header(&self, name: &str) -> Option<&str> {
        find_header(&self.request_headers, name)
    }

    /// The request body parsed as JSON, if there is one and it is JSON.
    pub fn request_json(&self) -> Option<serde_json::Value> {
        serde_json::from_str(self.request_body.as_deref()?).ok()
    }

    /// The response body parsed as JSON, if it is JSON (not SSE / NDJSON / binary).
    pub fn response_json(&self) -> Option<serde_json::Value> {
        if self.response_body_encoding.is_some() {
            return None;
        }
        serde_json::from_str(&self.response_body).ok()
    }

    /// Path plus `?query` as it went on the wire (values are not re-encoded).
    pub fn path_and_query(&self) -> String {
        if self.query.is_empty() {
            return self.path.clone();
        }
        let q: Vec<String> = self.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}?{}", self.path, q.join("&"))
    }

    /// The response body as bytes, base64-decoded when it was recorded that way.
    pub fn response_bytes(&self) -> Vec<u8> {
        match self.response_body_encoding.as_deref() {
            // Validated by the loader; an Exchange built by hand with bad base64 yields raw text.
            Some("base64") => base64::engine::general_purpose::STANDARD
                .decode(self.response_body.trim())
                .unwrap_or_else(|_| self.response_body.as_bytes().to_vec()),
            _ => self.response_body.as_bytes().to_vec(),
        }
    }

    /// True when the response is a stream of SSE frames.
    pub fn is_sse(&self) -> bool {
        self.content_type()
            .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/event-stream"))
    }
}

fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// A cassette that could not be read or parsed.
#[derive(Debug)]
pub struct CassetteError {
    /// The file (or directory) concerned.
    pub path: PathBuf,
    /// What went wrong, including the document index when relevant.
    pub message: String,
}

impl CassetteError {
    fn new(path: &Path, message: impl Into<String>) -> Self {
        CassetteError {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

impl fmt::Display for CassetteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for CassetteError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDoc {
    when: RawWhen,
    then: RawThen,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWhen {
    path: String,
    method: String,
    #[serde(default)]
    query_param: Option<Vec<NameValue>>,
    #[serde(default)]
    header: Option<Vec<NameValue>>,
    #[serde(default)]
    body: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawThen {
    status: u16,
    #[serde(default)]
    header: Option<Vec<NameValue>>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    body_encoding: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NameValue {
    name: String,
    // Unquoted scalars such as `2023-06-01` or `42` arrive as strings with serde_norway 0.9.
    value: String,
}

fn pairs(list: Option<Vec<NameValue>>) -> Vec<(String, String)> {
    list.unwrap_or_default()
        .into_iter()
        .map(|nv| (nv.name, nv.value))
        .collect()
}

/// Where the fixtures live: env `QORE_FIXTURES`, else `<workspace root>/../shared/fixtures`.
///
/// Returns `None` when the directory does not exist, so tests can skip; panics instead when env
/// `CI` is set (to anything but empty, `false` or `0`), because CI must not pass by skipping.
pub fn fixtures_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("QORE_FIXTURES") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("..")
            .join("..")
            .join("shared")
            .join("fixtures"),
    };
    if dir.is_dir() {
        return Some(dir.canonicalize().unwrap_or(dir));
    }
    let in_ci = std::env::var("CI")
        .map(|v| !v.is_empty() && v != "false" && v != "0")
        .unwrap_or(false);
    if in_ci {
        panic!(
            "qore-testkit: fixtures directory {} not found and CI is set; \
             set QORE_FIXTURES to the fixtures directory (the one holding rig-cassettes/)",
            dir.display()
        );
    }
    None
}

/// Loads every `*.yaml` under `dir/rig-cassettes` (or under `dir` itself when it is the
/// `rig-cassettes` directory), recursively, in sorted path order.
pub fn load_cassettes(dir: &Path) -> Result<Vec<Cassette>, CassetteError> {
    let nested = dir.join("rig-cassettes");
    let root = if nested.is_dir() {
        nested
    } else if dir.file_name().is_some_and(|n| n == "rig-cassettes") && dir.is_dir() {
        dir.to_path_buf()
    } else {
        return Err(CassetteError::new(&nested, "no rig-cassettes directory"));
    };
    let mut files = Vec::new();
    collect_yaml(&root, &mut files)?;
    files.sort();
    files.iter().map(|f| load_cassette_file(&root, f)).collect()
}

fn collect_yaml(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), CassetteError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| CassetteError::new(dir, format!("read_dir: {e}")))?;
    for entry in entries {
        let entry = entry.map_err(|e| CassetteError::new(dir, format!("read_dir entry: {e}")))?;
        let path = entry.path();
        let ft = entry
            .file_type()
            .map_err(|e| CassetteError::new(&path, format!("file_type: {e}")))?;
        if ft.is_dir() {
            collect_yaml(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
    Ok(())
}

/// Loads one cassette file; `root` is the `rig-cassettes` directory (for the provider name).
pub fn load_cassette_file(root: &Path, path: &Path) -> Result<Cassette, CassetteError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CassetteError::new(path, format!("read: {e}")))?;
    let provider = path
        .strip_prefix(root)
        .ok()
        .and_then(|rel| rel.components().next())
        .filter(|_| path.parent() != Some(root))
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    let exchanges = parse_exchanges(&text).map_err(|m| CassetteError::new(path, m))?;
    Ok(Cassette {
        path: path.to_path_buf(),
        provider,
        exchanges,
    })
}

/// Parses the text of one cassette (multi-document YAML) into exchanges.
/// The error message names the 0-based document index.
pub fn parse_exchanges(text: &str) -> Result<Vec<Exchange>, String> {
    let mut out = Vec::new();
    for (i, doc) in serde_norway::Deserializer::from_str(text).enumerate() {
        let raw = RawDoc::deserialize(doc).map_err(|e| format!("document {i}: {e}"))?;
        out.push(exchange_from_raw(raw).map_err(|e| format!("document {i}: {e}"))?);
    }
    if out.is_empty() {
        return Err("no documents".to_string());
    }
    Ok(out)
}

fn exchange_from_raw(raw: RawDoc) -> Result<Exchange, String> {
    let RawDoc { when, then } = raw;
    let response_body = then.body.unwrap_or_default();
    match then.body_encoding.as_deref() {
        None => {}
        Some("base64") => {
            base64::engine::general_purpose::STANDARD
                .decode(response_body.trim())
                .map_err(|e| format!("then.body is not valid base64: {e}"))?;
        }
        Some(other) => return Err(format!("unsupported then.body_encoding {other:?}")),
    }
    Ok(Exchange {
        method: when.method,
        path: when.path,
        query: pairs(when.query_param),
        request_headers: pairs(when.header),
        request_body: when.body,
        status: then.status,
        response_headers: pairs(then.header),
        response_body,
        response_body_encoding: then.body_encoding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_multi_document_with_block_scalar_and_null_body() {
        let text = "when:\n  path: /v1/messages\n  method: POST\n  query_param: []\n  header:\n  - name: anthropic-version\n    value: 2023-06-01\n  body: '{\"a\":1}'\nthen:\n  status: 200\n  header:\n  - name: Content-Type\n    value: text/event-stream\n  body: |+\n    event: x\n    data: {}\n\n---\nwhen:\n  path: /v1/models\n  method: GET\n  query_param:\n  - name: key\n    value: k\n  header: []\n  body: null\nthen:\n  status: 404\n  header: []\n  body: ''\n";
        let ex = parse_exchanges(text).expect("parse");
        assert_eq!(ex.len(), 2);
        assert_eq!(ex[0].request_headers[0].1, "2023-06-01");
        assert_eq!(ex[0].response_body, "event: x\ndata: {}\n\n");
        assert_eq!(ex[0].content_type(), Some("text/event-stream"));
        assert!(ex[0].is_sse());
        assert_eq!(ex[0].request_json(), Some(serde_json::json!({"a": 1})));
        assert_eq!(ex[1].request_body, None);
        assert_eq!(ex[1].path_and_query(), "/v1/models?key=k");
        assert_eq!(ex[1].status, 404);
    }

    #[test]
    fn unknown_keys_are_errors_with_document_index() {
        let text = "when:\n  path: /\n  method: GET\n  surprise: 1\nthen:\n  status: 200\n";
        let err = parse_exchanges(text).expect_err("must fail");
        assert!(err.starts_with("document 0:"), "{err}");
    }
}
