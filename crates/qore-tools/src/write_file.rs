//! `create_file` and `write_file`: put whole contents into a file of the project.
//!
//! Promises: `create_file` refuses a path that exists (checked atomically: the file is
//! opened with create-new, which also never follows a symlink); `write_file` creates (the
//! same way) or replaces, atomically (temp file + rename in the same directory, the old
//! permissions kept), and shows a unified diff when it replaced a text file; a file swapped
//! for a symlink or another file between the open and the write is refused, nothing written;
//! both, and `edit_file`, write through [`write_through`], the one write path; both create
//! missing parent
//! directories, go through [`Sandbox::resolve_writable`] (so nothing outside the root, in
//! `.git`, ignored, or a `.qoreignore` file is written) and refuse directories; both record
//! what they changed when the options carry a recorder. Destructive; not parallel-safe.

use std::sync::Arc;

use qore_core::{CancellationToken, Tool, ToolFuture, ToolOutput, ToolSpec};
use serde::Deserialize;
use serde_json::json;

use crate::diff::unified_diff;
use crate::util::{looks_binary, parse_args, plural, run_blocking_to_end, split_lines};
use crate::{record_change, spec, Sandbox, ToolOptions};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    content: String,
}

fn schema(path_help: &str) -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "path": { "type": "string", "description": path_help },
            "content": { "type": "string", "description": "The complete contents of the file." }
        },
        "required": ["path", "content"],
        "additionalProperties": false
    })
}

/// Creates a new file; refuses existing ones.
pub struct CreateFile {
    spec: ToolSpec,
    sandbox: Arc<Sandbox>,
    options: Arc<ToolOptions>,
}

impl CreateFile {
    pub fn new(sandbox: Arc<Sandbox>, options: Arc<ToolOptions>) -> Self {
        let spec = spec(
            "create_file",
            "Create a new file with the given contents (missing parent directories are \
             created). Fails if the file already exists: use edit_file to change a file or \
             write_file to replace it.",
            schema("Path of the new file, relative to the project root."),
        );
        CreateFile {
            spec,
            sandbox,
            options,
        }
    }
}

impl Tool for CreateFile {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn call(&self, input: serde_json::Value, cancel: CancellationToken) -> ToolFuture {
        let sandbox = self.sandbox.clone();
        let options = self.options.clone();
        Box::pin(run_blocking_to_end(cancel, move || {
            match parse_args::<Args>("create_file", input) {
                Ok(args) => create(&sandbox, &options, args),
                Err(out) => out,
            }
        }))
    }
}

fn create(sandbox: &Sandbox, options: &ToolOptions, args: Args) -> ToolOutput {
    let content = args.content;
    let written = write_through(sandbox, options, &args.path, |rel, old| match old {
        Some(_) => Err(ToolOutput::error(format!(
            "`{rel}` already exists; use edit_file to change it or write_file to replace it"
        ))),
        None => Ok(content.clone().into_bytes()),
    });
    match written {
        Ok((rel, _)) => ToolOutput::text(format!("Created `{rel}` ({}).", size(&content))),
        Err(out) => out,
    }
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

/// Creates or replaces a file.
pub struct WriteFile {
    spec: ToolSpec,
    sandbox: Arc<Sandbox>,
    options: Arc<ToolOptions>,
}

impl WriteFile {
    pub fn new(sandbox: Arc<Sandbox>, options: Arc<ToolOptions>) -> Self {
        let spec = spec(
            "write_file",
            "Write the complete contents of a file, replacing it if it exists (missing parent \
             directories are created). Returns a unified diff when a file was replaced. \
             Prefer edit_file for small changes to an existing file.",
            schema("File path relative to the project root."),
        );
        WriteFile {
            spec,
            sandbox,
            options,
        }
    }
}

impl Tool for WriteFile {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn call(&self, input: serde_json::Value, cancel: CancellationToken) -> ToolFuture {
        let sandbox = self.sandbox.clone();
        let options = self.options.clone();
        Box::pin(run_blocking_to_end(cancel, move || {
            match parse_args::<Args>("write_file", input) {
                Ok(args) => write(&sandbox, &options, args),
                Err(out) => out,
            }
        }))
    }
}

fn write(sandbox: &Sandbox, options: &ToolOptions, args: Args) -> ToolOutput {
    let content = args.content;
    let (rel, old) = match write_through(sandbox, options, &args.path, |_, _| {
        Ok(content.clone().into_bytes())
    }) {
        Ok(written) => written,
        Err(out) => return out,
    };
    let size = size(&content);
    match old {
        None => ToolOutput::text(format!("Created `{rel}` ({size}).")),
        Some(old) if old == content.as_bytes() => ToolOutput::text(format!(
            "`{rel}` already had these contents; nothing changed."
        )),
        Some(old) if looks_binary(&old) => {
            ToolOutput::text(format!("Replaced `{rel}` (was binary; now {size})."))
        }
        Some(old) => {
            let old = String::from_utf8_lossy(&old);
            let diff = unified_diff(&rel, &old, &content, options.diff_max_lines);
            ToolOutput::text(format!("Replaced `{rel}` ({size}).\n{diff}"))
        }
    }
}

/// The path and contents of a `create_file` or `write_file` call (`tool`), as the tool
/// reads them; or why they are not valid.
pub(crate) fn preview_args(
    tool: &str,
    input: &serde_json::Value,
) -> Result<(String, String), String> {
    let args: Args = parse_args(tool, input.clone()).map_err(|out| out.text_content())?;
    Ok((args.path, args.content))
}

fn size(content: &str) -> String {
    format!(
        "{}, {}",
        plural(split_lines(content).len(), "line"),
        plural(content.len(), "byte")
    )
}
