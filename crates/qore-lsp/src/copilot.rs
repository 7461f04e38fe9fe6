//! The Copilot language server's own protocol, as its editor plugins speak it (Qt Creator's
//! Copilot plugin, copilot.lua, LSP-copilot, older copilot.vim): the shapes of
//! `getCompletions`/`getCompletionsCycling` and of the account stubs, and the conversion of
//! a completion into a Copilot item. Pure: the handlers are in [`crate::copilot_methods`].
//!
//! Promises:
//! - [`CompletionRequest`] reads `doc.{uri,version,position}`, each falling back to the
//!   top-level `textDocument.{uri,version}` and `position`; any other key (`_`, `source`,
//!   `insertSpaces`, ...) is ignored; without a URI or a position it is an error naming what
//!   is missing;
//! - [`item`] is the agent's convention: `text` is the cursor's line left of the cursor
//!   followed by the completion, `range` runs from character 0 of the cursor's line to the
//!   end of what the completion replaces (the cursor, or past the characters it overwrites),
//!   `displayText` is the completion alone, `position` the request's, `docVersion` the
//!   document's version, and `uuid` a fresh random UUID; positions count UTF-16 units, as
//!   every LSP position here does;
//! - the account answers say qore is signed in as user "qore" (no account exists): the
//!   plugins that wait for a signed-in user (copilot.lua: a truthy `user`; LSP-copilot:
//!   `status == "OK"`) go on.

use serde::Deserialize;
use serde_json::{json, Value};
use tower_lsp_server::ls_types::{Position, Range, Uri};

/// The user the account answers name.
pub const USER: &str = "qore";

/// The `doc` object of a Copilot completion request (the keys qore reads).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Doc {
    uri: Option<Uri>,
    version: Option<i64>,
    position: Option<Position>,
}

/// The top-level `textDocument` of a Copilot completion request.
#[derive(Debug, Deserialize)]
struct TextDocument {
    uri: Option<Uri>,
    version: Option<i64>,
}

/// The params as sent: every key optional, unknown keys ignored.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Sent {
    doc: Option<Doc>,
    text_document: Option<TextDocument>,
    position: Option<Position>,
}

/// What a `getCompletions`/`getCompletionsCycling` request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    pub uri: Uri,
    pub position: Position,
    /// The version the client says the document has (`None`: not given).
    pub version: Option<i64>,
}

impl CompletionRequest {
    /// Read the params of a Copilot completion request (see the module doc).
    pub fn from_params(params: Value) -> Result<CompletionRequest, String> {
        let sent: Sent = serde_json::from_value(params).map_err(|e| e.to_string())?;
        let doc = sent.doc.unwrap_or_default();
        let (top_uri, top_version) = match sent.text_document {
            Some(td) => (td.uri, td.version),
            None => (None, None),
        };
        let uri = doc
            .uri
            .or(top_uri)
            .ok_or("no doc.uri nor textDocument.uri")?;
        let position = (doc.position.or(sent.position)).ok_or("no doc.position nor position")?;
        Ok(CompletionRequest {
            uri,
            position,
            version: doc.version.or(top_version),
        })
    }
}

/// One Copilot completion item for `completion` at `position` (see the module doc).
/// `line_before` is the cursor's line left of the cursor; `end` is where the replaced text
/// ends (the cursor when nothing right of it is overwritten).
pub fn item(
    line_before: &str,
    completion: &str,
    position: Position,
    end: Position,
    version: i64,
) -> Value {
    let range = Range {
        start: Position::new(end.line, 0),
        end,
    };
    json!({
        "uuid": uuid::Uuid::new_v4().to_string(),
        "text": format!("{line_before}{completion}"),
        "displayText": completion,
        "position": position,
        "range": range,
        "docVersion": version,
    })
}

/// `checkStatus` and `signInConfirm`.
pub fn signed_in() -> Value {
    json!({"status": "OK", "user": USER})
}

/// `signInInitiate`: nothing to sign in to.
pub fn already_signed_in() -> Value {
    json!({"status": "AlreadySignedIn", "user": USER})
}

/// `signOut`.
pub fn signed_out() -> Value {
    json!({"status": "NotSignedIn"})
}

/// `getVersion`.
pub fn version() -> Value {
    json!({"version": env!("CARGO_PKG_VERSION")})
}

/// The `uuid` of a `notifyShown`/`notifyAccepted` params, or of a
/// `didShowCompletion`/`didPartiallyAcceptCompletion` params' `item` (its `command`'s first
/// argument, else its own `uuid`); `None` when there is none.
pub fn uuid_of(params: &Value) -> Option<String> {
    let item = params.get("item");
    let found = params.get("uuid").or_else(|| {
        let item = item?;
        (item
            .pointer("/command/arguments/0")
            .filter(|v| v.is_string()))
        .or(item.get("uuid"))
    });
    found.and_then(Value::as_str).map(str::to_owned)
}

/// The `uuids` of a `notifyRejected` params (strings only).
pub fn rejected_uuids(params: &Value) -> Vec<String> {
    let list = params.get("uuids").and_then(Value::as_array);
    let names = list.into_iter().flatten().filter_map(Value::as_str);
    names.map(str::to_owned).collect()
}

#[cfg(test)]
#[path = "copilot_tests.rs"]
mod tests;
