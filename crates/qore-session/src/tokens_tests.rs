use qore_core::{
    ContentBlock, ImageData, ImageSource, Message, Role, ToolResultPart, ToolSpec, Usage,
};
use serde_json::json;

use super::*;

fn image() -> ImageSource {
    ImageSource {
        media_type: Some("image/png".into()),
        data: ImageData::Bytes(vec![0; 100_000]),
    }
}

#[test]
fn each_kind_of_content_is_counted_by_its_rule() {
    let call = ContentBlock::ToolUse {
        id: "call_1".into(),
        name: "read_file".into(),
        input: json!({"path": "src/main.rs"}),
        raw_input: None,
        signature: Some("x".repeat(4000)),
    };
    // (what, message, expected tokens)
    let cases: Vec<(&str, Message, u64)> = vec![
        ("empty user message", Message::new(Role::User, vec![]), 4),
        (
            "ASCII text: 4 bytes a token",
            Message::user("a".repeat(400)),
            4 + 100,
        ),
        ("rounded up", Message::user("abcde"), 4 + 2),
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
        (
            "thinking counts its text, not its signature",
            Message::new(
                Role::Assistant,
                vec![ContentBlock::Thinking {
                    text: "a".repeat(40),
                    signature: Some("s".repeat(4000)),
                }],
            ),
            4 + 10,
        ),
        (
            // {"path":"src/main.rs"} is 22 bytes: 6 tokens; read_file 9 bytes: 3 tokens.
            "a tool call: overhead, name, arguments as JSON; no signature",
            Message::new(Role::Assistant, vec![call]),
            4 + 8 + 3 + 6,
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
            4 + 8 + 1 + 10,
        ),
        (
            "a tool result: overhead and its parts, an image at the fixed figure",
            Message::new(
                Role::User,
                vec![ContentBlock::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: vec![
                        ToolResultPart::Text {
                            text: "b".repeat(80),
                        },
                        ToolResultPart::Image(image()),
                    ],
                    is_error: false,
                }],
            ),
            4 + 8 + 20 + IMAGE_TOKENS,
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
        description: "e".repeat(40),
        input_schema: json!({"type": "object"}),
    };
    // {"type":"object"} is 17 bytes: 5 tokens.
    assert_eq!(estimate_tools(&[tool]), 8 + 1 + 10 + 5);
}

#[test]
fn prompt_tokens_adds_anthropic_cache_counts_only() {
    let usage = Usage {
        input_tokens: Some(10),
        cached_input_tokens: Some(1000),
        cache_creation_input_tokens: Some(200),
        ..Usage::default()
    };
    assert_eq!(prompt_tokens(&usage, "anthropic"), Some(1210));
    assert_eq!(prompt_tokens(&usage, "openai-chat"), Some(10));
    assert_eq!(prompt_tokens(&Usage::default(), "anthropic"), None);
}

#[test]
fn a_report_calibrates_and_anchors_the_next_estimate() {
    let mut estimator = TokenEstimator::new();
    let sent = vec![
        Message::system("s".repeat(400)),
        Message::user("u".repeat(400)),
    ];
    let raw = estimate_messages(&sent);
    assert_eq!(estimator.estimate(&sent, &[]), raw);
    assert_eq!(
        estimator.observe(&sent, &[], raw * 3 / 2),
        Observation::Calibrated((raw * 3 / 2) as f64 / raw as f64)
    );
    // The same messages: exactly the report.
    assert_eq!(estimator.estimate(&sent, &[]), raw * 3 / 2);
    // More messages after the same ones: the report plus the scaled rest.
    let mut longer = sent.clone();
    longer.push(Message::assistant("a".repeat(40)));
    let added = estimate_message(&longer[2]);
    let scaled = (added as f64 * estimator.factor()).round() as u64;
    assert_eq!(estimator.estimate(&longer, &[]), raw * 3 / 2 + scaled);
    // A different history (compressed): the factor alone.
    let other = vec![Message::user("x".repeat(800))];
    let want = (estimate_messages(&other) as f64 * estimator.factor()).round() as u64;
    assert_eq!(estimator.estimate(&other, &[]), want);
}

#[test]
fn implausible_reports_are_ignored() {
    let sent = vec![Message::user("u".repeat(4000))];
    let raw = estimate_messages(&sent);
    // (report, calibrates)
    let cases = [
        (0, false),
        (raw / 10, false),
        (raw * 3, false),
        (raw / 2, true),
        (raw * 2, true),
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
fn a_turn_of_several_requests_calibrates_by_their_sum() {
    let sent = vec![Message::user("u".repeat(400))];
    let call = Message::new(
        Role::Assistant,
        vec![ContentBlock::ToolUse {
            id: "c".into(),
            name: "t".into(),
            input: json!({}),
            raw_input: None,
            signature: None,
        }],
    );
    let result = Message::new(
        Role::User,
        vec![ContentBlock::ToolResult {
            tool_use_id: "c".into(),
            content: vec![ToolResultPart::Text {
                text: "r".repeat(400),
            }],
            is_error: false,
        }],
    );
    let replies = vec![call, result, Message::assistant("done")];
    let first = estimate_messages(&sent);
    let second = first + estimate_messages(&replies[..2]);
    let mut estimator = TokenEstimator::new();
    let seen = estimator.observe_turn(&sent, &replies, &[], (first + second) * 2);
    assert_eq!(seen, Observation::Calibrated(2.0));
    assert!(estimator.is_calibrated());
    // No anchor: the next estimate is the factor times the heuristic.
    let mut all = sent.clone();
    all.extend(replies);
    assert_eq!(estimator.estimate(&all, &[]), estimate_messages(&all) * 2);
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
