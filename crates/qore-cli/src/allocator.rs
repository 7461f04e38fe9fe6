//! The process's global allocator: mimalloc instead of the system's malloc.
//!
//! Why: a relayed stream allocates per event (the decoded text, the encoded frame, hyper's
//! buffers) and frees it a moment later on the same thread; under glibc's malloc that was
//! about a tenth of `qore serve`'s CPU on a busy core (`perf`, see docs/bench-serve.md).
//! mimalloc's thread-local free lists serve that pattern with less work.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
