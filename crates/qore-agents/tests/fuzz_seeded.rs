//! The short, seeded fuzz pass of this crate's fuzz targets (`qore_agents::fuzz_targets`,
//! the same functions the libFuzzer binaries under `fuzz/` run): a fixed seed and a bounded
//! number of cases per target (`qore_testkit::fuzz_seeds::run_seeded`), plus every crash
//! the long runs found, kept as a regression input.

use qore_agents::catalog::BUNDLED_AGENTS;
use qore_agents::fuzz_targets::{json_commas, profile};
use qore_testkit::fuzz_seeds::run_seeded;

#[test]
fn json_commas_seeded() {
    run_seeded("json_commas", Vec::new(), 512, json_commas);
}

#[test]
fn profile_seeded() {
    let bundled = BUNDLED_AGENTS
        .iter()
        .map(|(_, text)| text.as_bytes().to_vec());
    run_seeded("profile", bundled.collect(), 128, profile);
}

/// Inputs the long runs found a crash with, by target.
const REGRESSIONS: &[(&str, &[u8])] = &[];

#[test]
fn crashes_found_by_fuzzing_stay_fixed() {
    for (target, input) in REGRESSIONS {
        match *target {
            "json_commas" => json_commas(input),
            _ => profile(input),
        }
    }
}
