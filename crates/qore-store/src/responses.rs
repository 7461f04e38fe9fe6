//! The Responses API's stored responses: a response id names one stored turn of a session,
//! so `previous_response_id` continues that session from that turn.
//!
//! Promises:
//! - [`Store::put_response`] stores an id only for a turn of the given session (else
//!   [`StoreError::NoSuchTurn`]); an id is stored once ([`StoreError::ResponseTaken`]);
//! - removing the session (or its turn) removes its response ids with it (cascade);
//! - `key_id` records which key created the response (`''`: none), so a server can refuse
//!   another key's id;
//! - every method is one plain SQL statement: the surface another backend implements.

use std::time::SystemTime;

use rusqlite::{params, OptionalExtension};

use crate::store::millis;
use crate::{Store, StoreError, TurnId};

/// A stored response id and the turn it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseRecord {
    pub id: String,
    /// The key that created it; `''` for none.
    pub key_id: String,
    pub session_id: String,
    pub turn_id: TurnId,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
}

impl Store {
    /// Store the response id `id` for turn `turn_id` of session `session_id`.
    pub fn put_response(
        &self,
        id: &str,
        key_id: &str,
        session_id: &str,
        turn_id: TurnId,
    ) -> Result<ResponseRecord, StoreError> {
        let created_at = millis(SystemTime::now());
        let inserted = self.conn.execute(
            "INSERT INTO responses (id, key_id, session_id, turn_id, created_at)
             SELECT ?1, ?2, ?3, ?4, ?5
             WHERE EXISTS (SELECT 1 FROM turns WHERE id = ?4 AND session_id = ?3)",
            params![id, key_id, session_id, turn_id.0, created_at],
        );
        match inserted {
            Ok(0) => Err(StoreError::NoSuchTurn(turn_id.0)),
            Ok(_) => Ok(ResponseRecord {
                id: id.to_owned(),
                key_id: key_id.to_owned(),
                session_id: session_id.to_owned(),
                turn_id,
                created_at,
            }),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
            {
                Err(StoreError::ResponseTaken(id.to_owned()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The stored response `id`, if there is one.
    pub fn response(&self, id: &str) -> Result<Option<ResponseRecord>, StoreError> {
        let found = self
            .conn
            .query_row(
                "SELECT id, key_id, session_id, turn_id, created_at FROM responses WHERE id = ?1",
                [id],
                |row| {
                    Ok(ResponseRecord {
                        id: row.get(0)?,
                        key_id: row.get(1)?,
                        session_id: row.get(2)?,
                        turn_id: TurnId(row.get(3)?),
                        created_at: row.get(4)?,
                    })
                },
            )
            .optional()?;
        Ok(found)
    }

    /// Forget the response id `id` (its turn stays); whether there was one.
    pub fn delete_response(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .execute("DELETE FROM responses WHERE id = ?1", [id])?
            > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewSession, TurnRecord, TurnStatus};
    use qore_core::Message;

    fn turn() -> TurnRecord {
        TurnRecord {
            user: Message::user("hi"),
            replies: vec![Message::assistant("yo")],
            usage: qore_core::Usage::default(),
            model: None,
            agent: None,
            started_at: SystemTime::UNIX_EPOCH,
            finished_at: SystemTime::UNIX_EPOCH,
            status: TurnStatus::Finished,
            file_changes: Vec::new(),
        }
    }

    #[test]
    fn a_response_names_a_turn_until_deleted_or_its_session_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path().join("q.db")).unwrap();
        let session = store.create_session(&NewSession::default()).unwrap();
        let other = store.create_session(&NewSession::default()).unwrap();
        let turn_id = store.append_turn(&session, &turn()).unwrap();
        let put = store
            .put_response("resp_1", "k1", &session, turn_id)
            .unwrap();
        assert_eq!(store.response("resp_1").unwrap(), Some(put));
        // (id, session, turn, the error's words)
        let refused = [
            ("resp_1", session.as_str(), turn_id, "already exists"),
            ("resp_2", other.as_str(), turn_id, "no turn"),
            ("resp_3", session.as_str(), TurnId(999), "no turn"),
        ];
        for (id, session, turn, words) in refused {
            let why = store.put_response(id, "", session, turn).unwrap_err();
            assert!(why.to_string().contains(words), "{id}: {why}");
        }
        assert!(store.delete_response("resp_1").unwrap());
        assert!(!store.delete_response("resp_1").unwrap());
        assert_eq!(store.response("resp_1").unwrap(), None);
        store.put_response("resp_4", "", &session, turn_id).unwrap();
        store.remove(&session).unwrap();
        assert_eq!(store.response("resp_4").unwrap(), None);
    }
}
