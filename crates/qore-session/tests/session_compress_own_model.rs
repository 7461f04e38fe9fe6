//! No compression roster (a fresh machine's config): an open session past the threshold is
//! summarised by its own model, with the bundled compressor instructions, and goes on in
//! the compressed session; a stored session cannot be, and the error names the roster.

mod session_compress_common;

use qore_client::CancellationToken;
use qore_session::Compressing;
use qore_testkit::chat::{chat_answer, sent_messages};
use qore_testkit::ReplayServer;
use session_compress_common::{fixture_in, long_message, say, SUMMARY};

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
    let fx = fixture_in(dir, Some(Some(0.8))).await;
    for text in ["one", "two", "three"] {
        say(&fx.session, text).await;
    }
    say(&fx.session, &long_message(60)).await;

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
    assert_ne!(fx.session.id(), Some(fx.original.as_str()));

    // A stored session has no model of its own: the empty roster is named.
    let cancel = CancellationToken::new();
    let refused = (fx.manager)
        .compress(Compressing::Stored(&fx.original), None, &cancel)
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(refused.contains("compression roster"), "{refused}");
}
