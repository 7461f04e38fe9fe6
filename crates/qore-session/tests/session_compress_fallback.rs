//! When a session does not compress although it is past the threshold: `QORE_COMPRESS_AT=off`
//! (read from the real environment: this file's only reader of it), and a compression that
//! fails, which warns in one line and sends the whole history; either way the turn finishes.

mod session_compress_common;

use qore_testkit::chat::{chat_answer, sent_messages};
use qore_testkit::{ReplayServer, Reply};
use session_compress_common::{fixture, long_message, say};

fn answers() -> Vec<Reply> {
    ["first", "second", "third", "fourth"]
        .iter()
        .map(|a| chat_answer(a))
        .collect()
}

#[tokio::test]
async fn past_the_threshold_the_whole_history_goes_when_compression_is_off_or_fails() {
    std::env::set_var("QORE_COMPRESS_AT", "off");
    let refusal =
        r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#;
    // (threshold: None = the environment's, the compression server's answer, warned)
    let cases = [
        (None, chat_answer("unused"), false),
        (Some(Some(0.8)), Reply::json(401, refusal), true),
    ];
    for (threshold, squeezed, warned) in cases {
        let chat = ReplayServer::start(answers()).await.unwrap();
        let squeeze = ReplayServer::start_repeating(squeezed).await.unwrap();
        let fx = fixture(&chat, &squeeze, Some(100), threshold).await;
        for text in ["one", "two", "three"] {
            say(&fx.session, text).await;
        }
        say(&fx.session, &long_message(60)).await;
        assert_eq!(squeeze.requests().is_empty(), !warned);
        assert_eq!(fx.session.id(), Some(fx.original.as_str()));
        let sent = sent_messages(chat.requests().last().unwrap());
        assert_eq!(
            sent.len(),
            8,
            "system, three turns, the new message: {sent:?}"
        );
        assert_eq!(sent[1].1, "one");
        let notes = fx.notes.lock().unwrap().clone();
        let warnings: Vec<_> = notes
            .iter()
            .filter(|n| n.contains("not compressed"))
            .collect();
        assert_eq!(warnings.len(), usize::from(warned), "{notes:?}");
        if warned {
            assert!(
                warnings[0].contains("401") || warnings[0].contains("API key"),
                "{warnings:?}"
            );
            assert_eq!(warnings[0].lines().count(), 1, "{warnings:?}");
        }
    }
}
