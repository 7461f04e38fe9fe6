//! `create_file` and `write_file`: put whole contents into a file of the project.
//!
//! Promises: `create_file` refuses a path that exists (checked atomically: the file is
//! opened with create-new, which also never follows a symlink); `write_file` creates or
//! replaces, atomically (temp file + rename in the same directory, the old permissions kept),
//! and shows a unified diff when it replaced a text file; both create missing parent
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
    let path = match sandbox.resolve_writable(&args.path) {
        Ok(p) => p,
        Err(e) => return ToolOutput::error(e.to_string()),
    };
    let rel = sandbox.relative(&path);
    if path.symlink_metadata().is_ok() {
        return ToolOutput::error(format!(
            "`{rel}` already exists; use edit_file to change it or write_file to replace it"
        ));
    }
    match sandbox.create_new(&path, args.content.as_bytes()) {
        Ok(()) => {
            record_change(options, &rel, None, args.content.as_bytes());
            ToolOutput::text(format!("Created `{rel}` ({}).", size(&args.content)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => ToolOutput::error(format!(
            "`{rel}` already exists; use edit_file to change it or write_file to replace it"
        )),
        Err(e) => ToolOutput::error(format!("cannot create `{rel}`: {e}")),
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
    let path = match sandbox.resolve_writable(&args.path) {
        Ok(p) => p,
        Err(e) => return ToolOutput::error(e.to_string()),
    };
    let rel = sandbox.relative(&path);
    let old = match sandbox.metadata(&path) {
        Ok(m) if m.is_dir() => {
            return ToolOutput::error(format!("`{rel}` is a directory; give a file path"))
        }
        Ok(m) if !m.is_file() => {
            return ToolOutput::error(format!("`{rel}` is not a regular file"))
        }
        Ok(_) => match sandbox.read(&path) {
            Ok(bytes) => Some(bytes),
            Err(e) => return ToolOutput::error(format!("cannot read `{rel}`: {e}")),
        },
        Err(_) => None,
    };
    if let Err(e) = sandbox.replace(&path, args.content.as_bytes()) {
        return ToolOutput::error(format!("cannot write `{rel}`: {e}"));
    }
    record_change(options, &rel, old.as_deref(), args.content.as_bytes());
    let size = size(&args.content);
    match old {
        None => ToolOutput::text(format!("Created `{rel}` ({size}).")),
        Some(old) if old == args.content.as_bytes() => ToolOutput::text(format!(
            "`{rel}` already had these contents; nothing changed."
        )),
        Some(old) if looks_binary(&old) => {
            ToolOutput::text(format!("Replaced `{rel}` (was binary; now {size})."))
        }
        Some(old) => {
            let old = String::from_utf8_lossy(&old);
            let diff = unified_diff(&rel, &old, &args.content, options.diff_max_lines);
            ToolOutput::text(format!("Replaced `{rel}` ({size}).\n{diff}"))
        }
    }
}

fn size(content: &str) -> String {
    format!(
        "{}, {}",
        plural(split_lines(content).len(), "line"),
        plural(content.len(), "byte")
    )
}
