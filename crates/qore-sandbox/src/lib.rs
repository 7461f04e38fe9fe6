//! qore-sandbox: the operating-system sandbox for the commands qore runs for a model.
//!
//! This crate promises:
//! - one [`Policy`] object (mode, network, writable and unreadable places, environment)
//!   that the file tools consult ([`Policy::check_write`], [`Policy::check_read`]) and the
//!   helper enforces in the kernel, so the two agree on what is protected;
//! - the helper's work ([`exec`]): close-on-exec for inherited descriptors, a new session,
//!   all capabilities dropped, no-new-privileges, Landlock (files, TCP, scoping of abstract
//!   Unix sockets and signals) and a seccomp filter, then `exec` (Linux only);
//! - [`probe`]: what the kernel supports, asked of the kernel itself.
//!
//! ## Two places Landlock cannot carve out, and what is done instead
//!
//! Landlock only adds rights beneath a directory; it cannot deny a subtree of a tree it
//! allows. So:
//! - **read-only `.git` and `.qore` inside a writable root**: write is granted on each entry
//!   of the root as it exists when the helper starts, except `.git` and `.qore`, and the root
//!   directory itself stays read-only. A command can change anything inside those entries
//!   but cannot create, delete or rename entries directly in the root (`touch new.txt` at the
//!   top, or the first `cargo build` creating `target/`, fails with "Permission denied").
//!   Each command lists the root again when it starts, so an entry made by the file tools or
//!   by hand is writable for the next command. The other ways out were a mount namespace
//!   (needs root or unprivileged user namespaces, which distributions often disable) or
//!   granting the root and leaving `.git` writable (codex's old Landlock path, which its own
//!   tests mark as unprotected); a sandbox that holds everywhere and fails loudly in one
//!   known case was chosen over one that needs privileges or leaves hooks writable;
//! - **unreadable secret places under a readable `/`**: read is granted on the children of
//!   `/` and, down every path to a secret place, on the children of each directory on the
//!   way, except the secret place itself; the directories on the way get only `READ_DIR`, so
//!   their listings stay visible (names in `~/.ssh` can be listed, the keys not read).
//!
//! Not confined by this crate (said in docs/sandbox.md): descriptors opened before the
//! helper (rights are bound at `open`), connects to pathname Unix sockets when the network
//! is on (Landlock < 9), UDP when the network is on (Landlock < 10), resources.

#[cfg(target_os = "linux")]
mod exec;
#[cfg(target_os = "linux")]
mod landlock_rules;
mod policy;
#[cfg(target_os = "linux")]
mod probe;
#[cfg(target_os = "linux")]
mod seccomp;

#[cfg(target_os = "linux")]
pub use exec::exec;
#[cfg(target_os = "linux")]
pub use landlock_rules::grants;
pub use policy::{
    default_unreadable, Denied, Mode, Policy, PROTECTED, PROVIDER_KEY_VARS, SECRET_SUFFIXES,
};
#[cfg(target_os = "linux")]
pub use probe::{probe, Support, SIMULATE_NO_LANDLOCK};

/// Why the sandbox could not be set up. The helper prints it and exits with
/// [`SETUP_FAILED`], before the command ever runs.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("unknown sandbox mode `{0}`; use read-only, workspace-write or full-access")]
    BadMode(String),
    #[error("the project root `{root}` cannot be used: {source}")]
    Root {
        root: String,
        #[source]
        source: std::io::Error,
    },
    #[error("no command given after `--`")]
    NoCommand,
    #[error("cannot set up the sandbox ({0}): {1}")]
    Setup(&'static str, #[source] std::io::Error),
    #[error("cannot drop capabilities: {0}")]
    Capabilities(String),
    #[error("Landlock: {0}")]
    Landlock(String),
    #[error(
        "this kernel enforces no Landlock rules, so the command would run unconfined; \
         refused (see `qore sandbox check`)"
    )]
    NotEnforced,
    #[error(
        "this kernel cannot confine commands ({0}); refused: a command is never run \
         unconfined without `[sandbox] mode = \"full-access\"`"
    )]
    Unsupported(String),
    #[error("seccomp: {0}")]
    Seccomp(String),
    #[error("cannot run `{program}`: {source}")]
    Exec {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

/// The helper's exit code when the sandbox could not be set up (the command never ran).
/// 125, as `env`, `nice` and container runtimes use for "the wrapper failed".
pub const SETUP_FAILED: u8 = 125;

/// What a sandboxed command's stderr starts with when the helper itself failed.
pub const HELPER_PREFIX: &str = "qore sandbox: ";
