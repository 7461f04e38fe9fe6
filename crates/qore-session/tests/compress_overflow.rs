//! Summary requests that overflow the compression model's context window, against a real
//! SQLite file and a loopback server: the retry leaves out the older tool results (llama.cpp's
//! recorded answer, and the wording of OpenAI, Anthropic, Gemini and Ollama), and a summary
//! that never fits, or fails otherwise, creates nothing.

mod compress_common;

use compress_common::{awkward, body, recorded, run, seeded, snapshot};
use qore_session::compress::{CompressError, Keep, Shrink};
use qore_store::Store;
use qore_testkit::{reply_from_exchange, Exchange, ReplayServer, Reply};

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
    let mut fx = seeded(&[("alpha", true), ("bravo", true), ("charlie", true)]).await;
    let before = snapshot(&fx.store, &fx.id).await;

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
    assert_eq!(snapshot(&fx.store, &fx.id).await, before);
    let sessions = fx.store.list_sessions(None).await.expect("the sessions");
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
        let mut fx = seeded(&[("alpha", true), ("bravo", true), ("charlie", false)]).await;
        let before = snapshot(&fx.store, &fx.id).await;
        let error = run(&mut fx, protocol, &server, Keep::Turns(1))
            .await
            .expect_err("no summary");
        assert!(expected(&error), "{protocol}: {error}");
        assert_eq!(server.requests().len(), sent, "{protocol}");
        assert_eq!(snapshot(&fx.store, &fx.id).await, before, "{protocol}");
        assert_eq!(
            fx.store.list_sessions(None).await.expect("sessions").len(),
            1
        );
    }
}

/// Each provider's own overflow answer, through its own codec, leads to the same retry. The
/// wording is the providers' (as reported in their users' bug reports; only llama.cpp's is
/// recorded in the fixtures, above); the answer that follows is a recorded one.
#[tokio::test]
async fn each_providers_overflow_answer_is_retried_smaller() {
    // (protocol, overflow status and body, the recorded answer to the retry)
    let cases = [
        (
            "anthropic",
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 209353 tokens > 199999 maximum"}}"#,
            "anthropic/streaming/streaming_smoke.yaml",
        ),
        (
            "openai-chat",
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            "deepseek/streaming/streaming_prompt_smoke.yaml",
        ),
        (
            "openai-responses",
            400,
            r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#,
            "openai/streaming/streaming_smoke.yaml",
        ),
        (
            "gemini",
            400,
            r#"{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
            "gemini/streaming/streaming_smoke.yaml",
        ),
        (
            "ollama",
            400,
            r#"{"error":"the input length exceeds the context length"}"#,
            "ollama/streaming/streaming_smoke.yaml",
        ),
    ];
    for (protocol, status, overflow, answer) in cases {
        let Some(answer) = recorded(answer) else {
            eprintln!("no fixtures: skipped");
            return;
        };
        let server = ReplayServer::start(vec![
            Reply::json(status, overflow).with_slicing(awkward()),
            reply_from_exchange(&answer, awkward()),
        ])
        .await
        .expect("a replay server");
        let mut fx = seeded(&[("alpha", true), ("bravo", true), ("charlie", false)]).await;
        let done = run(&mut fx, protocol, &server, Keep::Turns(1))
            .await
            .unwrap_or_else(|e| panic!("{protocol}: {e}"));
        assert_eq!(done.summary.attempts, 2, "{protocol}");
        assert!(!done.summary.text.is_empty(), "{protocol}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{protocol}");
        assert!(body(&requests[0]).contains("RESULT-alpha"), "{protocol}");
        assert!(!body(&requests[1]).contains("RESULT-alpha"), "{protocol}");
    }
}
