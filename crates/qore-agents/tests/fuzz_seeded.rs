//! The short, seeded fuzz pass of this crate's fuzz targets (`qore_agents::fuzz_targets`,
//! the same functions the libFuzzer binaries under `fuzz/` run): a fixed seed and a bounded
//! number of cases per target (`qore_testkit::fuzz_seeds::run_seeded`). A crash a long run
//! finds becomes a test here calling the target with that input (none found so far).

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
