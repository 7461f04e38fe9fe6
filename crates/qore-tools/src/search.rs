//! `search`: lines of the project's text files that contain a literal text or match a regex.
//!
//! Promises: the pattern is literal unless `regex` is true (Rust `regex` syntax); matching is
//! per line; the search covers one file or a directory tree, only where the sandbox allows
//! (ignored files and `.git` are never searched, symlinks are not followed); binary files
//! (a NUL in the first 8 KiB) and files over `search_max_file_bytes` are skipped and
//! counted, and a single binary file named explicitly is refused; each hit is
//! `<path>:<line>: <text>` with 1-based line numbers; at most `search_limit` hits are shown,
//! then a note of how many more. Read-only and parallel-safe; stops when cancelled.

use std::path::Path;
use std::sync::Arc;

use globset::{GlobBuilder, GlobMatcher};
use qore_core::{CancellationToken, ToolOutput, ToolSpec};
use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::json;

use crate::util::{cancelled, cap_line, human_bytes, looks_binary};
use crate::{clamp_limit, spec, Sandbox, ToolOptions, Walked};

const NAME: &str = "search";
/// Characters of a matching line shown at most.
const HIT_LINE_CHARS: usize = 300;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    pattern: String,
    #[serde(default)]
    regex: bool,
    #[serde(default)]
    ignore_case: bool,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
}

/// Searches file contents.
pub struct Search {
    spec: ToolSpec,
    sandbox: Arc<Sandbox>,
    options: Arc<ToolOptions>,
}

impl Search {
    pub fn new(sandbox: Arc<Sandbox>, options: Arc<ToolOptions>) -> Self {
        let spec = spec(
            NAME,
            &format!(
                "Search the project's text files for lines containing a text (or matching a \
                 regex with regex=true). Results are '<path>:<line>: <text>'. Ignored, binary \
                 and very large files are skipped. At most {} matches.",
                options.search_limit
            ),
            json!({
                "type": "object",
                "properties": {
                    "pattern": {
                        "type": "string",
                        "minLength": 1,
                        "description": "The text to find, or a regex when regex is true."
                    },
                    "regex": {
                        "type": "boolean",
                        "description": "Treat pattern as a regular expression (Rust regex syntax). Default: false."
                    },
                    "ignore_case": {
                        "type": "boolean",
                        "description": "Match regardless of case. Default: false."
                    },
                    "path": {
                        "type": "string",
                        "description": "File or directory to search, relative to the project root. Default: the root."
                    },
                    "glob": {
                        "type": "string",
                        "description": "Only search files whose name matches this glob, e.g. '*.rs' (with '/', the path relative to the root)."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": options.search_limit,
                        "description": "Most matches to show."
                    }
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        );
        Search {
            spec,
            sandbox,
            options,
        }
    }
}

crate::util::read_only_tool!(Search, Args, search);

struct Hits {
    shown: Vec<String>,
    more: usize,
    limit: usize,
    binary: usize,
    large: usize,
    unreadable: usize,
}

fn search(
    sandbox: &Sandbox,
    options: &ToolOptions,
    args: Args,
    cancel: &CancellationToken,
) -> ToolOutput {
    if args.pattern.is_empty() {
        return ToolOutput::error("pattern is empty; give the text to search for");
    }
    let source = if args.regex {
        args.pattern.clone()
    } else {
        regex::escape(&args.pattern)
    };
    let re = match RegexBuilder::new(&source)
        .case_insensitive(args.ignore_case)
        .build()
    {
        Ok(re) => re,
        Err(e) => {
            return ToolOutput::error(format!(
                "invalid regex: {e}\n(set regex=false to search for the text literally)"
            ))
        }
    };
    let filter = match args
        .glob
        .as_deref()
        .map(str::trim)
        .filter(|g| !g.is_empty())
    {
        None => None,
        Some(g) => match GlobBuilder::new(g).literal_separator(true).build() {
            Ok(glob) => Some((glob.compile_matcher(), g.contains('/'))),
            Err(e) => return ToolOutput::error(format!("invalid glob `{g}`: {e}")),
        },
    };
    let target = match sandbox.resolve(args.path.as_deref().unwrap_or(".")) {
        Ok(p) => p,
        Err(e) => return ToolOutput::error(e.to_string()),
    };
    let rel = sandbox.relative(&target);
    let mut hits = Hits {
        shown: Vec::new(),
        more: 0,
        limit: clamp_limit(args.limit, options.search_limit),
        binary: 0,
        large: 0,
        unreadable: 0,
    };
    match sandbox.metadata(&target) {
        Err(_) => return ToolOutput::error(format!("`{rel}` does not exist")),
        Ok(m) if m.is_file() => {
            if m.len() > options.search_max_file_bytes {
                return ToolOutput::error(format!(
                    "`{rel}` is larger than {}; use read_file with a line range",
                    human_bytes(options.search_max_file_bytes)
                ));
            }
            search_file(sandbox, &target, &rel, &re, &mut hits);
            if hits.binary > 0 {
                return ToolOutput::error(format!(
                    "`{rel}` looks like a binary file (a NUL byte in its first 8 KiB); only \
                     text files can be searched"
                ));
            }
            if hits.unreadable > 0 {
                return ToolOutput::error(format!("cannot read `{rel}`"));
            }
        }
        Ok(_) => {
            for walked in sandbox.entries(&target, None, cancel) {
                let entry = match walked {
                    Walked::Entry(entry) => entry,
                    Walked::Unreadable => {
                        hits.unreadable += 1;
                        continue;
                    }
                    Walked::Cancelled => return cancelled(),
                };
                let path = entry.path();
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let file_rel = sandbox.relative(path);
                if let Some((glob, against_path)) = &filter {
                    if !glob_matches(glob, *against_path, &file_rel) {
                        continue;
                    }
                }
                match entry.metadata() {
                    Ok(m) if m.len() > options.search_max_file_bytes => hits.large += 1,
                    Ok(_) => search_file(sandbox, path, &file_rel, &re, &mut hits),
                    Err(_) => hits.unreadable += 1,
                }
            }
        }
    }
    report(&args.pattern, &rel, options, hits)
}

fn glob_matches(glob: &GlobMatcher, against_path: bool, rel: &str) -> bool {
    if against_path {
        glob.is_match(rel)
    } else {
        glob.is_match(rel.rsplit('/').next().unwrap_or(rel))
    }
}

fn search_file(sandbox: &Sandbox, path: &Path, rel: &str, re: &Regex, hits: &mut Hits) {
    let bytes = match sandbox.read(path) {
        Ok(b) => b,
        Err(_) => {
            hits.unreadable += 1;
            return;
        }
    };
    if looks_binary(&bytes) {
        hits.binary += 1;
        return;
    }
    let text = String::from_utf8_lossy(&bytes);
    for (i, line) in text.lines().enumerate() {
        if re.is_match(line) {
            if hits.shown.len() < hits.limit {
                let line = cap_line(line.trim_end(), HIT_LINE_CHARS);
                hits.shown.push(format!("{rel}:{}: {line}", i + 1));
            } else {
                hits.more += 1;
            }
        }
    }
}

fn report(pattern: &str, rel: &str, options: &ToolOptions, hits: Hits) -> ToolOutput {
    let mut text = if hits.shown.is_empty() {
        format!("No matches for `{pattern}` in `{rel}`.")
    } else {
        hits.shown.join("\n")
    };
    if hits.more > 0 {
        text.push_str(&format!(
            "\n[{} more {} not shown; narrow the path, the glob or the pattern]",
            hits.more,
            if hits.more == 1 { "match" } else { "matches" }
        ));
    }
    let mut skipped = Vec::new();
    if hits.binary > 0 {
        skipped.push(format!("{} binary", hits.binary));
    }
    if hits.large > 0 {
        skipped.push(format!(
            "{} over {}",
            hits.large,
            human_bytes(options.search_max_file_bytes)
        ));
    }
    if hits.unreadable > 0 {
        skipped.push(format!("{} unreadable", hits.unreadable));
    }
    if !skipped.is_empty() {
        text.push_str(&format!("\n[skipped files: {}]", skipped.join(", ")));
    }
    ToolOutput::text(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_itself_stops_on_cancellation() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "needle\n").unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let args = || Args {
            pattern: "needle".into(),
            regex: false,
            ignore_case: false,
            path: None,
            glob: None,
            limit: None,
        };
        let options = ToolOptions::default();
        let live = search(&sandbox, &options, args(), &CancellationToken::new());
        assert_eq!(live.text_content(), "a.txt:1: needle");
        let token = CancellationToken::new();
        token.cancel();
        let stopped = search(&sandbox, &options, args(), &token);
        assert!(stopped.is_error && stopped.text_content().starts_with("cancelled"));
    }
}
