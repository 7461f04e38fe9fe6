//! No compression roster (a fresh machine's config): an open session past the threshold is
//! summarised by its own model, with the bundled compressor instructions, and goes on in
//! the compressed session; a stored session cannot be, and the error names the roster.

use std::sync::Arc;

use qore_agents::config::Config;
use qore_client::CancellationToken;
use qore_core::Message;
use qore_session::{Compressing, SessionManager, SessionSetup, TargetSpec, TurnOutcome};
use qore_store::{NewSession, SqliteStore};
use qore_testkit::chat::{chat_answer, sent_messages};
use qore_testkit::ReplayServer;

const SUMMARY: &str = "SUMMARY: they said one, then answered first.";

#[tokio::test]
async fn without_a_roster_a_session_is_summarised_by_its_own_model() {
    let replies = ["first", "second", "third", SUMMARY, "fourth"].map(chat_answer);
    let server = ReplayServer::start(replies.to_vec()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "providers/chat.toml",
            format!(
                "name = \"chat\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
                server.url()
            ),
        ),
        (
            "agents/talker.toml",
            "name = \"talker\"\nextends = \"openai-chat\"\nprovider = \"chat\"\n\
             model = \"tiny\"\nsystem_prompt = \"Be brief.\"\ncontext_window = 100\n"
                .to_owned(),
        ),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let store = SqliteStore::open(dir.path().join("qore.db")).unwrap();
    let mut manager = SessionManager::new(
        Some(Arc::new(store)),
        Config::load(Some(dir.path())),
        qore_session::traced_notes(),
    );
    manager.set_compress_at(Some(0.8));
    let spec = TargetSpec {
        agent: Some("talker".into()),
        project: Some(dir.path().to_owned()),
        ..TargetSpec::default()
    };
    let target = manager.reach(&spec).await.unwrap();
    let new = NewSession {
        project_dir: Some(dir.path().to_owned()),
        ..NewSession::default()
    };
    let session = manager
        .create(&new, SessionSetup::new(target))
        .await
        .unwrap();
    let original = session.id().unwrap().to_owned();
    let cancel = CancellationToken::new();
    let long: String = (0..60).map(|i| format!(" word{i}")).collect();
    for text in ["one", "two", "three", long.as_str()] {
        let outcome = session.send(Message::user(text), &cancel, |_| {}).await;
        assert!(
            matches!(outcome, TurnOutcome::Finished { .. }),
            "{outcome:?}"
        );
    }

    // The fourth request is the summary, asked of the session's own model with the bundled
    // compressor instructions (not the talker's prompt), over the oldest turn only.
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let summary = requests[3].json().unwrap();
    assert_eq!(summary["model"], "tiny", "{summary}");
    let asked = sent_messages(&requests[3]);
    assert_eq!(asked[0].0, "system", "{asked:?}");
    assert_ne!(asked[0].1, "Be brief.", "{asked:?}");
    assert!(asked[1].1.contains("one") && asked[1].1.contains("first"));
    assert!(!asked[1].1.contains("second"), "{asked:?}");
    // Then the send goes on in the compressed session, from the summary.
    let sent = sent_messages(&requests[4]);
    assert!(sent.iter().any(|(_, text)| text == SUMMARY), "{sent:?}");
    assert_ne!(session.id(), Some(original.as_str()));

    // A stored session has no model of its own: the empty roster is named.
    let refused = manager
        .compress(Compressing::Stored(&original), None, &cancel)
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(refused.contains("compression roster"), "{refused}");
}
