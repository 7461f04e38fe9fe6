//! The short, seeded fuzz pass of this crate's fuzz targets (`qore_serve::fuzz_targets`,
//! the same functions the libFuzzer binaries `fuzz/fuzz_targets/serve_*.rs` run): a fixed
//! seed and a bounded number of cases per target (`qore_testkit::fuzz_seeds::run_seeded`),
//! and a replay of a few recorded seeds of each target as they are. A crash a long run
//! finds becomes a test here calling the target with that input ([`regressions`]).

use qore_serve::fuzz_targets::{
    completions, decode_chat, decode_messages, decode_responses, route, route_seeds,
};
use qore_testkit::fuzz_seeds::{run_seeded, seeds, TARGETS};

const CASES: u32 = 128;

type Target = fn(&[u8]);

/// Every `qore serve` target, by the name `fuzz/` builds it under.
const SERVE: &[(&str, Target)] = &[
    ("serve_decode_chat", decode_chat),
    ("serve_decode_responses", decode_responses),
    ("serve_decode_messages", decode_messages),
    ("serve_completions", completions),
    ("serve_route", route),
];

fn extra(target: &str) -> Vec<Vec<u8>> {
    match target {
        "serve_route" => route_seeds(),
        _ => Vec::new(),
    }
}

#[test]
fn every_serve_target_is_built_by_fuzz() {
    for (name, _) in SERVE {
        assert!(TARGETS.contains(name), "no fuzz target {name}");
    }
    let built = TARGETS.iter().filter(|t| t.starts_with("serve_")).count();
    assert_eq!(built, SERVE.len(), "a serve_ target without its pass here");
}

/// The first recorded seeds of each target, unchanged: the targets' own checks hold on
/// the real traffic (and the harness is compiled and run on stable).
#[test]
fn recorded_seeds_replay() {
    let Some(dir) = qore_testkit::fixtures_dir() else {
        eprintln!("no fixtures (QORE_FIXTURES): replay skipped");
        return;
    };
    let cassettes = qore_testkit::load_cassettes(&dir).unwrap();
    for (name, target) in SERVE {
        let mut pool = seeds(name, &cassettes);
        pool.extend(extra(name));
        assert!(pool.len() >= 3, "{name}: {} seeds", pool.len());
        for seed in pool.iter().take(24) {
            target(seed);
        }
    }
}

#[test]
fn serve_decode_chat_seeded() {
    run_seeded("serve_decode_chat", Vec::new(), CASES, decode_chat);
}

#[test]
fn serve_decode_responses_seeded() {
    run_seeded(
        "serve_decode_responses",
        Vec::new(),
        CASES,
        decode_responses,
    );
}

#[test]
fn serve_decode_messages_seeded() {
    run_seeded("serve_decode_messages", Vec::new(), CASES, decode_messages);
}

#[test]
fn serve_completions_seeded() {
    run_seeded("serve_completions", Vec::new(), CASES, completions);
}

#[test]
fn serve_route_seeded() {
    run_seeded("serve_route", extra("serve_route"), CASES, route);
}

/// Inputs long runs found, each with what it broke.
#[test]
fn regressions() {
    let cases: &[(Target, &str)] = &[
        // A user message without `content` decoded to an empty message, sanitizing left no
        // message at all, and `messages: []` went upstream (found by the same-wire
        // re-decode: qore serve refused what qore's client wrote). Now a 400 before sending.
        (
            decode_chat,
            r#"{"max_tokens":256,"messages":[{"ontent":"ok","role":"user"}],"model":"m"}"#,
        ),
        // The same through a tool result that answers no call.
        (
            decode_chat,
            r#"{"messages":[{"role":"tool","tool_call_id":"x","content":"5"}],"model":"m"}"#,
        ),
    ];
    for (target, input) in cases {
        target(input.as_bytes());
    }
}
