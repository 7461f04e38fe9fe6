//! [`qore_testkit::fuzz_seeds::TARGETS`] names exactly the binaries `fuzz/Cargo.toml`
//! builds: a target added to (or removed from) the fuzz crate without the list, or the list
//! without the crate, fails here.

use std::collections::BTreeSet;

/// The `name` of every `[[bin]]` section of a Cargo manifest.
fn bin_names(manifest: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut in_bin = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
            continue;
        }
        let Some(value) = line.strip_prefix("name").map(str::trim_start) else {
            continue;
        };
        if let (true, Some(value)) = (in_bin, value.strip_prefix('=')) {
            names.insert(value.trim().trim_matches('"').to_owned());
        }
    }
    names
}

#[test]
fn the_target_list_is_the_fuzz_crates_binaries() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/Cargo.toml");
    let manifest = std::fs::read_to_string(path).expect("fuzz/Cargo.toml");
    let built = bin_names(&manifest);
    assert!(!built.is_empty(), "no [[bin]] read from {path}");
    let listed: BTreeSet<String> = (qore_testkit::fuzz_seeds::TARGETS.iter())
        .map(|t| t.to_string())
        .collect();
    assert_eq!(
        listed.len(),
        qore_testkit::fuzz_seeds::TARGETS.len(),
        "a target listed twice"
    );
    assert_eq!(listed, built, "fuzz_seeds::TARGETS against {path}");
}
