//! Transcripts: a stored session written out as a file, and a file read in as a new session.
//!
//! Promises:
//! - [`export`] writes a session in qore's own versioned JSON ([`QORE_FORMAT`], version
//!   [`QORE_VERSION`]: the session's metadata, then every turn with its status, usage, model,
//!   agent, times and messages in qore-core's serde form, undone turns included and marked)
//!   or in readable Markdown (a heading per turn, tool calls and results in fenced blocks).
//! - [`import_file`] reads qore's export (exporting the imported session gives the same
//!   document but for the session id and write time) or a QodeAssist chat history (version
//!   0.4, and the legacy 0.1/0.2 row files), and writes it as one new session in one
//!   transaction. What a source holds that qore cannot keep (attachments, file edits, system
//!   messages…) is dropped and counted in [`Imported::notes`].
//! - A bad file is a [`TranscriptError`] naming the file and what is wrong with it (where in
//!   the document, when that is known); nothing panics and nothing is written.
//! - Both work over any [`Store`] backend (SQLite or PostgreSQL) alike.

mod markdown;
mod qodeassist;
mod qore_json;
mod turns;

use std::path::{Path, PathBuf};

use qore_store::{SessionImport, Store, StoreError};

pub use markdown::to_markdown;
pub use qore_json::{Transcript, TranscriptSession, TranscriptTurn, QORE_FORMAT, QORE_VERSION};

/// What went wrong reading or writing a transcript.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file is not a transcript qore can import.
    #[error("{path}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Reading or writing the store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How a session is written out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// qore's versioned JSON ([`Transcript`]), pretty-printed.
    Json,
    /// Readable Markdown.
    Markdown,
}

/// What an import wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The new session's id.
    pub id: String,
    /// `qore` or `QodeAssist <version>`.
    pub source: String,
    /// Turns imported.
    pub turns: usize,
    /// What was dropped or changed on the way in, one line each.
    pub notes: Vec<String>,
}

/// The session `key` (id, name or unique id prefix) as a [`Transcript`].
pub async fn transcript(store: &dyn Store, key: &str) -> Result<Transcript, StoreError> {
    let info = store.session(key).await?;
    let turns = store.turns(&info.id).await?;
    Ok(Transcript::of(&info, &turns))
}

/// The session `key` (id, name or unique id prefix) written out in `format`.
pub async fn export(
    store: &dyn Store,
    key: &str,
    format: ExportFormat,
) -> Result<String, StoreError> {
    let transcript = transcript(store, key).await?;
    Ok(match format {
        ExportFormat::Json => transcript.to_json(),
        ExportFormat::Markdown => to_markdown(&transcript),
    })
}

/// Read `path` (qore's export or a QodeAssist chat history) and store it as a new session.
/// The project directory recorded is `project` when given, else the file's own (qore's
/// export has one), else `default_project`. When the file's session name is taken here, the
/// session is imported without a name (a note says so).
pub async fn import_file(
    store: &dyn Store,
    path: &Path,
    project: Option<&Path>,
    default_project: Option<&Path>,
) -> Result<Imported, TranscriptError> {
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|source| TranscriptError::Read {
            path: path.to_owned(),
            source,
        })?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let parsed = parse(&bytes, name).map_err(|reason| TranscriptError::Invalid {
        path: path.to_owned(),
        reason,
    })?;
    let mut import = parsed.import;
    let mut notes = parsed.notes;
    let own = import.session.project_dir.take();
    import.session.project_dir = (project.map(Path::to_owned))
        .or(own)
        .or_else(|| default_project.map(Path::to_owned));
    let id = match store.import_session(&import).await {
        Err(StoreError::NameTaken(name)) => {
            notes.push(format!(
                "a session named '{name}' exists: imported without a name"
            ));
            import.session.name = None;
            store.import_session(&import).await
        }
        other => other,
    };
    let id = id.map_err(|e| match e {
        StoreError::MalformedTurn(reason) => TranscriptError::Invalid {
            path: path.to_owned(),
            reason: format!("a turn does not make a well-formed conversation: {reason}"),
        },
        other => other.into(),
    })?;
    Ok(Imported {
        id,
        source: parsed.source,
        turns: import.turns.len(),
        notes,
    })
}

/// A file read as an import, before it is written.
struct Parsed {
    source: String,
    import: SessionImport,
    notes: Vec<String>,
}

/// Recognise and read a transcript (`name`: its file name), or say what is wrong with it.
fn parse(bytes: &[u8], name: &str) -> Result<Parsed, String> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    let Some(root) = value.as_object() else {
        return Err("the document is not a JSON object".into());
    };
    match root.get("format") {
        Some(serde_json::Value::String(format)) if format == QORE_FORMAT => {
            return qore_json::parse(value);
        }
        Some(other) => return Err(format!("unknown \"format\": {other}")),
        None => {}
    }
    if root.contains_key("version") && root.contains_key("messages") {
        return qodeassist::parse(root, name);
    }
    Err(format!(
        "neither a qore session export (\"format\": \"{QORE_FORMAT}\") nor a QodeAssist chat \
         history (\"version\" and \"messages\")"
    ))
}
