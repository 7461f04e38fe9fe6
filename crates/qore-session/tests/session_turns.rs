//! Sessions over a real loopback server (qore-testkit) and a real SQLite store: what a
//! continued session sends, what a failed or cancelled turn leaves, one request in flight.

use std::sync::Arc;

use qore_client::{protocols, CancellationToken, Client, ClientConfig};
use qore_core::{History, Message, Role};
use qore_session::{Session, SessionError, SessionManager, SessionSetup, Target, TurnOutcome};
use qore_store::{NewSession, SqliteStore, Store, StoreError};
use qore_testkit::chat::{chat_answer, role_pairs, sent_messages};
use qore_testkit::{ReplayServer, Reply};

fn bad_request() -> Reply {
    Reply::json(
        400,
        r#"{"error":{"message":"no","type":"invalid_request_error"}}"#,
    )
}

fn target(server: &ReplayServer) -> Target {
    let config = ClientConfig {
        base_url: format!("{}/v1", server.url()),
        ..ClientConfig::default()
    };
    let protocol = protocols::by_name("openai-chat").unwrap();
    Target::new(Client::new(protocol, config).unwrap(), "tiny")
}

fn manager(db: &std::path::Path) -> SessionManager {
    let store = Arc::new(SqliteStore::open(db).unwrap());
    let config = qore_agents::config::Config::load(None);
    SessionManager::new(Some(store), config, qore_session::traced_notes())
}

fn statuses(db: &std::path::Path, session: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut query = conn
        .prepare("SELECT status FROM turns WHERE session_id = ?1 ORDER BY seq")
        .unwrap();
    let rows = query.query_map([session], |row| row.get(0)).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

async fn send(session: &Session, text: &str) -> TurnOutcome {
    (session.send(Message::user(text), &CancellationToken::new(), |_| {})).await
}

#[tokio::test]
async fn a_reopened_session_sends_its_earlier_turns() {
    let server = ReplayServer::start(vec![chat_answer("Blue."), chat_answer("Green.")])
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("qore.db");
    let id = {
        let manager = manager(&db);
        let mut setup = SessionSetup::new(target(&server));
        setup.layers.add("Answer in one word.");
        let session = manager.create(&NewSession::default(), setup).await.unwrap();
        let outcome = send(&session, "Sky colour?").await;
        assert!(
            matches!(outcome, TurnOutcome::Finished { .. }),
            "{outcome:?}"
        );
        let id = session.id().unwrap().to_owned();
        manager.release(session);
        id
    };
    // Another manager over the same file: the session comes back from disk.
    let manager = manager(&db);
    let mut setup = SessionSetup::new(target(&server));
    setup.layers.add("Answer in one word.");
    let prefix = &id[..8];
    let session = manager.open(prefix, setup).await.unwrap();
    let outcome = send(&session, "Grass colour?").await;
    assert!(
        matches!(outcome, TurnOutcome::Finished { .. }),
        "{outcome:?}"
    );
    assert_eq!(
        sent_messages(&server.requests()[1]),
        role_pairs(&[
            ("system", "Answer in one word."),
            ("user", "Sky colour?"),
            ("assistant", "Blue."),
            ("user", "Grass colour?"),
        ])
    );
    assert_eq!(statuses(&db, &id), ["finished", "finished"]);
    assert_eq!(session.history().await.len(), 4);
}

#[tokio::test]
async fn a_failed_turn_is_stored_and_the_next_request_has_one_user_message_in_a_row() {
    let server = ReplayServer::start(vec![bad_request(), chat_answer("Done.")])
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("qore.db");
    let manager = manager(&db);
    let session = (manager
        .create(&NewSession::default(), SessionSetup::new(target(&server)))
        .await)
        .unwrap();
    let outcome = send(&session, "First try.").await;
    let Some(error) = outcome.error() else {
        panic!("{outcome:?}");
    };
    assert_eq!(error.status(), Some(400), "{error:?}");
    let outcome = send(&session, "Second try.").await;
    assert!(
        matches!(outcome, TurnOutcome::Finished { .. }),
        "{outcome:?}"
    );
    let messages = sent_messages(&server.requests()[1]);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0].0, "user");
    assert!(
        messages[0].1.contains("First try.") && messages[0].1.contains("Second try."),
        "{messages:?}"
    );
    let id = session.id().unwrap();
    assert_eq!(statuses(&db, id), ["failed", "finished"]);
    // History keeps what happened: the failed turn's user message, then the next turn.
    let stored: History = SqliteStore::open(&db).unwrap().history(id).await.unwrap();
    let roles: Vec<Role> = stored.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::User, Role::Assistant]);
}

#[tokio::test]
async fn a_second_send_cancels_the_first_which_is_stored_cancelled() {
    // The first answer stalls after a few bytes with the connection open.
    let server = ReplayServer::start(vec![
        chat_answer("Never.").stall_after(20),
        chat_answer("Yes."),
    ])
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("qore.db");
    let manager = manager(&db);
    let setup = SessionSetup::new(target(&server));
    let session = Arc::new(manager.create(&NewSession::default(), setup).await.unwrap());
    let first = tokio::spawn({
        let session = session.clone();
        async move { send(&session, "Slow question.").await }
    });
    while server.requests().is_empty() {
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let second = send(&session, "Quick question.").await;
    // A guard, not a timing claim: without the cancel, the first stalls for minutes.
    let first = tokio::time::timeout(std::time::Duration::from_secs(60), first);
    let first = first.await.expect("the first send was cancelled").unwrap();
    assert!(matches!(first, TurnOutcome::Cancelled { .. }), "{first:?}");
    assert!(matches!(second, TurnOutcome::Finished { .. }), "{second:?}");
    let id = session.id().unwrap();
    assert_eq!(statuses(&db, id), ["cancelled", "finished"]);
    let history = session.history().await;
    let texts: Vec<String> = history.iter().map(Message::text).collect();
    assert_eq!(texts, ["Slow question.", "Quick question.", "Yes."]);
}

#[tokio::test]
async fn an_ephemeral_manager_saves_nothing_and_opens_nothing() {
    let server = ReplayServer::start(vec![chat_answer("Hi.")]).await.unwrap();
    let config = qore_agents::config::Config::load(None);
    let manager = SessionManager::new(None, config, qore_session::traced_notes());
    let setup = SessionSetup::new(target(&server));
    let session = manager.create(&NewSession::default(), setup).await.unwrap();
    assert_eq!(session.id(), None);
    let outcome = send(&session, "Hello.").await;
    assert!(
        matches!(outcome, TurnOutcome::Finished { .. }),
        "{outcome:?}"
    );
    let setup = SessionSetup::new(target(&server));
    let refused = manager.open("anything", setup).await.err();
    assert!(
        matches!(refused, Some(SessionError::Ephemeral(_))),
        "{refused:?}"
    );
    assert!(manager.latest(dir_of_nothing()).await.unwrap().is_none());
}

fn dir_of_nothing() -> &'static std::path::Path {
    std::path::Path::new("/nonexistent-project")
}

#[tokio::test]
async fn an_unknown_session_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let manager = manager(&dir.path().join("qore.db"));
    let server = ReplayServer::start(vec![]).await.unwrap();
    let refused = manager
        .open("nope", SessionSetup::new(target(&server)))
        .await
        .err();
    assert!(
        matches!(refused, Some(SessionError::Store(StoreError::NotFound(_)))),
        "{refused:?}"
    );
}
