//! `list_files`: the entries of a directory in the project, optionally recursive.
//!
//! Promises: only what the sandbox allows is listed (ignored files and `.git` never appear);
//! paths are relative to the project root with `/` separators, directories end with `/`,
//! symlinks are marked and not followed; entries come in tree order, sorted by name; at most
//! `list_limit` entries are shown, followed by a note of how many more there are. Read-only
//! and parallel-safe; stops when cancelled.

use std::sync::Arc;

use qore_core::{CancellationToken, ToolOutput, ToolSpec};
use serde::Deserialize;
use serde_json::json;

use crate::util::cancelled;
use crate::{clamp_limit, spec, NotADir, Sandbox, ToolOptions, Walked};

const NAME: &str = "list_files";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    recursive: bool,
    #[serde(default)]
    max_depth: Option<usize>,
    #[serde(default)]
    limit: Option<usize>,
}

/// Lists a directory of the project.
pub struct ListFiles {
    spec: ToolSpec,
    sandbox: Arc<Sandbox>,
    options: Arc<ToolOptions>,
}

impl ListFiles {
    pub fn new(sandbox: Arc<Sandbox>, options: Arc<ToolOptions>) -> Self {
        let spec = spec(
            NAME,
            &format!(
                "List the files and directories in a project directory. Paths are relative to \
                 the project root; directories end with '/', symlinks are marked '@'. Files \
                 excluded by .gitignore/.qoreignore are not shown. At most {} entries.",
                options.list_limit
            ),
            json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Directory relative to the project root. Default: the root ('.')."
                    },
                    "recursive": {
                        "type": "boolean",
                        "description": "List subdirectories too. Default: false."
                    },
                    "max_depth": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "With recursive: how many levels to descend (1 = direct entries only)."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": options.list_limit,
                        "description": "Most entries to show."
                    }
                },
                "additionalProperties": false
            }),
        );
        ListFiles {
            spec,
            sandbox,
            options,
        }
    }
}

crate::util::read_only_tool!(ListFiles, Args, list);

fn list(
    sandbox: &Sandbox,
    options: &ToolOptions,
    args: Args,
    cancel: &CancellationToken,
) -> ToolOutput {
    let dir = match sandbox.walk_dir(args.path.as_deref().unwrap_or(".")) {
        Ok(dir) => dir,
        Err(NotADir::Refused(why)) => return ToolOutput::error(why),
        Err(NotADir::Other(rel)) => {
            return ToolOutput::error(format!(
                "`{rel}` is a file, not a directory; use read_file to read it"
            ))
        }
        Err(NotADir::Missing(rel)) => {
            return ToolOutput::error(format!(
                "`{rel}` does not exist; list its parent directory or use find_file"
            ))
        }
    };
    let rel = sandbox.relative(&dir);
    if args.max_depth == Some(0) {
        return ToolOutput::error("max_depth must be at least 1");
    }
    let depth = if args.recursive {
        args.max_depth
    } else {
        Some(1)
    };
    let limit = clamp_limit(args.limit, options.list_limit);

    let mut shown = Vec::new();
    let mut more = 0usize;
    let mut unreadable = 0usize;
    for walked in sandbox.entries(&dir, depth, cancel) {
        let entry = match walked {
            Walked::Entry(entry) => entry,
            Walked::Unreadable => {
                unreadable += 1;
                continue;
            }
            Walked::Cancelled => return cancelled(),
        };
        let path = entry.path();
        if shown.len() >= limit {
            more += 1;
            continue;
        }
        let mut line = sandbox.relative(path);
        match entry.file_type() {
            Some(t) if t.is_dir() => line.push('/'),
            Some(t) if t.is_symlink() => line.push('@'),
            _ => {}
        }
        shown.push(line);
    }

    let mut text = if shown.is_empty() {
        format!("`{rel}` is empty (or all its entries are ignored).")
    } else {
        shown.join("\n")
    };
    if more > 0 {
        text.push_str(&format!(
            "\n[{more} more {} not shown; list a subdirectory or use find_file]",
            if more == 1 { "entry" } else { "entries" }
        ));
    }
    if unreadable > 0 {
        text.push_str(&format!("\n[{unreadable} could not be read]"));
    }
    ToolOutput::text(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_itself_stops_on_cancellation() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "").unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let args = || Args {
            path: None,
            recursive: true,
            max_depth: None,
            limit: None,
        };
        let options = ToolOptions::default();
        let live = list(&sandbox, &options, args(), &CancellationToken::new());
        assert_eq!(live.text_content(), "a.txt");
        let token = CancellationToken::new();
        token.cancel();
        let stopped = list(&sandbox, &options, args(), &token);
        assert!(stopped.is_error && stopped.text_content().starts_with("cancelled"));
    }
}
