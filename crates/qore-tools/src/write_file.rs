//! `create_file` and `write_file`: put whole contents into a file of the project.
//!
//! Promises: `create_file` refuses a path that exists (checked atomically: the file is
//! opened with create-new, which also never follows a symlink); `write_file` creates (the
//! same way) or replaces, atomically (temp file + rename in the same directory, the old
//! permissions kept), and shows a unified diff when it replaced a text file; a file swapped
//! for a symlink or another file between the open and the write is refused, nothing written;
//! both, and `edit_file`, write through `file_tool::write_through`, the one write path;
//! both create missing parent directories, go through [`Sandbox::resolve_writable`] (so
//! nothing outside the root, in `.git`, ignored, or a `.qoreignore` file is written) and
//! refuse directories; both record what they changed when the options carry a recorder.
//! Destructive; not parallel-safe.

use std::sync::Arc;

use qore_core::{CancellationToken, Tool, ToolFuture, ToolOutput, ToolSpec};
use serde::Deserialize;
use serde_json::json;

use crate::diff::unified_diff;
use crate::file_tool::{call_with_args, write_through};
use crate::util::{looks_binary, parse_args, plural, split_lines};
use crate::{spec, Sandbox, ToolOptions};

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
        call_with_args(
            "create_file",
            &self.sandbox,
            &self.options,
            input,
            cancel,
            create,
        )
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
        call_with_args(
            "write_file",
            &self.sandbox,
            &self.options,
            input,
            cancel,
            write,
        )
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
