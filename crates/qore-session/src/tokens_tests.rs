use qore_core::{
    ContentBlock, ImageData, ImageSource, Message, Role, ToolResultPart, ToolSpec, Usage,
};
use serde_json::json;

use qore_store::{StoredTurn, TurnRecord, TurnStatus};

use super::*;

fn image() -> ImageSource {
    ImageSource {
        media_type: Some("image/png".into()),
        data: ImageData::Bytes(vec![0; 100_000]),
    }
}

/// A tool call with a signature (never counted).
fn call(name: &str, input: serde_json::Value) -> ContentBlock {
    ContentBlock::ToolUse {
        id: "call_1".into(),
        name: name.into(),
        input,
        raw_input: None,
        signature: Some("x".repeat(4000)),
    }
}

fn result(parts: Vec<ToolResultPart>) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: "call_1".into(),
        content: parts,
        is_error: false,
    }
}

#[test]
fn each_kind_of_content_is_counted_by_its_rule() {
    let call = call("read_file", json!({"path": "src/main.rs"}));
    let thinking = |signature: Option<&str>| {
        Message::new(
            Role::Assistant,
            vec![ContentBlock::Thinking {
                text: "hello world".into(),
                signature: signature.map(String::from),
            }],
        )
    };
    // (what, message, expected tokens)
    let cases: Vec<(&str, Message, u64)> = vec![
        (
            "an empty message: its overhead",
            Message::new(Role::User, vec![]),
            4,
        ),
        ("a word is a token", Message::user("hello"), 4 + 1),
        (
            "single spaces join words",
            Message::user("the quick brown fox"),
            4 + 4,
        ),
        (
            "a token more per 6 letters",
            Message::user("internationalization"),
            4 + 4,
        ),
        ("digits by threes", Message::user("1234567"), 4 + 3),
        ("symbols by twos", Message::user("{}();"), 4 + 3),
        (
            "longer whitespace is a token",
            Message::user("a\n\nb"),
            4 + 3,
        ),
        (
            "CJK: 3 bytes a character, one token",
            Message::user("漢".repeat(30)),
            4 + 30,
        ),
        (
            "Cyrillic: 2 bytes a character",
            Message::user("я".repeat(30)),
            4 + 20,
        ),
        ("unsigned thinking is not sent back", thinking(None), 4),
        (
            "signed thinking: its text, not its signature",
            thinking(Some(&"s".repeat(999))),
            4 + 2,
        ),
        (
            // read(1) _(1) file(1); {" path ":" src / main . rs "} = 1+1+2+1+1+1+1+1+1.
            "a tool call: overhead, name, arguments as JSON; no signature",
            Message::new(Role::Assistant, vec![call]),
            4 + 12 + 3 + 10,
        ),
        (
            "unparsed arguments count as their raw text",
            Message::new(
                Role::Assistant,
                vec![ContentBlock::ToolUse {
                    id: "c".into(),
                    name: "abcd".into(),
                    input: serde_json::Value::Null,
                    raw_input: Some("{".repeat(40)),
                    signature: None,
                }],
            ),
            4 + 12 + 1 + 20,
        ),
        (
            "a tool result: overhead and its parts, an image at the fixed figure",
            Message::new(
                Role::User,
                vec![result(vec![
                    ToolResultPart::Text {
                        text: "some output".into(),
                    },
                    ToolResultPart::Image(image()),
                ])],
            ),
            4 + 12 + 2 + IMAGE_TOKENS,
        ),
        (
            "an image block is the fixed figure, whatever its bytes",
            Message::new(Role::User, vec![ContentBlock::Image(image())]),
            4 + IMAGE_TOKENS,
        ),
        (
            "several blocks add up",
            Message::new(
                Role::User,
                vec![ContentBlock::text("abcd"), ContentBlock::text("efgh")],
            ),
            4 + 1 + 1,
        ),
    ];
    for (what, message, want) in cases {
        assert_eq!(estimate_message(&message), want, "{what}");
    }
}

#[test]
fn tool_definitions_count_name_description_and_schema() {
    let tool = ToolSpec {
        name: "abcd".into(),
        description: "Adds two numbers".into(),
        input_schema: json!({"type": "object"}),
    };
    // Adds(1) two(1) numbers(2); {" type ":" object "} = 1+1+2+1+1.
    assert_eq!(estimate_tools(&[tool]), 12 + 1 + 4 + 6);
}

#[test]
fn prompt_tokens_adds_anthropic_cache_counts_only() {
    let usage = Usage {
        input_tokens: Some(10),
        cached_input_tokens: Some(1000),
        cache_creation_input_tokens: Some(200),
        ..Usage::default()
    };
    // (usage, protocol, prompt)
    let openai = Usage {
        input_tokens: Some(1000),
        cached_input_tokens: Some(800),
        ..Usage::default()
    };
    let cases = [
        (usage, Some("anthropic"), Some(1210)),
        (usage, Some("openai-chat"), Some(10)),
        (usage, None, Some(1210)),
        (openai, None, Some(1000)),
        (openai, Some("openai-responses"), Some(1000)),
        (Usage::default(), Some("anthropic"), None),
    ];
    for (usage, protocol, want) in cases {
        assert_eq!(
            prompt_tokens(&usage, protocol),
            want,
            "{usage:?} on {protocol:?}"
        );
    }
}

fn user(n: usize) -> Message {
    Message::user("u".repeat(n))
}

#[test]
fn a_report_over_the_heuristic_is_an_overhead_and_the_next_estimate_adds_to_it() {
    let mut estimator = TokenEstimator::new();
    let sent = vec![Message::system("s".repeat(400)), user(400)];
    let raw = estimate_messages(&sent);
    assert_eq!(
        estimator.estimate(&sent, &[]),
        raw,
        "uncalibrated: the heuristic"
    );
    let seen = estimator.observe(&sent, &[], raw + 300);
    assert_eq!(
        seen,
        Observation::Calibrated {
            rate: 1.0,
            overhead: 300.0
        }
    );
    assert_eq!(
        estimator.estimate(&sent, &[]),
        raw + 300,
        "the report itself"
    );
    let mut longer = sent.clone();
    longer.push(Message::assistant("a".repeat(40)));
    let added = estimate_message(&longer[2]);
    assert_eq!(estimator.estimate(&longer, &[]), raw + 300 + added);
}

#[test]
fn reports_refit_the_rate_from_their_growth() {
    // (first heuristic, first report, second heuristic, second report, rate after both)
    let cases = [
        (1000, 1300, 1400, 1800, 1.25),
        (1000, 700, 1400, 980, 0.7),
        // Growth too small to say anything: the rate stays.
        (1000, 1300, 1010, 1400, 1.0),
        // An implausible growth: the rate stays, the overhead follows the report.
        (1000, 1300, 1400, 1450, 1.0),
        // A report under rate × heuristic: the rate stays, the overhead goes negative (the
        // heuristic overcounts what every request carries, e.g. tool schemas).
        (1000, 1300, 1400, 1310, 1.0),
    ];
    for (raw1, rep1, raw2, rep2, rate) in cases {
        let mut estimator = TokenEstimator::new();
        // Messages of exactly `raw` heuristic tokens: 4 for the message, then a word each.
        let sized = |raw: u64| vec![Message::user("ab ".repeat(raw as usize - 4).trim_end())];
        estimator.observe(&sized(raw1), &[], rep1);
        estimator.observe(&sized(raw2), &[], rep2);
        assert_eq!(estimator.rate(), rate, "{raw1}/{rep1} then {raw2}/{rep2}");
        assert_eq!(
            estimator.estimate_raw(raw2),
            rep2,
            "the last report is exact"
        );
    }
}

#[test]
fn implausible_reports_are_ignored() {
    let sent = vec![user(4000)];
    let raw = estimate_messages(&sent);
    // (report, calibrates)
    let cases = [
        (0, false),
        (raw / 10, false),
        (raw * 3, true),
        (raw / 2, true),
    ];
    for (reported, calibrates) in cases {
        let mut estimator = TokenEstimator::new();
        let seen = estimator.observe(&sent, &[], reported);
        assert_eq!(
            seen != Observation::Ignored,
            calibrates,
            "report {reported} of {raw}"
        );
        assert_eq!(
            estimator.is_calibrated(),
            calibrates,
            "report {reported} of {raw}"
        );
    }
}

#[test]
fn a_turn_of_several_requests_is_observed_as_their_average() {
    let sent = vec![user(400)];
    let call = Message::new(Role::Assistant, vec![call("t", json!({}))]);
    let text = "r".repeat(400);
    let result = Message::new(
        Role::User,
        vec![result(vec![ToolResultPart::Text { text }])],
    );
    let replies = vec![call, result, Message::assistant("done")];
    let first = estimate_messages(&sent);
    let second = first + estimate_messages(&replies[..2]);
    let reported = first + second + 100;
    let mut turn = TokenEstimator::new();
    turn.observe_turn(&sent, &replies, &[], reported);
    // The average request: its estimate is the average report.
    let (raw, report) = ((first + second) as f64 / 2.0, reported as f64 / 2.0);
    assert!(
        (turn.overhead() + turn.rate() * raw - report).abs() < 1e-9,
        "{turn:?}"
    );
    assert_eq!(turn.rate(), 1.0);
    assert_eq!(turn.overhead(), 50.0);
    assert!(turn.is_calibrated());
}

#[test]
fn token_use_shows_used_window_and_percentage() {
    let cases = [
        (
            TokenUse::new(1_200, Some(8_192)),
            "1,200 of 8,192 tokens (14.6%)",
        ),
        (
            TokenUse::new(0, Some(200_000)),
            "0 of 200,000 tokens (0.0%)",
        ),
        (
            TokenUse::new(1_234_567, None),
            "1,234,567 tokens (context window unknown)",
        ),
        (
            TokenUse::new(5, Some(0)),
            "5 tokens (context window unknown)",
        ),
    ];
    for (usage, want) in cases {
        assert_eq!(usage.to_string(), want);
    }
    assert_eq!(
        serde_json::to_value(TokenUse::new(1_200, Some(8_192))).unwrap(),
        json!({"used": 1200, "window": 8192, "percent": 14.6})
    );
    assert_eq!(
        serde_json::to_value(TokenUse::new(7, None)).unwrap(),
        json!({"used": 7})
    );
}

#[test]
fn the_profile_window_wins_over_the_listing() {
    let listing = vec![ModelInfo {
        id: "m".into(),
        context_length: Some(32_768),
        ..ModelInfo::default()
    }];
    assert_eq!(context_window(Some(8_192), &listing, "m"), Some(8_192));
    assert_eq!(context_window(None, &listing, "m"), Some(32_768));
    assert_eq!(context_window(None, &listing, "other"), None);
}

fn stored(n: i64, text: &str, input: Option<u64>, status: TurnStatus, undone: bool) -> StoredTurn {
    StoredTurn {
        id: qore_store::TurnId(n),
        seq: n,
        undone,
        record: TurnRecord {
            user: Message::user(format!("question {text}")),
            replies: vec![Message::assistant(format!("answer {text}"))],
            usage: Usage {
                input_tokens: input,
                ..Usage::default()
            },
            model: None,
            agent: None,
            started_at: std::time::UNIX_EPOCH,
            finished_at: std::time::UNIX_EPOCH,
            status,
            file_changes: Vec::new(),
        },
    }
}

#[test]
fn a_stored_session_is_estimated_from_its_last_reported_turn() {
    use TurnStatus::{Failed, Finished};
    let long = "word ".repeat(500);
    let answer = |text: &str| estimate_message(&Message::assistant(format!("answer {text}")));
    let question = |text: &str| estimate_message(&Message::user(format!("question {text}")));
    // (turns, expected use): the report of the last finished turn with usage, plus the
    // heuristic of what came after what it sent.
    let cases: Vec<(Vec<StoredTurn>, u64)> = vec![
        (
            vec![
                stored(1, "one", Some(500), Finished, false),
                stored(2, "two", Some(900), Finished, false),
            ],
            900 + answer("two"),
        ),
        (
            // An undone turn is not in the history; a failed one does not calibrate.
            vec![
                stored(1, "one", Some(500), Finished, false),
                stored(2, &long, Some(99_999), Finished, true),
                stored(3, "three", Some(700), Failed, false),
            ],
            500 + answer("one") + question("three") + answer("three"),
        ),
        (
            vec![stored(1, "one", None, Finished, false)],
            question("one") + answer("one"),
        ),
    ];
    for (n, (turns, want)) in cases.into_iter().enumerate() {
        let got = stored_use(&turns, Some("openai-chat"), Some(10_000));
        assert_eq!(got, TokenUse::new(want, Some(10_000)), "case {n}");
    }
}
