//! The command line of a stdio MCP server that opted in to the sandbox (`sandbox = "…"`).
//!
//! Promises: the server starts as `<qore> sandbox-exec <policy> -- command args...` (the
//! current executable is the helper), under a qore-sandbox policy of the given mode whose
//! root is the server's `cwd` (else qore's current directory), network off, the user's
//! secret places unreadable; the variables the server's `env` sets are passed on although
//! their names may look like secrets (the user gave them to this server).

use std::collections::BTreeMap;
use std::path::Path;

use qore_sandbox::{Mode, Policy};

/// The helper command for `command args` under `mode`, or why there is none.
pub(crate) fn command(
    mode: Mode,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&Path>,
) -> Result<tokio::process::Command, String> {
    let root = match cwd {
        Some(cwd) => cwd.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| format!("no current directory for the sandbox's root: {e}"))?,
    };
    let mut policy = Policy::new(mode, &root).map_err(|e| e.to_string())?;
    policy.keep_env = env.keys().cloned().collect();
    let helper = std::env::current_exe()
        .map_err(|e| format!("cannot find the sandbox helper (qore itself): {e}"))?;
    let mut cmd = tokio::process::Command::new(helper);
    cmd.arg("sandbox-exec")
        .args(policy.to_args())
        .arg("--")
        .arg(command)
        .args(args);
    Ok(cmd)
}
