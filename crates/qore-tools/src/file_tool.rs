//! What the file-writing tools (`create_file`, `write_file`, `edit_file`) share, in one
//! place: [`call_with_args`], how a call is run (arguments parsed, then the change made on
//! the blocking pool, never cancelled once begun), and [`write_through`], the one write path
//! (sandbox policy via [`Sandbox::resolve_writable`], one open, an atomic write over exactly
//! what was opened, the change recorded).

use std::sync::Arc;

use qore_core::{CancellationToken, ToolFuture, ToolOutput};
use serde::de::DeserializeOwned;

use crate::util::{parse_args, run_blocking_to_end};
use crate::{record_change, Sandbox, ToolOptions};

/// Runs a call of the tool `name`: parses `input` as `A` (a parse error is the output) and
/// runs `run` with the arguments on the blocking pool ([`run_blocking_to_end`]).
pub(crate) fn call_with_args<A: DeserializeOwned + Send + 'static>(
    name: &'static str,
    sandbox: &Arc<Sandbox>,
    options: &Arc<ToolOptions>,
    input: serde_json::Value,
    cancel: CancellationToken,
    run: fn(&Sandbox, &ToolOptions, A) -> ToolOutput,
) -> ToolFuture {
    let sandbox = sandbox.clone();
    let options = options.clone();
    Box::pin(run_blocking_to_end(cancel, move || {
        match parse_args::<A>(name, input) {
            Ok(args) => run(&sandbox, &options, args),
            Err(out) => out,
        }
    }))
}

/// Resolves `path` for writing, opens what is there once ([`Sandbox::open_change`]), makes
/// the new contents from the old ones with `make` (given the path for messages and the old
/// contents, `None` for no file), writes them over exactly what was opened and records the
/// change: the one write path of `create_file`, `write_file` and `edit_file`. Returns the
/// path for messages and the old contents.
pub(crate) fn write_through(
    sandbox: &Sandbox,
    options: &ToolOptions,
    path: &str,
    make: impl FnOnce(&str, Option<&[u8]>) -> Result<Vec<u8>, ToolOutput>,
) -> Result<(String, Option<Vec<u8>>), ToolOutput> {
    use std::io::ErrorKind;
    let path = sandbox
        .resolve_writable(path)
        .map_err(|e| ToolOutput::error(e.to_string()))?;
    let rel = sandbox.relative(&path);
    let change = sandbox.open_change(&path).map_err(|e| {
        ToolOutput::error(match e.kind() {
            ErrorKind::IsADirectory => format!("`{rel}` is a directory; give a file path"),
            ErrorKind::InvalidInput => format!("`{rel}` is not a regular file"),
            _ => format!("cannot read `{rel}`: {e}"),
        })
    })?;
    let new = make(&rel, change.old())?;
    let old = change.old().map(<[u8]>::to_vec);
    match sandbox.write_change(&path, change, &new) {
        Ok(()) => {
            record_change(options, &rel, old.as_deref(), &new);
            Ok((rel, old))
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(ToolOutput::error(format!(
            "`{rel}` was created by someone else while it was being written; nothing was \
             written: read it and try again"
        ))),
        Err(e) => Err(ToolOutput::error(format!("cannot write `{rel}`: {e}"))),
    }
}
