//! Changes shown to people: what a tool call would do, shown with its approval question
//! ([`Shown`]), and unified diffs coloured for a terminal and cut to a budget.
//!
//! Promises:
//! - a file write or edit is shown as the unified diff of what the file would become (a new
//!   file as all additions), computed by qore-tools' [`preview`] under the project's
//!   sandbox rules without writing anything; a command as the command line and its working
//!   directory; a call the tool would refuse as the tool's reason; other tools not at all;
//! - a diff longer than the budget ([`SHOWN_LINES`] on a terminal) is cut, and the cut says
//!   how many lines were left out (`… 12 more lines`);
//! - colour (red removals, green additions, cyan hunk headers, bold file headers) only when
//!   the caller says so (the console's decision: a terminal, not `--plain`, `NO_COLOR`
//!   unset or empty, `TERM` not `dumb`); otherwise the text is plain.

use std::path::Path;
use std::sync::Arc;

use qore_client::tool_loop::ApprovalRequest;
use qore_tools::{preview, unified_diff, Preview, Sandbox};
use serde_json::{json, Value};

use crate::render::style::{paint, Colour, Style};

/// Lines of a diff shown with an approval question at most.
pub const SHOWN_LINES: usize = 40;

/// Lines of a diff given to a program (`--json`'s `approval_request`) at most.
const JSON_LINES: usize = 400;

/// A diff line's colour: the basic palette's red, green and cyan.
fn basic(n: u8) -> Style {
    Style {
        fg: Colour::Basic(n),
        ..Style::PLAIN
    }
}

/// The unified diff from `old` (`None`: no file) to `new` of the file `path`, whole.
pub fn file_diff(path: &str, old: Option<&str>, new: &str) -> String {
    unified_diff(path, old.unwrap_or_default(), new, usize::MAX)
}

/// `diff` with at most `budget` lines, the rest replaced by a line saying how many were left
/// out.
pub fn cut(diff: &str, budget: usize) -> String {
    let total = diff.lines().count();
    if total <= budget {
        return diff.to_owned();
    }
    let mut kept: String = diff.lines().take(budget).flat_map(|l| [l, "\n"]).collect();
    let more = total - budget;
    let lines = if more == 1 { "line" } else { "lines" };
    kept.push_str(&format!("… {more} more {lines}\n"));
    kept
}

/// `diff` with each line coloured by its kind when `styled`.
pub fn coloured(diff: &str, styled: bool) -> String {
    if !styled {
        return diff.to_owned();
    }
    let mut out = String::with_capacity(diff.len() + diff.len() / 4);
    for line in diff.lines() {
        let style = if line.starts_with("+++") || line.starts_with("---") {
            Style::bold()
        } else if line.starts_with('+') {
            basic(2)
        } else if line.starts_with('-') {
            basic(1)
        } else if line.starts_with("@@") {
            basic(6)
        } else if line.starts_with('…') {
            Style::dim()
        } else {
            Style::PLAIN
        };
        out.push_str(&paint(line, style));
        out.push('\n');
    }
    out
}

/// A command line as a person would type it: words with spaces or quotes single-quoted.
fn command_line(argv: &[String]) -> String {
    let word = |w: &String| {
        let plain = !w.is_empty()
            && (w.chars()).all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
        match plain {
            true => w.clone(),
            false => format!("'{}'", w.replace('\'', r"'\''")),
        }
    };
    argv.iter().map(word).collect::<Vec<_>>().join(" ")
}

/// What calls would change in one project, for showing them before they are approved.
#[derive(Clone, Default)]
pub struct Shown {
    sandbox: Option<Arc<Sandbox>>,
}

impl Shown {
    /// For the tools over `project` (nothing is shown when it cannot be opened: the tools
    /// themselves will say why).
    pub fn for_project(project: &Path) -> Shown {
        Shown {
            sandbox: Sandbox::new(project).ok().map(Arc::new),
        }
    }

    fn preview(&self, request: &ApprovalRequest) -> Option<Preview> {
        preview(self.sandbox.as_ref()?, &request.tool, &request.arguments)
    }

    /// What `request` would do, for the terminal: cut to [`SHOWN_LINES`], coloured when
    /// `styled`; `None` for a tool that changes nothing.
    pub fn text(&self, request: &ApprovalRequest, styled: bool) -> Option<String> {
        let text = match self.preview(request)? {
            Preview::File { path, old, new } => {
                let diff = file_diff(&path, old.as_deref(), &new);
                match diff.is_empty() {
                    true => format!("`{path}` would not change\n"),
                    false => coloured(&cut(&diff, SHOWN_LINES), styled),
                }
            }
            Preview::ReplacesBinary { path, new } => format!(
                "replaces the binary file `{path}` with {} lines of text\n",
                new.lines().count()
            ),
            Preview::Command { argv, cwd } => format!(
                "command: {}\n     in: {}\n",
                command_line(&argv),
                cwd.display()
            ),
            Preview::Refused(why) => format!("the tool will refuse this call: {why}\n"),
        };
        Some(text)
    }

    /// The fields added to `--json`'s `approval_request` for `request`: `diff` (unified, cut
    /// at 400 lines) for a file, `command` and `cwd` for a command, `refused` with the
    /// reason for a call the tool would refuse.
    pub fn fields(&self, request: &ApprovalRequest) -> Value {
        match self.preview(request) {
            Some(Preview::File { path, old, new }) => json!({
                "diff": unified_diff(&path, old.as_deref().unwrap_or_default(), &new, JSON_LINES),
            }),
            Some(Preview::ReplacesBinary { path, .. }) => json!({"replaces_binary": path}),
            Some(Preview::Command { argv, cwd }) => {
                json!({"command": command_line(&argv), "cwd": cwd})
            }
            Some(Preview::Refused(why)) => json!({"refused": why}),
            None => json!({}),
        }
    }
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;
