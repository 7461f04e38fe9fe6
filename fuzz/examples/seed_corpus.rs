//! Writes the starting corpus of every fuzz target into `corpus/<target>/` (beside this
//! crate's Cargo.toml): the recorded fixtures and hand-written seeds of
//! `qore_testkit::fuzz_seeds`, the bundled agent profiles, and the router target's own
//! model names (`qore_serve::fuzz_targets::route_seeds`), each once whole and once under a
//! chunking header where the target reads one (see `qore_client::fuzz_targets`).

use std::path::Path;

use anyhow::{Context, Result};
use qore_testkit::fuzz_seeds::{is_chunked, seeds, TARGETS};

/// Chunking headers put before each seed: one chunk, then widths 1, 2, 3 and 61 repeating.
const HEADERS: &[&[u8]] = &[&[0], &[4, 1, 2, 3, 61]];

fn main() -> Result<()> {
    let dir = qore_testkit::fixtures_dir().context("no fixtures: set QORE_FIXTURES")?;
    let cassettes = qore_testkit::load_cassettes(&dir)?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    for target in TARGETS {
        let mut bodies = seeds(target, &cassettes);
        if *target == "profile" {
            let bundled = qore_agents::catalog::BUNDLED_AGENTS.iter();
            bodies.extend(bundled.map(|(_, text)| text.as_bytes().to_vec()));
        }
        if *target == "serve_route" {
            bodies.extend(qore_serve::fuzz_targets::route_seeds());
        }
        let out = root.join(target);
        std::fs::create_dir_all(&out).with_context(|| format!("{}", out.display()))?;
        let mut written = 0;
        for (n, body) in bodies.iter().enumerate() {
            let headers = if is_chunked(target) {
                HEADERS
            } else {
                &[&[][..]]
            };
            for (h, header) in headers.iter().enumerate() {
                let file = out.join(format!("seed_{n:04}_{h}"));
                std::fs::write(&file, [header, body.as_slice()].concat())
                    .with_context(|| format!("{}", file.display()))?;
                written += 1;
            }
        }
        println!("{target}: {written} seeds");
    }
    Ok(())
}
