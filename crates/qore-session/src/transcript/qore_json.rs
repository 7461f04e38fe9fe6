//! qore's own transcript format: `{"format": "qore-session", "version": 1, "session": {…},
//! "turns": [{…, "messages": [qore-core messages]}]}`, times as RFC 3339 UTC with
//! milliseconds.
//!
//! Promises: [`Transcript::of`] writes everything the store holds about a session (undone
//! turns included, marked); [`parse`] reads it back into an import that stores the same
//! turns, or names the place in the document that is wrong; a version other than
//! [`QORE_VERSION`] is refused, never guessed at.

use std::time::SystemTime;

use qore_core::{Message, Usage};
use qore_store::{
    time_of, ImportTurn, NewSession, SessionImport, SessionInfo, StoredTurn, TurnRecord, TurnStatus,
};
use serde::{Deserialize, Serialize};

use super::Parsed;

/// The `format` of qore's export.
pub const QORE_FORMAT: &str = "qore-session";
/// The `version` this qore writes and reads.
pub const QORE_VERSION: u32 = 1;

/// One exported session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// Always [`QORE_FORMAT`].
    pub format: String,
    /// Always [`QORE_VERSION`].
    pub version: u32,
    /// The session's metadata.
    pub session: TranscriptSession,
    /// Every turn, undone ones included, in order.
    pub turns: Vec<TranscriptTurn>,
}

/// The session's metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptSession {
    /// The session's id when exported.
    pub id: String,
    /// Its name, when it had one.
    #[serde(default)]
    pub name: Option<String>,
    /// Its title, when it had one.
    #[serde(default)]
    pub title: Option<String>,
    /// The project directory it belonged to.
    #[serde(default)]
    pub project_dir: Option<String>,
    /// The agent it ran with.
    #[serde(default)]
    pub agent: Option<String>,
    /// The model it ran with.
    #[serde(default)]
    pub model: Option<String>,
    /// When it was created.
    #[serde(with = "rfc3339")]
    pub created_at: SystemTime,
    /// When it last changed.
    #[serde(with = "rfc3339")]
    pub updated_at: SystemTime,
    /// For a compressed session: the original's id.
    #[serde(default)]
    pub parent_id: Option<String>,
}

/// One turn: how it ran and its messages (the user's first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptTurn {
    /// 1-based position in the session.
    pub seq: i64,
    /// How the turn ended (finished, failed, cancelled).
    pub status: TurnStatus,
    /// Undone turns are kept but are not part of the conversation.
    #[serde(default)]
    pub undone: bool,
    /// The model that answered.
    #[serde(default)]
    pub model: Option<String>,
    /// The agent that ran the turn.
    #[serde(default)]
    pub agent: Option<String>,
    /// When the turn started.
    #[serde(with = "rfc3339")]
    pub started_at: SystemTime,
    /// When it ended.
    #[serde(with = "rfc3339")]
    pub finished_at: SystemTime,
    /// Token counts of the turn.
    #[serde(default)]
    pub usage: Usage,
    /// The turn's messages: the user's, then every reply and tool result.
    pub messages: Vec<Message>,
}

impl Transcript {
    /// A stored session and its turns as a transcript.
    pub fn of(info: &SessionInfo, turns: &[StoredTurn]) -> Transcript {
        let session = TranscriptSession {
            id: info.id.clone(),
            name: info.name.clone(),
            title: info.title.clone(),
            project_dir: info.project_dir.clone(),
            agent: info.agent.clone(),
            model: info.model.clone(),
            created_at: time_of(info.created_at),
            updated_at: time_of(info.updated_at),
            parent_id: info.parent_id.clone(),
        };
        let turns = turns.iter().map(TranscriptTurn::of).collect();
        Transcript {
            format: QORE_FORMAT.to_owned(),
            version: QORE_VERSION,
            session,
            turns,
        }
    }

    /// Pretty-printed JSON, ending with a newline.
    pub fn to_json(&self) -> String {
        // A tree of strings, numbers and qore-core's own types always serializes.
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

impl TranscriptTurn {
    fn of(turn: &StoredTurn) -> TranscriptTurn {
        let record = &turn.record;
        TranscriptTurn {
            seq: turn.seq,
            status: record.status,
            undone: turn.undone,
            model: record.model.clone(),
            agent: record.agent.clone(),
            started_at: record.started_at,
            finished_at: record.finished_at,
            usage: record.usage,
            messages: std::iter::once(record.user.clone())
                .chain(record.replies.iter().cloned())
                .collect(),
        }
    }
}

/// Read qore's export (already known to say `"format": "qore-session"`).
pub(super) fn parse(value: serde_json::Value) -> Result<Parsed, String> {
    let version = value.get("version");
    if version != Some(&serde_json::Value::from(QORE_VERSION)) {
        let shown = version.map_or("none".to_owned(), |v| v.to_string());
        return Err(format!(
            "qore-session version {shown} is not supported (this qore reads version \
             {QORE_VERSION})"
        ));
    }
    let transcript: Transcript =
        serde_path_to_error::deserialize(value).map_err(|e| match e.path().to_string() {
            path if path == "." => e.inner().to_string(),
            path => format!("{path}: {}", e.inner()),
        })?;
    let session = transcript.session;
    let mut turns = Vec::with_capacity(transcript.turns.len());
    for (at, turn) in transcript.turns.into_iter().enumerate() {
        let mut messages = turn.messages.into_iter();
        let user = messages
            .next()
            .ok_or_else(|| format!("turns[{at}]: a turn has no messages"))?;
        turns.push(ImportTurn {
            record: TurnRecord {
                user,
                replies: messages.collect(),
                usage: turn.usage,
                model: turn.model,
                agent: turn.agent,
                started_at: turn.started_at,
                finished_at: turn.finished_at,
                status: turn.status,
                // An export carries no file contents: an imported turn cannot be undone.
                file_changes: Vec::new(),
            },
            undone: turn.undone,
        });
    }
    let import = SessionImport {
        session: NewSession {
            name: session.name,
            project_dir: session.project_dir.map(Into::into),
            agent: session.agent,
            model: session.model,
            parent_id: session.parent_id,
        },
        title: session.title,
        created_at: Some(session.created_at),
        turns,
    };
    Ok(Parsed {
        source: "qore".to_owned(),
        import,
        notes: Vec::new(),
    })
}

/// RFC 3339 UTC with milliseconds, e.g. `2026-11-25T14:58:04.123Z`.
mod rfc3339 {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(at: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_rfc3339_millis(*at))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_rfc3339(&text).map_err(|e| {
            serde::de::Error::custom(format!("'{text}' is not an RFC 3339 UTC time ({e})"))
        })
    }
}
