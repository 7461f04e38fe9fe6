use std::time::SystemTime;

use qore_core::{Message, Role, Usage};
use qore_store::{TurnRecord, TurnStatus};

use super::*;

fn turn(text: &str) -> TurnRecord {
    TurnRecord {
        user: Message::user(format!("question {text}")),
        replies: vec![Message::assistant(format!("answer {text}"))],
        usage: Usage::default(),
        model: None,
        agent: None,
        started_at: SystemTime::UNIX_EPOCH,
        finished_at: SystemTime::UNIX_EPOCH,
        status: TurnStatus::Finished,
        file_changes: Vec::new(),
    }
}

#[test]
fn overflow_retries_drop_older_tool_results_then_older_turns() {
    let step = |results_dropped, turns_dropped| Shrink {
        results_dropped,
        turns_dropped,
    };
    let cases = [
        (0, vec![step(0, 0)]),
        (1, vec![step(0, 0), step(1, 0)]),
        (2, vec![step(0, 0), step(1, 0), step(2, 0), step(2, 1)]),
        (
            8,
            vec![
                step(0, 0),
                step(4, 0),
                step(8, 0),
                step(8, 4),
                step(8, 6),
                step(8, 7),
            ],
        ),
        (
            5,
            vec![step(0, 0), step(3, 0), step(5, 0), step(5, 3), step(5, 4)],
        ),
    ];
    for (turns, want) in cases {
        assert_eq!(shrink_steps(turns), want, "{turns} turns");
    }
}

#[test]
fn the_summary_request_is_the_instructions_then_the_transcript() {
    let turns = [turn("one")];
    let newest = |kept, squeezed| Newest { kept, squeezed };
    // (what follows, what the request says, what it must not say)
    let cases = [
        (newest(2, 0), "with its most recent turns", "newest"),
        (
            newest(1, 1),
            "Its newest 1 turns are in it too",
            "no earlier turn",
        ),
        (newest(0, 2), "with no earlier turn", "most recent turns"),
        (
            newest(0, 2),
            "Its newest 2 turns are in it too",
            "not shown",
        ),
    ];
    for (newest, says, not) in cases {
        let history = summary_history("Be brief.", &turns, Shrink::default(), newest);
        let messages = history.messages();
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0], Message::system("Be brief."));
        assert_eq!(messages[1].role, Role::User);
        let text = messages[1].text();
        assert!(
            text.contains("<conversation>\n[user]\nquestion one"),
            "{text}"
        );
        assert!(
            text.contains(says) && !text.contains(not),
            "{newest:?}: {text}"
        );
    }
}

#[test]
fn keep_splits_by_turns_or_by_tokens() {
    let turns: Vec<TurnRecord> = (0..5).map(|i| turn(&i.to_string())).collect();
    let one = estimate_messages(std::slice::from_ref(&turns[0].user))
        + estimate_messages(&turns[0].replies);
    // (keep, older, recent)
    let cases = [
        (Keep::Turns(2), 3, 2),
        (Keep::Turns(0), 5, 0),
        (Keep::Turns(9), 0, 5),
        (Keep::Tokens(one * 3), 2, 3),
        (Keep::Tokens(one * 3 - 1), 3, 2),
        (Keep::Tokens(0), 5, 0),
    ];
    for (keep, older, recent) in cases {
        let (o, r) = split_turns(&turns, keep);
        assert_eq!((o.len(), r.len()), (older, recent), "{keep:?}");
        if let Some(first) = r.first() {
            assert_eq!(
                first, &turns[older],
                "{keep:?}: the recent turns are the last ones"
            );
        }
    }
}

#[test]
fn context_overflow_is_recognised_in_each_providers_words() {
    // (protocol, status, body, overflow): the bodies are the providers' real wording.
    let cases = [
        (
            "openai-chat",
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            true,
        ),
        (
            "openai-responses",
            400,
            r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#,
            true,
        ),
        (
            "anthropic",
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 209353 tokens > 199999 maximum"}}"#,
            true,
        ),
        (
            "anthropic",
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again"}}"#,
            true,
        ),
        (
            "gemini",
            400,
            r#"{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
            true,
        ),
        (
            "llamacpp",
            400,
            r#"{"error":{"code":400,"message":"request (2009 tokens) exceeds the available context size (512 tokens), try increasing it","n_ctx":512,"n_prompt_tokens":2009,"type":"exceed_context_size_error"}}"#,
            true,
        ),
        (
            "ollama",
            400,
            r#"{"error":"the input length exceeds the context length"}"#,
            true,
        ),
        (
            "mistral",
            400,
            r#"{"object":"error","message":"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_message_error","code":3051}"#,
            true,
        ),
        (
            "openai-chat",
            400,
            r#"{"error":{"message":"This endpoint's maximum context length is 65536 tokens. However, you requested about 70000 tokens.","code":400}}"#,
            true,
        ),
        // Not overflows: an output cap, a rate limit on tokens, auth, a missing model.
        (
            "anthropic",
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 10000 > 4096, which is the maximum allowed number of output tokens for claude-3-5-sonnet-20240620"}}"#,
            false,
        ),
        (
            "openai-chat",
            429,
            r#"{"error":{"message":"Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 8000. Please try again in 14s. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","code":"rate_limit_exceeded"}}"#,
            false,
        ),
        // An auth error is never an overflow, whatever its text says.
        (
            "openai-chat",
            401,
            r#"{"error":{"message":"Incorrect API key provided: sk-xxx. maximum context length","type":"invalid_request_error","code":"invalid_api_key"}}"#,
            false,
        ),
        (
            "ollama",
            404,
            r#"{"error":"model \"llama9\" not found, try pulling it first"}"#,
            false,
        ),
    ];
    for (protocol, status, body, overflow) in cases {
        let wire = qore_client::protocols::by_name(protocol).unwrap();
        let error = wire.error(status, body);
        assert_eq!(
            is_context_overflow(&error),
            overflow,
            "{protocol} {status} {body}"
        );
    }
}

#[test]
fn the_trigger_is_a_share_of_a_known_window() {
    // (estimate, window, threshold, compress)
    let cases = [
        (800, Some(1000), 0.8, false),
        (801, Some(1000), 0.8, true),
        (999_999, None, 0.8, false),
        (1, Some(0), 0.8, false),
        (500, Some(1000), 0.5, false),
        (501, Some(1000), 0.5, true),
    ];
    for (estimate, window, threshold, want) in cases {
        assert_eq!(
            should_compress(estimate, window, threshold),
            want,
            "{estimate} of {window:?} at {threshold}"
        );
    }
}

#[test]
fn thresholds_parse_as_percent_or_fraction() {
    let cases = [
        ("80%", Some(0.8)),
        (" 50 % ", Some(0.5)),
        ("0.9", Some(0.9)),
        ("1", Some(1.0)),
        ("100%", Some(1.0)),
        ("0", None),
        ("120%", None),
        ("-0.5", None),
        ("eighty", None),
        ("", None),
    ];
    for (text, want) in cases {
        assert_eq!(parse_threshold(text).ok(), want, "{text:?}");
    }
    assert!(parse_threshold("2")
        .unwrap_err()
        .to_string()
        .contains("e.g. 80% or 0.8"));
}
