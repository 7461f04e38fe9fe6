//! The Responses API's stored responses: the records both backends store. A response id
//! names a point in a stored conversation: the last whole turn of a session, then the
//! messages of a turn still open (`pending`: a reply that ended in calls of the caller's
//! tools; the store keeps only whole turns), so `previous_response_id` continues from
//! exactly there.
//!
//! Promises:
//! - an id is stored only for a turn of the given session (else
//!   [`StoreError::NoSuchTurn`](crate::StoreError::NoSuchTurn)), and only once
//!   ([`StoreError::ResponseTaken`](crate::StoreError::ResponseTaken));
//! - removing the session (or its turn) removes its response ids with it (cascade);
//! - `key_id` records which key created the response (`''`: none), so a server can refuse
//!   another key's id.

use crate::TurnId;

/// A response to store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewResponse<'a> {
    pub id: &'a str,
    /// The key that created it; `''` for none.
    pub key_id: &'a str,
    pub session_id: Option<&'a str>,
    /// The last whole turn (of `session_id`) before it.
    pub turn_id: Option<TurnId>,
    /// JSON: the open turn's messages after `turn_id`.
    pub pending: Option<&'a str>,
    /// JSON: the response as answered.
    pub object: &'a str,
}

/// A stored response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseRecord {
    pub id: String,
    /// The key that created it; `''` for none.
    pub key_id: String,
    pub session_id: Option<String>,
    pub turn_id: Option<TurnId>,
    pub pending: Option<String>,
    pub object: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
}

impl NewResponse<'_> {
    /// The record of this response once stored at `created_at`.
    pub(crate) fn record(&self, created_at: i64) -> ResponseRecord {
        ResponseRecord {
            id: self.id.to_owned(),
            key_id: self.key_id.to_owned(),
            session_id: self.session_id.map(str::to_owned),
            turn_id: self.turn_id,
            pending: self.pending.map(str::to_owned),
            object: self.object.to_owned(),
            created_at,
        }
    }
}

impl ResponseRecord {
    /// The record as a response to store (its `created_at` left out).
    pub(crate) fn as_new(&self) -> NewResponse<'_> {
        NewResponse {
            id: &self.id,
            key_id: &self.key_id,
            session_id: self.session_id.as_deref(),
            turn_id: self.turn_id,
            pending: self.pending.as_deref(),
            object: &self.object,
        }
    }
}
