//! `find_file`: files in the project whose name or path matches a glob or contains a text.
//!
//! Promises: a pattern with a glob character (`*`, `?`, `[`, `{`) is a glob; without one it
//! is a substring. Either way it is matched against the file name when it has no `/`, and
//! against the path relative to the project root when it has one; matching ignores case.
//! Only regular files are found, only where the sandbox allows (ignored files and `.git`
//! never appear); paths are relative to the root; at most `find_limit` are shown, then a note
//! of how many more. Read-only and parallel-safe; stops when cancelled.

use std::sync::Arc;

use globset::{GlobBuilder, GlobMatcher};
use qore_core::{CancellationToken, ToolOutput, ToolSpec};
use serde::Deserialize;
use serde_json::json;

use crate::util::cancelled;
use crate::{clamp_limit, spec, NotADir, Sandbox, ToolOptions, Walked};

const NAME: &str = "find_file";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
}

/// Finds files by name or path.
pub struct FindFile {
    spec: ToolSpec,
    sandbox: Arc<Sandbox>,
    options: Arc<ToolOptions>,
}

impl FindFile {
    pub fn new(sandbox: Arc<Sandbox>, options: Arc<ToolOptions>) -> Self {
        let spec = spec(
            NAME,
            &format!(
                "Find files in the project by name. The pattern is a glob ('*.rs', \
                 'src/**/mod.rs') or a plain text contained in the name ('config'); without \
                 '/' it is matched against file names, with '/' against paths relative to the \
                 project root. Case-insensitive. Ignored files are not searched. At most {} \
                 results.",
                options.find_limit
            ),
            json!({
                "type": "object",
                "properties": {
                    "pattern": {
                        "type": "string",
                        "minLength": 1,
                        "description": "A glob or a substring of the file name (or of the path when it contains '/')."
                    },
                    "path": {
                        "type": "string",
                        "description": "Directory to search in, relative to the project root. Default: the root."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": options.find_limit,
                        "description": "Most results to show."
                    }
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        );
        FindFile {
            spec,
            sandbox,
            options,
        }
    }
}

crate::util::read_only_tool!(FindFile, Args, find);

enum Pattern {
    Glob(GlobMatcher),
    Substring(String),
}

impl Pattern {
    fn parse(pattern: &str) -> Result<Pattern, String> {
        if pattern.contains(['*', '?', '[', '{']) {
            GlobBuilder::new(pattern)
                .case_insensitive(true)
                .literal_separator(true)
                .build()
                .map(|g| Pattern::Glob(g.compile_matcher()))
                .map_err(|e| format!("invalid glob `{pattern}`: {e}"))
        } else {
            Ok(Pattern::Substring(pattern.to_lowercase()))
        }
    }

    fn matches(&self, text: &str) -> bool {
        match self {
            Pattern::Glob(g) => g.is_match(text),
            Pattern::Substring(s) => text.to_lowercase().contains(s.as_str()),
        }
    }
}

fn find(
    sandbox: &Sandbox,
    options: &ToolOptions,
    args: Args,
    cancel: &CancellationToken,
) -> ToolOutput {
    let pattern_text = args.pattern.trim();
    if pattern_text.is_empty() {
        return ToolOutput::error(
            "pattern is empty; give a glob like '*.rs' or part of a file name",
        );
    }
    let pattern = match Pattern::parse(pattern_text) {
        Ok(p) => p,
        Err(e) => return ToolOutput::error(e),
    };
    let against_path = pattern_text.contains('/');
    let dir = match sandbox.walk_dir(args.path.as_deref().unwrap_or(".")) {
        Ok(dir) => dir,
        Err(NotADir::Refused(why)) => return ToolOutput::error(why),
        Err(NotADir::Other(rel)) => {
            return ToolOutput::error(format!(
                "`{rel}` is not a directory; give a directory to search in"
            ))
        }
        Err(NotADir::Missing(rel)) => {
            return ToolOutput::error(format!(
                "`{rel}` does not exist; give a directory to search in"
            ))
        }
    };
    let limit = clamp_limit(args.limit, options.find_limit);

    let mut found = Vec::new();
    let mut more = 0usize;
    for walked in sandbox.entries(&dir, None, cancel) {
        let entry = match walked {
            Walked::Entry(entry) => entry,
            Walked::Unreadable => continue,
            Walked::Cancelled => return cancelled(),
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let rel = sandbox.relative(entry.path());
        let subject = if against_path {
            rel.as_str()
        } else {
            rel.rsplit('/').next().unwrap_or(rel.as_str())
        };
        if pattern.matches(subject) {
            if found.len() < limit {
                found.push(rel);
            } else {
                more += 1;
            }
        }
    }
    if found.is_empty() {
        return ToolOutput::text(format!(
            "No files match `{pattern_text}` in `{}` (ignored files are not searched).",
            sandbox.relative(&dir)
        ));
    }
    let mut text = found.join("\n");
    if more > 0 {
        text.push_str(&format!(
            "\n[{more} more not shown; use a more specific pattern or path]"
        ));
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
            pattern: "*.txt".into(),
            path: None,
            limit: None,
        };
        let options = ToolOptions::default();
        let live = find(&sandbox, &options, args(), &CancellationToken::new());
        assert_eq!(live.text_content(), "a.txt");
        let token = CancellationToken::new();
        token.cancel();
        let stopped = find(&sandbox, &options, args(), &token);
        assert!(stopped.is_error && stopped.text_content().starts_with("cancelled"));
    }
}
