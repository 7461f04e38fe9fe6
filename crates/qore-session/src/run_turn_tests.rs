//! The session holds its encode cache across turns: after a continuation, the cache has an
//! entry for every message the last request carried (a cache made per turn would leave the
//! session's empty). That the bytes are right is `tests/session_encode_cache.rs`.

use qore_client::{protocols, CancellationToken, Client, ClientConfig};
use qore_core::{History, Message};
use qore_testkit::chat::chat_answer;
use qore_testkit::ReplayServer;

use crate::{traced_notes, Session, SessionSetup, Target};

#[tokio::test]
async fn a_continuation_finds_the_earlier_messages_in_the_sessions_cache() {
    let replies = vec![chat_answer("Red."), chat_answer("Green.")];
    let server = ReplayServer::start(replies).await.unwrap();
    let config = ClientConfig {
        base_url: format!("{}/v1", server.url()),
        ..ClientConfig::default()
    };
    let client = Client::new(protocols::by_name("openai-chat").unwrap(), config).unwrap();
    let mut setup = SessionSetup::new(Target::new(client, "tiny"));
    setup.layers.add("Be brief.");
    let session = Session::new(None, None, History::new(), setup, &traced_notes());
    let cancel = CancellationToken::new();
    for text in ["One?", "Two?"] {
        drop(session.send(Message::user(text), &cancel, |_| {}).await);
    }
    // System, One?, Red., Two?: the second request's messages.
    assert_eq!(session.state.lock().await.cache.len(), 4);
    assert_eq!(server.requests().len(), 2);
}
