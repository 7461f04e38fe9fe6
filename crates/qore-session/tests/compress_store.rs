//! Compression against a real SQLite file and a loopback server replaying recorded provider
//! bytes: the original stays as it was, the new session links to it and holds the summary
//! and copies of the recent turns, the summary request carries the older turns and the
//! compressor's instructions; a failed summary creates nothing.

mod compress_common;

use compress_common::{awkward, body, recorded, run, seeded, snapshot, turn};
use qore_core::Message;
use qore_session::compress::{bundled_instructions, transcript, CompressError, Keep, Shrink};
use qore_store::Store;
use qore_testkit::{reply_from_exchange, ReplayServer};

#[tokio::test]
async fn compression_keeps_the_original_and_links_a_new_session() {
    let Some(answer) = recorded("anthropic/streaming/streaming_smoke.yaml") else {
        eprintln!("no fixtures: skipped");
        return;
    };
    let server = ReplayServer::start(vec![reply_from_exchange(&answer, awkward())])
        .await
        .expect("a replay server");
    let mut fx = seeded(&[
        ("alpha", true),
        ("undone", false),
        ("bravo", false),
        ("charlie", true),
        ("delta", false),
    ])
    .await;
    let undone = fx.store.turns(&fx.id).await.expect("the turns")[1].id;
    fx.store.mark_undone(undone).await.expect("undone");
    let before = snapshot(&fx.store, &fx.id).await;

    let done = run(&mut fx, "anthropic", &server, Keep::Turns(2))
        .await
        .expect("compressed");

    // The original: the same row, the same turns, the same message JSON.
    assert_eq!(snapshot(&fx.store, &fx.id).await, before);
    assert_eq!((done.summarised_turns, done.kept_turns), (2, 2));
    assert_eq!(done.parent_id, fx.id);
    assert_eq!(done.summary.attempts, 1);
    assert!(
        done.summary.text.starts_with("A solar eclipse occurs"),
        "{}",
        done.summary.text
    );

    // The new session links to it and holds the summary, then the recent turns as they were.
    let info = fx
        .store
        .session(&done.session_id)
        .await
        .expect("the new session");
    assert_eq!(info.parent_id.as_deref(), Some(fx.id.as_str()));
    assert_eq!(info.project_dir.as_deref(), Some("/src/app"));
    assert_eq!(info.title, before.0.title, "the title carries over");
    let turns = fx.store.turns(&done.session_id).await.expect("its turns");
    assert_eq!(turns.len(), 3);
    let summary = &turns[0].record;
    assert!(
        summary.user.text().contains(&fx.id),
        "the note names the original"
    );
    assert_eq!(
        summary.replies,
        vec![Message::assistant(done.summary.text.clone())]
    );
    assert_eq!(summary.agent.as_deref(), Some("claude-compression"));
    assert_eq!(summary.model.as_deref(), Some("compress-model"));
    for (copy, original) in turns[1..].iter().zip(&before.1[3..]) {
        assert_eq!(
            copy.record, original.record,
            "an exact copy of turn {}",
            original.seq
        );
    }
    // What the model sees next: the summary turn, then the recent turns' messages.
    let history = fx
        .store
        .history(&done.session_id)
        .await
        .expect("its history");
    let original = fx
        .store
        .history(&fx.id)
        .await
        .expect("the original history");
    let recent = &original.messages()[original.len() - 6..];
    assert_eq!(&history.messages()[2..], recent);
    assert_eq!(history.len(), 2 + recent.len());

    // The summary request: the compressor's instructions and the older turns only.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = body(&requests[0]);
    let first_line = bundled_instructions().split('.').next().unwrap_or_default();
    assert!(sent.contains(first_line), "instructions missing: {sent}");
    for older in [
        "question alpha",
        "RESULT-alpha",
        "answer alpha",
        "question bravo",
    ] {
        assert!(sent.contains(older), "{older} missing: {sent}");
    }
    for left_out in [
        "question undone",
        "question charlie",
        "RESULT-charlie",
        "question delta",
    ] {
        assert!(!sent.contains(left_out), "{left_out} sent: {sent}");
    }
}

fn send<T: Send>(future: T) -> T {
    future
}

#[tokio::test]
async fn a_session_with_only_kept_turns_has_nothing_to_compress() {
    let server = ReplayServer::start(Vec::new())
        .await
        .expect("a replay server");
    let mut fx = seeded(&[("alpha", false), ("bravo", false)]).await;
    // The future is Send: a session can compress inside a spawned task.
    let error = send(run(&mut fx, "anthropic", &server, Keep::Turns(2)))
        .await
        .expect_err("nothing to do");
    assert!(
        matches!(error, CompressError::NothingToCompress { turns: 2 }),
        "{error}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn the_transcript_holds_texts_calls_and_results_but_no_thinking() {
    let turns = [turn("one", 0, true), turn("two", 1, false)];
    let whole = transcript(&turns, Shrink::default());
    for part in [
        "[user]\nquestion one",
        "[assistant called the tool read_file]\n{\"path\":\"one.rs\"}",
        "[result of the tool read_file]\nRESULT-one",
        "[assistant]\nanswer one",
        "[user]\nquestion two",
        "[assistant]\nanswer two",
    ] {
        assert!(whole.contains(part), "{part:?} missing from:\n{whole}");
    }
    assert!(!whole.contains("secret thought"), "{whole}");
    // (shrink, present, absent)
    let cases = [
        (
            Shrink {
                results_dropped: 1,
                turns_dropped: 0,
            },
            [
                "{\"path\":\"one.rs\"}",
                "[left out to fit the context window: about",
            ],
            "RESULT-one",
        ),
        (
            Shrink {
                results_dropped: 2,
                turns_dropped: 1,
            },
            ["[The first 1 turns are left out", "question two"],
            "question one",
        ),
    ];
    for (shrink, present, absent) in cases {
        let text = transcript(&turns, shrink);
        for part in present {
            assert!(
                text.contains(part),
                "{shrink:?}: {part:?} missing from:\n{text}"
            );
        }
        assert!(!text.contains(absent), "{shrink:?}: {absent:?} in:\n{text}");
    }
}
