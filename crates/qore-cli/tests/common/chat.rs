//! What the `qore chat` tests share: a temp data dir and project, a server replaying a
//! recorded answer, and readers of requests, JSON lines and the SQLite store.

use std::path::{Path, PathBuf};

use qore_testkit::{reply_from_exchange, Exchange, ReplayServer};
use serde_json::Value;

use super::{base_url, command, exchange, IRREGULAR};

pub const MODEL: &str = "test-model";
/// A recorded streamed text answer.
pub const ANSWER: &str = "openai/regression/chat_compat_finish_reason_natural.yaml";

/// A temp data dir and project dir.
pub struct Dirs {
    pub data: tempfile::TempDir,
    pub project: tempfile::TempDir,
}

impl Dirs {
    pub fn new() -> Dirs {
        Dirs {
            data: tempfile::tempdir().expect("data dir"),
            project: tempfile::tempdir().expect("project dir"),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.data.path().join("qore.db")
    }

    /// `qore chat --url … --model … --project … EXTRA` with this data dir.
    pub fn chat(&self, url: &str, extra: &[&str]) -> tokio::process::Command {
        let project = self.project.path().to_str().expect("UTF-8 path");
        let mut args = vec!["chat", "--url", url, "--model", MODEL, "--project", project];
        args.extend_from_slice(extra);
        let mut cmd = command(&args);
        cmd.env("QORE_DATA_DIR", self.data.path());
        cmd
    }
}

/// A server replaying the recorded answer `times` times, and its base URL.
pub async fn answering(times: usize) -> Option<(ReplayServer, String, Exchange)> {
    let ex = exchange(ANSWER)?;
    let replies = (0..times)
        .map(|_| reply_from_exchange(&ex, IRREGULAR))
        .collect();
    let server = ReplayServer::start(replies).await.expect("server starts");
    let url = base_url(&server, &ex, "/chat/completions");
    Some((server, url, ex))
}

/// `(role, text)` of each message of a request body (string or text-part content).
pub fn roles_and_texts(body: &Value) -> Vec<(String, String)> {
    let messages = body["messages"].as_array().expect("messages");
    messages
        .iter()
        .map(|m| {
            let role = m["role"].as_str().expect("role").to_owned();
            (role, super::content_text(&m["content"]))
        })
        .collect()
}

pub fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    (expected.iter())
        .map(|(role, text)| (role.to_string(), text.to_string()))
        .collect()
}

/// `PRAGMA integrity_check` of the database, and its turns as `(seq, status, messages)`.
pub fn stored_turns(db: &Path, session: &str) -> (String, Vec<(i64, String, i64)>) {
    let conn = rusqlite::Connection::open(db).expect("open the database");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .expect("integrity_check");
    let mut query = conn
        .prepare(
            "SELECT t.seq, t.status, (SELECT count(*) FROM messages m WHERE m.turn_id = t.id)
             FROM turns t WHERE t.session_id = ?1 ORDER BY t.seq",
        )
        .expect("prepare");
    let turns = query
        .query_map([session], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("rows");
    (check, turns)
}

pub fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}
