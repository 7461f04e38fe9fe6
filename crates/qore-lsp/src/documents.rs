//! The open documents: their text as the editor has it, kept in step by `didOpen`,
//! `didChange` (incremental or whole) and `didClose`.
//!
//! Promises:
//! - positions are LSP positions (UTF-16 code units), turned into byte offsets by
//!   `qore_session`'s [`Cursor`] rules: past the end of a line or of the document is clamped,
//!   a range given backwards is read from its earlier end: never a panic;
//! - a change without a range replaces the whole text; changes apply in the order given;
//! - a change for a document that is not open is ignored (false from [`Documents::change`]);
//! - each document records whether the ignore rules exclude it ([`Document::ignored`], fixed
//!   at open) and when it was last opened or changed ([`Documents::others`] lists the most
//!   recent first, never an ignored one).

use std::collections::HashMap;
use std::path::PathBuf;

use qore_session::completion::context::Cursor;
use tower_lsp_server::ls_types::{Position, TextDocumentContentChangeEvent};

/// One open document.
#[derive(Debug, Clone)]
pub struct Document {
    /// The file behind the URI (`None` for other schemes).
    pub path: Option<PathBuf>,
    pub text: String,
    pub version: i32,
    /// Excluded by `.qoreignore`/`.gitignore`: no completion, its text goes nowhere.
    pub ignored: bool,
    /// Increases with every open or change across all documents.
    touched: u64,
}

/// The open documents, by URI.
#[derive(Debug, Default)]
pub struct Documents {
    by_uri: HashMap<String, Document>,
    clock: u64,
}

/// The cursor of an LSP position.
pub fn cursor(position: Position) -> Cursor {
    Cursor {
        line: position.line,
        character: position.character,
    }
}

impl Documents {
    /// Open (or reopen) `uri`.
    pub fn open(
        &mut self,
        uri: &str,
        path: Option<PathBuf>,
        text: String,
        version: i32,
        ignored: bool,
    ) {
        self.clock += 1;
        let document = Document {
            path,
            text,
            version,
            ignored,
            touched: self.clock,
        };
        self.by_uri.insert(uri.to_owned(), document);
    }

    /// Apply `changes` to `uri`; false when it is not open.
    pub fn change(
        &mut self,
        uri: &str,
        version: i32,
        changes: &[TextDocumentContentChangeEvent],
    ) -> bool {
        let Some(document) = self.by_uri.get_mut(uri) else {
            return false;
        };
        for change in changes {
            match change.range {
                None => document.text.clone_from(&change.text),
                Some(range) => {
                    let a = cursor(range.start).offset_in(&document.text);
                    let b = cursor(range.end).offset_in(&document.text);
                    let (from, to) = if a <= b { (a, b) } else { (b, a) };
                    document.text.replace_range(from..to, &change.text);
                }
            }
        }
        document.version = version;
        self.clock += 1;
        document.touched = self.clock;
        true
    }

    pub fn close(&mut self, uri: &str) {
        self.by_uri.remove(uri);
    }

    pub fn get(&self, uri: &str) -> Option<&Document> {
        self.by_uri.get(uri)
    }

    /// The open documents other than `uri` and not ignored, the most recently touched first.
    pub fn others<'a>(&'a self, uri: &str) -> Vec<&'a Document> {
        let mut others: Vec<&Document> = (self.by_uri.iter())
            .filter(|(u, d)| u.as_str() != uri && !d.ignored)
            .map(|(_, d)| d)
            .collect();
        others.sort_by_key(|d| std::cmp::Reverse(d.touched));
        others
    }

    /// How many documents are open.
    pub fn len(&self) -> usize {
        self.by_uri.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_uri.is_empty()
    }

    /// The bytes the store holds for its documents' text and paths (capacity, not length).
    pub fn heap_bytes(&self) -> usize {
        self.by_uri
            .iter()
            .map(|(uri, d)| {
                let path = d.path.as_ref().map_or(0, |p| p.as_os_str().len());
                uri.capacity() + d.text.capacity() + path + std::mem::size_of::<Document>()
            })
            .sum()
    }
}

#[cfg(test)]
#[path = "documents_tests.rs"]
mod tests;
