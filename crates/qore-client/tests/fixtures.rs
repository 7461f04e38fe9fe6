//! The recorded-traffic harness: every exchange of every cassette under
//! `<fixtures>/rig-cassettes/` is classified by protocol; the exchanges of protocols this
//! build speaks are replayed from a loopback [`ReplayServer`] (sliced into small irregular
//! pieces) to a real [`qore_client::Client`], and what the client decoded is compared with
//! oracles computed independently from the recorded bytes.
//!
//! Structure (extend it, do not fork it):
//! - [`classify`] maps an exchange (method + path, and the provider folder) to a protocol
//!   label; everything the engine does not speak is `out of scope`;
//! - [`CHECKERS`] is the one table of per-protocol checkers: a label, the provider folders
//!   whose exchanges of that label are in scope, and the async check;
//! - exchanges whose label has no checker, or whose folder is not listed for it, are counted
//!   as skipped under their label, so nothing in scope is skipped silently.
//!
//! Output: one `fixtures <label>: P passed / F failed / S skipped (out of scope)` line per
//! label, a totals line, and up to 30 failure descriptions.

/// Print a summary line past the test harness's output capture, so that every run (CI's
/// included) shows the per-protocol counts.
macro_rules! report {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

#[path = "fixtures/anthropic.rs"]
mod anthropic;
#[path = "fixtures/common.rs"]
mod common;
#[path = "fixtures/gemini.rs"]
mod gemini;
#[path = "fixtures/ollama.rs"]
mod ollama;
#[path = "fixtures/openai_chat.rs"]
mod openai_chat;
#[path = "fixtures/openai_responses.rs"]
mod openai_responses;
mod support;
#[path = "fixtures/turn.rs"]
mod turn;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use qore_testkit::{Cassette, Exchange};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use common::{Case, Covered};

/// How many exchanges are replayed at once.
const CONCURRENCY: usize = 16;
/// How many failure descriptions are printed.
const MAX_REPORTED: usize = 30;

const OUT_OF_SCOPE: &str = "out of scope";

/// Folders whose servers speak OpenAI Chat Completions (their `GET …/models` is the
/// OpenAI model listing).
const OPENAI_COMPATIBLE: &[&str] = &["openai", "llamacpp", "mistral", "deepseek", "openrouter"];

/// An async check of one exchange: `Ok(what it exercised)` when the client decoded it
/// right (tags such as `streamed`, `tool calls`, counted in the coverage line),
/// `Err(what differed)` otherwise.
type CheckFn =
    for<'a> fn(&'a Case<'a>) -> Pin<Box<dyn Future<Output = Result<Covered, String>> + Send + 'a>>;

/// A protocol this build checks, and where its exchanges are in scope.
struct Checker {
    label: &'static str,
    folders: &'static [&'static str],
    check: CheckFn,
}

/// The one table of per-protocol checkers.
const CHECKERS: &[Checker] = &[
    Checker {
        label: "openai-chat",
        folders: OPENAI_COMPATIBLE,
        check: |case| Box::pin(openai_chat::check(case)),
    },
    Checker {
        label: "ollama",
        folders: &["ollama"],
        check: |case| Box::pin(ollama::check(case)),
    },
    Checker {
        label: "anthropic-messages",
        folders: &["anthropic"],
        check: |case| Box::pin(anthropic::check(case)),
    },
    Checker {
        label: "gemini",
        folders: &["gemini"],
        check: |case| Box::pin(gemini::check(case)),
    },
    Checker {
        label: "openai-responses",
        folders: &["openai", "chatgpt", "openrouter", "llamacpp"],
        check: |case| Box::pin(openai_responses::check(case)),
    },
];

/// The protocol an exchange speaks, from its method and path (and the provider folder, for
/// model listings, whose path alone does not say).
fn classify(provider: &str, ex: &Exchange) -> &'static str {
    let path = ex.path.as_str();
    let method = ex.method.as_str();
    let chat = method == "POST" && path.ends_with("/chat/completions");
    let listing =
        method == "GET" && path.ends_with("/models") && OPENAI_COMPATIBLE.contains(&provider);
    if chat || listing {
        "openai-chat"
    } else if path.ends_with("/v1/messages")
        || (provider == "anthropic" && method == "GET" && path == "/v1/models")
    {
        "anthropic-messages"
    } else if path.ends_with("/responses") && method == "GET" {
        // The WebSocket mode's upgrade request: a transport the engine does not speak.
        "openai-responses-websocket"
    } else if path.ends_with("/responses") {
        "openai-responses"
    } else if path.ends_with(":streamGenerateContent")
        || path.ends_with(":generateContent")
        || (method == "GET" && path.ends_with("/v1beta/models") && provider == "gemini")
    {
        "gemini"
    } else if path == "/api/chat" || (method == "GET" && path == "/api/tags") {
        "ollama"
    } else {
        OUT_OF_SCOPE
    }
}

/// A stable per-exchange seed for the slicing: FNV-1a of the file name and document index,
/// mixed with env `QORE_FIXTURES_SEED` when set (to explore other cuts; a failure report
/// names the exchange, and the same env value replays the same cut).
fn seed(name: &str, doc: usize) -> u64 {
    let extra: u64 = std::env::var("QORE_FIXTURES_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name
        .bytes()
        .chain(doc.to_le_bytes())
        .chain(extra.to_le_bytes())
    {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash | 1
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
    /// How many passed exchanges exercised each feature.
    covered: BTreeMap<&'static str, usize>,
}

#[tokio::test(flavor = "multi_thread")]
async fn recorded_traffic_decodes_as_the_wire_says() {
    let Some(dir) = qore_testkit::fixtures_dir() else {
        report!("fixtures: skipped, no fixtures directory (set QORE_FIXTURES)");
        return;
    };
    let started = Instant::now();
    let cassettes: Vec<Cassette> =
        qore_testkit::load_cassettes(&dir).unwrap_or_else(|err| panic!("loading cassettes: {err}"));

    let loaded = started.elapsed();
    let mut tallies: BTreeMap<&'static str, Tally> = BTreeMap::new();
    // (checker, file, document) of every exchange in scope.
    let mut cases: Vec<(usize, usize, usize)> = Vec::new();
    let mut total = 0usize;
    for (file, cassette) in cassettes.iter().enumerate() {
        for (doc, exchange) in cassette.exchanges.iter().enumerate() {
            total += 1;
            let label = classify(&cassette.provider, exchange);
            let tally = tallies.entry(label).or_default();
            let checker = CHECKERS
                .iter()
                .position(|c| c.label == label && c.folders.contains(&cassette.provider.as_str()));
            match checker {
                Some(checker) => cases.push((checker, file, doc)),
                None => tally.skipped += 1,
            }
        }
    }

    // Each case runs in its own task, so the client side (framing, decoding) uses every
    // core, not just the test's task; a semaphore bounds how many run at once.
    let cassettes = Arc::new(cassettes);
    let permits = Arc::new(Semaphore::new(CONCURRENCY));
    let mut tasks = JoinSet::new();
    for (checker, file, doc) in cases {
        let cassettes = Arc::clone(&cassettes);
        let permits = Arc::clone(&permits);
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.expect("semaphore open");
            let cassette = &cassettes[file];
            let name = cassette.name();
            let case = Case {
                seed: seed(&name, doc),
                name,
                doc,
                exchange: &cassette.exchanges[doc],
            };
            let checker = &CHECKERS[checker];
            let result = (checker.check)(&case).await;
            (checker.label, format!("{}#{}", case.name, case.doc), result)
        });
    }
    let mut results = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        results.push(joined.expect("a check panicked"));
    }

    let mut failures = Vec::new();
    for (label, at, result) in results {
        let tally = tallies.entry(label).or_default();
        match result {
            Ok(covered) => {
                tally.passed += 1;
                for tag in covered {
                    *tally.covered.entry(tag).or_default() += 1;
                }
            }
            Err(what) => {
                tally.failed += 1;
                failures.push(format!("{label} {at}: {what}"));
            }
        }
    }
    failures.sort();

    for (label, t) in &tallies {
        report!(
            "fixtures {label}: {} passed / {} failed / {} skipped (out of scope)",
            t.passed,
            t.failed,
            t.skipped
        );
    }
    for (label, t) in tallies.iter().filter(|(_, t)| !t.covered.is_empty()) {
        let covered: Vec<String> = t.covered.iter().map(|(k, n)| format!("{n} {k}")).collect();
        report!("  coverage {label}: {}", covered.join(", "));
    }
    let (passed, failed, skipped) = tallies.values().fold((0, 0, 0), |acc, t| {
        (acc.0 + t.passed, acc.1 + t.failed, acc.2 + t.skipped)
    });
    report!(
        "fixtures total: {total} exchanges in {} files: {passed} passed / {failed} failed / \
         {skipped} skipped (loaded in {:.1} s, replayed in {:.1} s)",
        cassettes.len(),
        loaded.as_secs_f64(),
        (started.elapsed() - loaded).as_secs_f64()
    );
    for failure in failures.iter().take(MAX_REPORTED) {
        report!("  FAILED {failure}");
    }
    if failures.len() > MAX_REPORTED {
        report!("  ... and {} more", failures.len() - MAX_REPORTED);
    }

    assert_eq!(
        passed + failed + skipped,
        total,
        "every exchange is accounted for"
    );
    for checker in CHECKERS {
        let t = tallies
            .get(checker.label)
            .expect("a checked label has exchanges");
        assert_eq!(t.failed, 0, "{} exchanges failed", checker.label);
        assert!(t.passed > 0, "no {} exchange was checked", checker.label);
    }
}
