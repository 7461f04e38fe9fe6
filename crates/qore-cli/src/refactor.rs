//! `qore refactor FILE --range L1:C1-L2:C2 --instruction TEXT`: one quick refactor of a
//! selection (lines and columns 1-based; columns count UTF-16 units, as editors do; an empty
//! range inserts at the cursor). The agent is `--agent`, else the refactor roster's first whose
//! `[match]` accepts the file and the current directory's project.
//!
//! Promises:
//! - prints the file's whole new text; `--diff` a unified diff (headers `a/FILE`, `b/FILE`);
//!   `--write` replaces the file atomically (a temporary file in its directory, renamed over
//!   it, with the file's permissions), so a failure leaves it byte for byte as it was;
//!   `--json` prints `{"text" (the replacement), "range" (what it replaces, 1-based as
//!   `--range`, clamped to the file), "agent", "model"}`;
//! - a range that is not `L1:C1-L2:C2` with numbers from 1, or an empty instruction, is a
//!   usage error (exit 2); an unreadable file, no agent, a failed request or a reply with no
//!   code is one line on stderr and exit 1.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::fail;

use clap::Args;
use qore_client::CancellationToken;
use qore_session::completion::context::{Cursor, Range};
use qore_session::completion::refactor::refactor as ask;
use qore_session::{SessionManager, TargetSpec};

#[derive(Args)]
pub struct RefactorArgs {
    /// The file.
    pub file: PathBuf,
    /// The selection: L1:C1-L2:C2, lines and columns 1-based, the end excluded.
    #[arg(long, value_name = "L1:C1-L2:C2")]
    pub range: String,
    /// What to do with the selection ("Add documentation", "Use iterators", …).
    #[arg(long, value_name = "TEXT")]
    pub instruction: String,
    /// The agent (default: pipelines.toml's refactor roster routes the file).
    #[arg(long)]
    pub agent: Option<String>,
    /// Print a unified diff instead of the new text.
    #[arg(long, conflicts_with_all = ["write", "json"])]
    pub diff: bool,
    /// Write the new text into the file (atomically) instead of printing it.
    #[arg(long)]
    pub write: bool,
    /// Print {"text", "range", "agent", "model"} (with --write: after writing).
    #[arg(long)]
    pub json: bool,
}

/// The 0-based range of `L1:C1-L2:C2` (1-based), or `None` for what is not one.
pub fn parse_range(range: &str) -> Option<Range> {
    let (start, end) = range.split_once('-')?;
    Some(Range {
        start: parse_cursor(start)?,
        end: parse_cursor(end)?,
    })
}

fn parse_cursor(at: &str) -> Option<Cursor> {
    let (line, character) = at.split_once(':')?;
    let from_one = |n: &str| n.parse::<u32>().ok()?.checked_sub(1);
    Some(Cursor {
        line: from_one(line)?,
        character: from_one(character)?,
    })
}

/// `range` as `--range` writes it (1-based).
pub fn format_range(range: &Range) -> String {
    let at = |c: &Cursor| format!("{}:{}", c.line + 1, c.character + 1);
    format!("{}-{}", at(&range.start), at(&range.end))
}

/// `text` with `range` replaced by `new`.
pub fn spliced(text: &str, range: &Range, new: &str) -> String {
    let (from, to) = (range.start.offset_in(text), range.end.offset_in(text));
    let (from, to) = (from.min(to), from.max(to));
    [&text[..from], new, &text[to..]].concat()
}

/// A unified diff from `old` to `new` of the file `name` (an absolute path loses its leading
/// `/` under `a/` and `b/`, as `git diff --no-index` writes it).
pub fn unified_diff(name: &str, old: &str, new: &str) -> String {
    qore_tools::unified_diff(name.trim_start_matches('/'), old, new, usize::MAX)
}

/// Replace the file at `path` (through links) by `text`: a temporary file in its directory
/// with its permissions, renamed over it.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let path = std::fs::canonicalize(path)?;
    let permissions = std::fs::metadata(&path)?.permissions();
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(text.as_bytes())?;
    file.as_file().set_permissions(permissions)?;
    file.as_file().sync_all()?;
    file.persist(&path).map_err(|e| e.error)?;
    Ok(())
}

pub async fn refactor(args: RefactorArgs) -> ExitCode {
    let Some(selection) = parse_range(&args.range) else {
        crate::usage_error(format!(
            "--range {:?} is not L1:C1-L2:C2 (lines and columns numbered from 1)",
            args.range
        ));
    };
    if args.instruction.trim().is_empty() {
        crate::usage_error("--instruction is empty: say what to do with the selection");
    }
    let path = &args.file;
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => return fail(format!("cannot read {}: {err}", path.display())),
    };
    let manager = SessionManager::new(None, crate::agents::load(), crate::connect::notes());
    let spec = TargetSpec {
        agent: args.agent.clone(),
        ..TargetSpec::default()
    };
    let target = match manager.reach_refactorer_for(&spec, path).await {
        Ok(target) => target,
        Err(error) => return fail(error.message),
    };
    let cancel = CancellationToken::new();
    let done = match ask(&target, &text, path, selection, &args.instruction, cancel).await {
        Ok(done) => done,
        Err(error) => return fail(error.message),
    };
    let new_text = spliced(&text, &done.range, &done.text);
    if args.write {
        if let Err(err) = write_atomically(path, &new_text) {
            return fail(format!("cannot write {}: {err}", path.display()));
        }
    }
    let shown = if args.json {
        let line = serde_json::json!({
            "text": done.text,
            "range": format_range(&done.range),
            "agent": target.agent.as_ref().map(|a| a.name.clone()),
            "model": target.model,
        });
        format!("{line}\n")
    } else if args.diff {
        unified_diff(&path.display().to_string(), &text, &new_text)
    } else if args.write {
        String::new()
    } else {
        new_text
    };
    crate::console::out(&shown);
    ExitCode::SUCCESS
}

#[cfg(test)]
#[path = "refactor_tests.rs"]
mod tests;
