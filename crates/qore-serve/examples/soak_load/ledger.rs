//! The ledger: one JSON line per write the server acknowledged, appended and flushed as it
//! happens (so a load generator that dies leaves what it was told), read back by `check`.
//!
//! Acknowledged means: a 200 whose body is the dialect's answer (not streamed), or a stream
//! that reached the dialect's success event (`sse.rs`), for a request that asked for a write:
//! a Responses request with `store: true` (the entry holds its response id) or a Chat /
//! Messages request with `x-qore-session` (the entry holds the session's name). Each entry
//! has the turn's user text (unique in the run) and the answer's text as the client saw it.

use std::io::{BufRead, Write};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// One acknowledged write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Which request it was, e.g. `responses stream continue` (for reports).
    pub kind: String,
    /// When the acknowledgement arrived, milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The process that answered (`x-qore-backend`), when the load balancer said.
    pub backend: String,
    /// The stored response's id (Responses).
    pub id: Option<String>,
    /// The named session (`x-qore-session`).
    pub session: Option<String>,
    /// The `previous_response_id` the request continued from.
    pub previous: Option<String>,
    /// The turn's user text.
    pub user: String,
    /// The answer's text, as the client read it.
    pub answer: String,
}

/// An append-only ledger file.
pub struct Ledger {
    file: Mutex<std::fs::File>,
}

impl Ledger {
    /// A new, empty ledger at `path` (an existing file is replaced).
    pub fn create(path: &str) -> Result<Ledger, String> {
        let file = std::fs::File::create(path).map_err(|e| format!("ledger {path}: {e}"))?;
        Ok(Ledger {
            file: Mutex::new(file),
        })
    }

    /// Append `entry` and flush it to the file.
    pub fn append(&self, entry: &Entry) -> Result<(), String> {
        let mut line = serde_json::to_string(entry).map_err(|e| e.to_string())?;
        line.push('\n');
        let mut file = self
            .file
            .lock()
            .map_err(|_| "ledger lock poisoned".to_owned())?;
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|e| format!("ledger write: {e}"))
    }
}

/// Every entry of the ledger at `path`. A last line cut short (the writer died mid-line) is
/// skipped; any other unreadable line is an error.
pub fn read(path: &str) -> Result<Vec<Entry>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("ledger {path}: {e}"))?;
    let lines: Vec<String> = std::io::BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("ledger {path}: {e}"))?;
    let mut entries = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(entry) => entries.push(entry),
            Err(_) if n + 1 == lines.len() => {}
            Err(e) => return Err(format!("ledger {path}:{}: {e}", n + 1)),
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(user: &str) -> Entry {
        Entry {
            kind: "chat stream session".into(),
            at_ms: 1,
            backend: "q1".into(),
            id: None,
            session: Some("soak-1".into()),
            previous: None,
            user: user.into(),
            answer: format!("re: {user}"),
        }
    }

    #[test]
    fn entries_come_back_as_written_and_a_torn_last_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.jsonl");
        let path = path.to_str().unwrap();
        let ledger = Ledger::create(path).unwrap();
        ledger.append(&entry("a")).unwrap();
        ledger.append(&entry("b")).unwrap();
        assert_eq!(read(path).unwrap(), vec![entry("a"), entry("b")]);

        let mut text = std::fs::read_to_string(path).unwrap();
        text.push_str("{\"kind\":\"cha");
        std::fs::write(path, &text).unwrap();
        assert_eq!(read(path).unwrap(), vec![entry("a"), entry("b")]);

        std::fs::write(path, format!("garbage\n{text}")).unwrap();
        assert!(read(path).is_err());
    }
}
