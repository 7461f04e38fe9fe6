//! Tool call ids for function calls Gemini sent without one.
//!
//! Gemini 2.x function calls carry no `id` (Gemini 3 sends one, which is kept as is). The
//! engine needs an id per call that is unique across the whole conversation, not just the
//! response, because tool results are matched to calls by id in history. The scheme:
//!
//! `gemini_call_<process tag>_<sequence>`
//!
//! - `<sequence>`: a process-wide counter (atomic), so no two ids made by one process are
//!   equal, whatever the number of decoders, responses or threads;
//! - `<process tag>`: 12 hex digits drawn once per process from the standard library's
//!   randomly keyed hasher, mixed with the clock and the process id, so ids made by
//!   different runs (a conversation saved and resumed later) do not collide either.
//!
//! The prefix marks the id as ours: the request encoder does not send such ids back to
//! Gemini (the provider never saw them), only the ids Gemini itself made.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Prefix of every synthesized id.
pub const SYNTHESIZED_PREFIX: &str = "gemini_call_";

static SEQUENCE: AtomicU64 = AtomicU64::new(1);

fn process_tag() -> u64 {
    static TAG: OnceLock<u64> = OnceLock::new();
    *TAG.get_or_init(|| {
        let mut hasher = RandomState::new().build_hasher();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        hasher.write_u128(nanos);
        hasher.write_u32(std::process::id());
        hasher.finish() & 0xffff_ffff_ffff
    })
}

/// A new id, unique within the process and, with overwhelming likelihood, across runs.
pub fn synthesize() -> String {
    let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    format!("{SYNTHESIZED_PREFIX}{:012x}_{sequence}", process_tag())
}

/// True for ids this engine synthesized for calls Gemini sent without one (Gemini never
/// saw them, so they are not sent back).
pub fn is_synthesized(id: &str) -> bool {
    id.starts_with(SYNTHESIZED_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_across_threads_and_recognizable() {
        let handles: Vec<_> = (0..4)
            .map(|_| std::thread::spawn(|| (0..500).map(|_| synthesize()).collect::<Vec<_>>()))
            .collect();
        let mut seen = HashSet::new();
        for handle in handles {
            for id in handle.join().unwrap() {
                assert!(is_synthesized(&id), "{id}");
                assert!(seen.insert(id.clone()), "duplicate {id}");
            }
        }
        assert_eq!(seen.len(), 2000);
        assert!(!is_synthesized("call_966934"));
    }
}
