#!/usr/bin/env bash
# Run one libFuzzer target under fuzz/ for SECONDS (default 60).
#   scripts/fuzz.sh TARGET [SECONDS] [extra libFuzzer flags...]
# Targets: see fuzz/fuzz_targets/ (or `cargo fuzz list` in the repository root): the client's
# framers and decoders, the agents' profile and comma targets, and `qore serve`'s inbound
# side (serve_decode_chat, serve_decode_responses, serve_decode_messages, serve_completions,
# serve_route; their promises in crates/qore-serve/src/fuzz_targets/).
# Installs cargo-fuzz when missing, writes the starting corpus from the recorded fixtures
# (fuzz/corpus/TARGET) on first use, and runs on the stable toolchain with
# RUSTC_BOOTSTRAP=1 (cargo-fuzz wants nightly flags), with debug assertions and overflow
# checks, without a sanitizer (the code under test is safe Rust; the checks are the
# targets' own assertions), on inputs up to 4 KiB (a later -max_len=N overrides it).
# Crashes land in fuzz/artifacts/TARGET; turn each into a regression test (the target
# called with that input) in the crate's tests/fuzz_seeded.rs.
set -euo pipefail
target=${1:?usage: scripts/fuzz.sh TARGET [SECONDS] [libFuzzer flags...]}
seconds=${2:-60}
shift $(( $# >= 2 ? 2 : 1 ))
cd "$(dirname "$0")/.."
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
if [ ! -d "fuzz/corpus/$target" ]; then
    cargo run --release --manifest-path fuzz/Cargo.toml --example seed_corpus
fi
exec cargo fuzz run -s none "$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 "$@"
