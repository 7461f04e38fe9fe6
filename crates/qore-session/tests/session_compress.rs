//! A session compresses itself before a send that would pass 80% of a tiny context window:
//! the summary request goes to the compression agent's server, the next chat request carries
//! the summary and the recent turns and not the old ones, the session continues in a new
//! stored session linked to the original, which stays as it was. The window comes from the
//! profile or, failing that, from the model listing (asked once, and a failed listing only
//! means no compression). `/compress` and `/tokens` run on the same session.

mod session_compress_common;

use qore_client::CancellationToken;
use qore_session::compress::Keep;
use qore_session::Compressing;
use qore_store::{SqliteStore, Store};
use qore_testkit::chat::{chat_answer, role_pairs, sent_messages};
use qore_testkit::{ReplayServer, Reply};
use session_compress_common::{fixture, long_message, say, SUMMARY};

const ANSWERS: [&str; 4] = ["first", "second", "third", "fourth"];

fn answers() -> Vec<Reply> {
    ANSWERS.iter().map(|a| chat_answer(a)).collect()
}

#[tokio::test]
async fn the_send_past_the_threshold_continues_in_a_compressed_session() {
    let chat = ReplayServer::start(answers()).await.unwrap();
    let squeeze = ReplayServer::start(vec![chat_answer(SUMMARY)])
        .await
        .unwrap();
    let fx = fixture(&chat, &squeeze, Some(100), Some(Some(0.8))).await;
    for text in ["one", "two", "three"] {
        say(&fx.session, text).await;
    }
    assert!(squeeze.requests().is_empty(), "nothing compressed yet");
    let long = long_message(60);
    say(&fx.session, &long).await;

    // The summary request: the compressor's prompt and the older turn, not the kept ones.
    let summary_requests = squeeze.requests();
    assert_eq!(summary_requests.len(), 1);
    let asked = sent_messages(&summary_requests[0]);
    assert_eq!(asked[0], ("system".to_owned(), "Summarise.".to_owned()));
    assert!(
        asked[1].1.contains("one") && asked[1].1.contains("first"),
        "{asked:?}"
    );
    assert!(!asked[1].1.contains("second"), "{asked:?}");

    // The next chat request: the summary, then the last two turns, then the new message.
    let requests = chat.requests();
    assert_eq!(requests.len(), 4);
    let sent = sent_messages(&requests[3]);
    let note = &sent[1].1;
    assert!(
        note.contains(&fx.original),
        "the note names the original: {note}"
    );
    assert_eq!(
        sent[2..].to_vec(),
        role_pairs(&[
            ("assistant", SUMMARY),
            ("user", "two"),
            ("assistant", "second"),
            ("user", "three"),
            ("assistant", "third"),
            ("user", &long),
        ])
    );

    // The session continues in a new stored session; the original is unchanged.
    let new_id = fx.session.id().unwrap().to_owned();
    assert_ne!(new_id, fx.original);
    assert_eq!(fx.session.compressed_from(), Some(fx.original.as_str()));
    let told = fx.told.lock().unwrap().clone();
    assert_eq!(told.len(), 1);
    assert_eq!(
        (told[0].session_id.as_str(), told[0].parent_id.as_str()),
        (new_id.as_str(), fx.original.as_str())
    );
    let store = SqliteStore::open(fx.dir.path().join("qore.db")).unwrap();
    let original = store.turns(&fx.original).await.unwrap();
    let users: Vec<String> = original.iter().map(|t| t.record.user.text()).collect();
    assert_eq!(users, ["one", "two", "three"]);
    let info = store.session(&new_id).await.unwrap();
    assert_eq!(info.parent_id.as_deref(), Some(fx.original.as_str()));
    assert_eq!(info.turn_count, 4, "summary, two kept turns, the new turn");
}

#[tokio::test]
async fn the_window_comes_from_the_model_listing_once_and_a_failed_listing_sends_whole() {
    let listing = r#"{"object":"list","data":[{"id":"tiny","context_length":1200}]}"#;
    let cases = [
        // Past the threshold: the long turn is summarised with the rest at the next send,
        // being too large to keep, and the send after that does not compress again.
        (Reply::json(200, listing), 2),
        (
            Reply::json(404, r#"{"error":{"message":"no such route"}}"#),
            0,
        ),
    ];
    for (models, summaries) in cases {
        let mut replies = answers();
        replies.insert(3, models);
        replies.extend([chat_answer("fifth"), chat_answer("sixth")]);
        let chat = ReplayServer::start(replies).await.unwrap();
        let squeeze = ReplayServer::start_repeating(chat_answer(SUMMARY))
            .await
            .unwrap();
        let fx = fixture(&chat, &squeeze, None, Some(Some(0.8))).await;
        for text in ["one", "two", "three"] {
            say(&fx.session, text).await;
        }
        let long = long_message(600);
        for text in [long.as_str(), "five", "six"] {
            say(&fx.session, text).await;
        }
        let paths: Vec<String> = chat.requests().iter().map(|r| r.path.clone()).collect();
        assert_eq!(
            paths.iter().filter(|p| p.ends_with("/models")).count(),
            1,
            "{paths:?}"
        );
        assert_eq!(squeeze.requests().len(), summaries, "{paths:?}");
        let compressed = fx.session.id() != Some(fx.original.as_str());
        assert_eq!(compressed, summaries > 0);
        let last = sent_messages(chat.requests().last().unwrap());
        let carries_one = last.iter().any(|(_, text)| text == "one");
        assert_eq!(carries_one, summaries == 0, "{last:?}");
        if summaries > 0 {
            // The second summary request holds the long turn and says it was a kept one.
            let asked = sent_messages(&squeeze.requests()[1]);
            let text = &asked[1].1;
            assert!(text.contains("word599"), "{text}");
            assert!(text.contains("Its newest 2 turns are in it too"), "{text}");
            assert!(text.contains("with no earlier turn"), "{text}");
            let kept: Vec<&str> = last[2..].iter().map(|(_, t)| t.as_str()).collect();
            assert_eq!(kept, [SUMMARY, "five", "fifth", "six"]);
        }
    }
}

#[tokio::test]
async fn compress_on_demand_continues_the_open_session_and_tokens_show_the_estimate() {
    let chat = ReplayServer::start(answers()).await.unwrap();
    let squeeze = ReplayServer::start(vec![chat_answer(SUMMARY)])
        .await
        .unwrap();
    let fx = fixture(&chat, &squeeze, Some(100_000), Some(Some(0.8))).await;
    let empty = fx.session.token_use().await;
    for text in ["one", "two"] {
        say(&fx.session, text).await;
    }
    let before = fx.session.token_use().await;
    assert!(before.used > empty.used, "{before:?} vs {empty:?}");
    assert_eq!(before.window, Some(100_000));

    let cancel = CancellationToken::new();
    let what = Compressing::Open(&fx.session);
    let done = (fx.manager.compress(what, Some(Keep::Turns(1)), &cancel))
        .await
        .unwrap();
    assert_eq!((done.summarised_turns, done.kept_turns), (1, 1));
    assert_eq!(fx.session.id(), Some(done.session_id.as_str()));
    assert_eq!(fx.told.lock().unwrap().len(), 1);
    say(&fx.session, "three").await;
    let sent = sent_messages(chat.requests().last().unwrap());
    assert_eq!(
        sent[2..].to_vec(),
        role_pairs(&[
            ("assistant", SUMMARY),
            ("user", "two"),
            ("assistant", "second"),
            ("user", "three"),
        ])
    );

    // Nothing older than the kept turn is left: compressing again says so, and changes nothing.
    let again = Compressing::Stored(&done.session_id);
    let refused = fx
        .manager
        .compress(again, Some(Keep::Turns(3)), &cancel)
        .await;
    let message = refused.err().unwrap().to_string();
    assert!(message.contains("nothing to compress"), "{message}");
}
