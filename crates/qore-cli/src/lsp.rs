//! `qore lsp`: the editor server on stdin/stdout (qore-lsp). Agents and providers come from
//! the config dir as for every command; notes go to stderr, never stdout (the protocol's).
//! The process ends when the server does (after `exit`, or at the end of stdin): exit code 0,
//! or 1 with one line on stderr when stdout cannot be written.

use std::process::ExitCode;

use qore_agents::config::default_dir;
use qore_session::SessionManager;

pub async fn lsp() -> ExitCode {
    let setup = qore_lsp::Setup {
        manager: SessionManager::new(None, crate::agents::load(), crate::connect::notes()),
        config_dir: default_dir(),
    };
    let code = match qore_lsp::serve_stdio(setup).await {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("qore: {err}");
            1
        }
    };
    // tokio's stdin reads on a thread no one can interrupt: waiting for it would keep the
    // process alive after `exit` while the editor holds stdin open. Everything is written.
    std::process::exit(code)
}
