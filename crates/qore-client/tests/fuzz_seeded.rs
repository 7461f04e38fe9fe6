//! The short, seeded fuzz pass of this crate's fuzz targets (`qore_client::fuzz_targets`,
//! the same functions the libFuzzer binaries under `fuzz/` run): a fixed seed and a bounded
//! number of cases per target (`qore_testkit::fuzz_seeds::run_seeded`). A crash a long run
//! finds becomes a test here calling the target with that input ([`regressions`]).

use qore_client::fuzz_targets::{decode, ndjson_framer, sse_framer, text_protocol};
use qore_client::protocols::NAMES;
use qore_testkit::fuzz_seeds::{run_seeded, TARGETS};

const CASES: u32 = 256;

#[test]
fn sse_framer_seeded() {
    run_seeded("sse_framer", Vec::new(), CASES, sse_framer);
}

#[test]
fn ndjson_framer_seeded() {
    run_seeded("ndjson_framer", Vec::new(), CASES, ndjson_framer);
}

#[test]
fn text_protocol_seeded() {
    run_seeded("text_protocol", Vec::new(), CASES, text_protocol);
}

/// One pass per wire, each a target of its own under `fuzz/`.
#[test]
fn every_decoder_seeded() {
    for wire in NAMES {
        let target = format!("decode_{}", wire.replace('-', "_"));
        assert!(
            TARGETS.contains(&target.as_str()),
            "no fuzz target {target}"
        );
        run_seeded(&target, Vec::new(), CASES, |data| decode(wire, data));
    }
}

/// Inputs long runs found, each with what it broke.
#[test]
fn regressions() {
    // A last line of form feeds without its newline: `finish` trimmed it as blank (Rust's
    // ASCII whitespace) while the same line with a newline was dispatched; NDJSON's blank
    // lines are spaces, tabs and CRs only.
    ndjson_framer(b"\x7f\x5b\x0c\x0c\xff\x0c\x0c\x0c\x0c\x0c");
}
