//! The log of the long-running commands (`qore serve`, `qore lsp`) on stderr, never stdout
//! (the LSP's protocol and serve's nothing): `QORE_LOG` (a tracing filter such as
//! `qore_lsp=debug`) when set and valid, else the command's default.

/// Send tracing's events to stderr, filtered by `QORE_LOG`, else by `default`.
pub fn init(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("QORE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
