//! The process's global allocator: mimalloc instead of the system's malloc, with its arenas
//! committed on demand.
//!
//! Why mimalloc: a relayed stream allocates per event (the decoded text, the encoded frame,
//! hyper's buffers) and frees it a moment later on the same thread; under glibc's malloc that
//! was about a tenth of `qore serve`'s CPU on a busy core (`perf`, see docs/bench-serve.md).
//! mimalloc's thread-local free lists serve that pattern with less work.
//!
//! Why not eagerly committed arenas (mimalloc's default on Linux): at 1,000 open streams
//! they held `qore serve` at 129–131 MiB resident against 91–94 MiB committed on demand, with
//! no difference in deltas/s or CPU we could tell apart from run-to-run noise (three runs
//! each, docs/bench-serve.md). The setting is made before the first allocation (an
//! `.init_array` entry runs before Rust's runtime starts) and only as a default:
//! `MIMALLOC_ARENA_EAGER_COMMIT` in the environment still wins.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_arena_eager_commit`: its place in mimalloc's `mi_option_e` (mimalloc.h, the
/// same in v2 and v3), which libmimalloc-sys does not name.
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static CONFIGURE: extern "C" fn() = configure;

/// Runs before `main` and before any allocation of ours.
#[cfg(target_os = "linux")]
extern "C" fn configure() {
    // SAFETY: a plain store into mimalloc's option table, before any other thread exists.
    unsafe { libmimalloc_sys::mi_option_set_default(ARENA_EAGER_COMMIT, 0) }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    const CHILD: &str = "QORE_ALLOCATOR_TEST_CHILD";

    fn eager_commit() -> std::os::raw::c_long {
        // SAFETY: reads mimalloc's option table.
        unsafe { libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT) }
    }

    /// Run in a child with the environment variable set (see below); prints what it reads.
    #[test]
    fn child_reads_the_option() {
        if std::env::var_os(CHILD).is_some() {
            println!("eager_commit={}", eager_commit());
        }
    }

    #[test]
    fn arenas_are_committed_on_demand_unless_the_environment_says_otherwise() {
        if std::env::var_os("MIMALLOC_ARENA_EAGER_COMMIT").is_none() {
            assert_eq!(
                eager_commit(),
                0,
                "mimalloc's default (2) is still in force"
            );
        }
        // The index names the option mimalloc reads from MIMALLOC_ARENA_EAGER_COMMIT: a child
        // with it set reads that value at the same index, and our default does not override it.
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "allocator::tests::child_reads_the_option",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .env("MIMALLOC_ARENA_EAGER_COMMIT", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("eager_commit=1"), "{text}");
    }
}
