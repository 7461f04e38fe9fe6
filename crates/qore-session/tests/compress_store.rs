//! Compression against a real SQLite file and a loopback server replaying recorded provider
//! bytes: the original stays as it was, the new session links to it and holds the summary
//! and copies of the recent turns, the summary request carries the older turns and the
//! compressor's instructions, and an overflow answer is retried without the old tool results.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use qore_client::{CancellationToken, Client, ClientConfig};
use qore_core::{ContentBlock, Message, Role, ToolResultPart, Usage};
use qore_session::compress::{
    bundled_instructions, compress, transcript, CompressError, CompressOptions, Compressed, Keep,
    Shrink,
};
use qore_store::{NewSession, SessionInfo, Store, StoredTurn, TurnRecord, TurnStatus};
use qore_testkit::{reply_from_exchange, Exchange, RecordedRequest, ReplayServer, Slicing};

/// The first exchange of a recorded cassette, or `None` without the fixtures.
fn recorded(path: &str) -> Option<Exchange> {
    let root = qore_testkit::fixtures_dir()?.join("rig-cassettes");
    let cassette = qore_testkit::load_cassette_file(&root, &root.join(path)).ok()?;
    cassette.exchanges.into_iter().next()
}

fn awkward() -> Slicing {
    Slicing::Irregular { seed: 13, max: 7 }
}

fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(1_700_000_000_000 + ms)
}

/// A finished turn; with a tool call whose result is `RESULT-<word>` when `tool` is set.
fn turn(word: &str, index: u64, tool: bool) -> TurnRecord {
    let mut replies = Vec::new();
    if tool {
        let id = format!("call_{word}");
        replies.push(Message::new(
            Role::Assistant,
            vec![ContentBlock::ToolUse {
                id: id.clone(),
                name: "read_file".into(),
                input: serde_json::json!({ "path": format!("{word}.rs") }),
                raw_input: None,
                signature: None,
            }],
        ));
        replies.push(Message::new(
            Role::User,
            vec![ContentBlock::ToolResult {
                tool_use_id: id,
                content: vec![ToolResultPart::Text {
                    text: format!("RESULT-{word}"),
                }],
                is_error: false,
            }],
        ));
    }
    replies.push(Message::new(
        Role::Assistant,
        vec![
            ContentBlock::Thinking {
                text: format!("secret thought {word}"),
                signature: None,
            },
            ContentBlock::text(format!("answer {word}")),
        ],
    ));
    TurnRecord {
        user: Message::user(format!("question {word}")),
        replies,
        usage: Usage {
            input_tokens: Some(100 + index),
            output_tokens: Some(10),
            ..Usage::default()
        },
        model: Some("m-chat".into()),
        agent: Some("chat-agent".into()),
        started_at: at(index * 10),
        finished_at: at(index * 10 + 5),
        status: TurnStatus::Finished,
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
    id: String,
}

/// A store file with one session of `turns` ((word, with a tool call) each).
fn seeded(turns: &[(&str, bool)]) -> Fixture {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut store = Store::open(dir.path().join("qore.db")).expect("a new store");
    let id = store
        .create_session(&NewSession {
            project_dir: Some(PathBuf::from("/src/app")),
            agent: Some("chat-agent".into()),
            model: Some("m-chat".into()),
            ..NewSession::default()
        })
        .expect("a session");
    for (index, (word, tool)) in turns.iter().enumerate() {
        store
            .append_turn(&id, &turn(word, index as u64, *tool))
            .expect("a turn");
    }
    Fixture {
        _dir: dir,
        store,
        id,
    }
}

/// Everything stored about a session: its row, its turns, its history as JSON.
fn snapshot(store: &Store, id: &str) -> (SessionInfo, Vec<StoredTurn>, String) {
    let info = store.session(id).expect("the session");
    let turns = store.turns(id).expect("its turns");
    let history = store.history(id).expect("its history");
    let json = serde_json::to_string(&history).expect("history as JSON");
    (info, turns, json)
}

fn client(protocol: &str, server: &ReplayServer) -> Client {
    let wire = qore_client::protocols::by_name(protocol).expect("a protocol");
    Client::new(wire, ClientConfig::new(server.url())).expect("a client")
}

fn body(request: &RecordedRequest) -> String {
    String::from_utf8(request.body.clone()).expect("a UTF-8 body")
}

/// Compress the fixture's session through `server`, keeping `keep`.
async fn run(
    fx: &mut Fixture,
    protocol: &str,
    server: &ReplayServer,
    keep: Keep,
) -> Result<Compressed, CompressError> {
    let options = CompressOptions {
        keep,
        agent: Some("claude-compression".into()),
        ..CompressOptions::default()
    };
    let client = client(protocol, server);
    let model = "compress-model";
    compress(
        &mut fx.store,
        &fx.id,
        &client,
        model,
        &options,
        CancellationToken::new(),
    )
    .await
}

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
    ]);
    let undone = fx.store.turns(&fx.id).expect("the turns")[1].id;
    fx.store.mark_undone(undone).expect("undone");
    let before = snapshot(&fx.store, &fx.id);

    let done = run(&mut fx, "anthropic", &server, Keep::Turns(2))
        .await
        .expect("compressed");

    // The original: the same row, the same turns, the same message JSON.
    assert_eq!(snapshot(&fx.store, &fx.id), before);
    assert_eq!((done.summarised_turns, done.kept_turns), (2, 2));
    assert_eq!(done.parent_id, fx.id);
    assert_eq!(done.summary.attempts, 1);
    assert!(
        done.summary.text.starts_with("A solar eclipse occurs"),
        "{}",
        done.summary.text
    );

    // The new session links to it and holds the summary, then the recent turns as they were.
    let info = fx.store.session(&done.session_id).expect("the new session");
    assert_eq!(info.parent_id.as_deref(), Some(fx.id.as_str()));
    assert_eq!(info.project_dir.as_deref(), Some("/src/app"));
    assert_eq!(info.title, before.0.title, "the title carries over");
    let turns = fx.store.turns(&done.session_id).expect("its turns");
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
    let history = fx.store.history(&done.session_id).expect("its history");
    let original = fx.store.history(&fx.id).expect("the original history");
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

#[tokio::test]
async fn an_overflow_answer_is_retried_without_the_older_tool_results() {
    let (Some(overflow), Some(answer)) = (
        recorded("llamacpp/error_matrix/context_overflow_streaming.yaml"),
        recorded("llamacpp/streaming/streaming_smoke.yaml"),
    ) else {
        eprintln!("no fixtures: skipped");
        return;
    };
    let server = ReplayServer::start(vec![
        reply_from_exchange(&overflow, awkward()),
        reply_from_exchange(&answer, awkward()),
    ])
    .await
    .expect("a replay server");
    let mut fx = seeded(&[("alpha", true), ("bravo", true), ("charlie", true)]);
    let before = snapshot(&fx.store, &fx.id);

    let done = run(&mut fx, "llamacpp", &server, Keep::Turns(1))
        .await
        .expect("compressed on the second try");

    assert_eq!(done.summary.attempts, 2);
    assert_eq!(
        done.summary.shrink,
        Shrink {
            results_dropped: 1,
            turns_dropped: 0
        }
    );
    assert!(
        done.summary.text.starts_with("A solar eclipse"),
        "{}",
        done.summary.text
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let (first, retry) = (body(&requests[0]), body(&requests[1]));
    assert!(first.contains("RESULT-alpha") && first.contains("RESULT-bravo"));
    assert!(
        !retry.contains("RESULT-alpha"),
        "the oldest result is dropped: {retry}"
    );
    assert!(retry.contains("left out to fit the context window"));
    assert!(
        retry.contains("RESULT-bravo"),
        "the newer older turn keeps its result"
    );
    assert!(retry.contains("question alpha"), "the turn itself stays");
    assert_eq!(snapshot(&fx.store, &fx.id), before);
    let sessions = fx.store.list_sessions(None).expect("the sessions");
    assert_eq!(sessions.len(), 2);
}

#[tokio::test]
async fn a_summary_that_never_fits_or_fails_creates_nothing() {
    let (Some(overflow), Some(not_found)) = (
        recorded("llamacpp/error_matrix/context_overflow_blocking.yaml"),
        recorded("anthropic/error_envelope/nonexistent_model_error_preserves_status_and_body.yaml"),
    ) else {
        eprintln!("no fixtures: skipped");
        return;
    };
    // (protocol, the reply every request gets, requests expected, the error's check)
    type Case<'a> = (&'a str, &'a Exchange, usize, fn(&CompressError) -> bool);
    let cases: [Case; 2] = [
        (
            "llamacpp",
            &overflow,
            4,
            |e| matches!(e, CompressError::Overflow(info) if info.status() == Some(400)),
        ),
        (
            "anthropic",
            &not_found,
            1,
            |e| matches!(e, CompressError::Summary(info) if info.status() == Some(404)),
        ),
    ];
    for (protocol, reply, sent, expected) in cases {
        let server = ReplayServer::start_repeating(reply_from_exchange(reply, awkward()))
            .await
            .expect("a replay server");
        let mut fx = seeded(&[("alpha", true), ("bravo", true), ("charlie", false)]);
        let before = snapshot(&fx.store, &fx.id);
        let error = run(&mut fx, protocol, &server, Keep::Turns(1))
            .await
            .expect_err("no summary");
        assert!(expected(&error), "{protocol}: {error}");
        assert_eq!(server.requests().len(), sent, "{protocol}");
        assert_eq!(snapshot(&fx.store, &fx.id), before, "{protocol}");
        assert_eq!(fx.store.list_sessions(None).expect("sessions").len(), 1);
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
    let mut fx = seeded(&[("alpha", false), ("bravo", false)]);
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
