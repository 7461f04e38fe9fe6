//! What `@path` mentions attach to a message, under the sandbox's rules, and the paths a
//! mention being typed can be completed to.
//!
//! Promises:
//! - [`attach_mentions`] gives the message with one block per mentioned path after it (the
//!   text itself unchanged): a file's text as `<file path="…">…</file>`, a directory's
//!   entries (one level, directories ending in `/`, at most [`LISTING_LIMIT`]) as
//!   `<directory path="…">…</directory>`, a binary file (a NUL in its first 8 KiB)
//!   described by its size instead of its bytes. A path mentioned twice is attached once.
//! - Every path goes through [`Sandbox::resolve`]: one outside the project, inside `.git`,
//!   or excluded by `.gitignore`/`.qoreignore` is refused with the sandbox's reason, and so
//!   on any refusal the whole message is refused ([`MentionError`]), so nothing reaches the
//!   model. A mention of nothing (no such path in the project: `@property` in pasted
//!   Python, a typo) attaches nothing, the text goes as typed, and [`Attached::unmatched`]
//!   names it so the caller can say so.
//! - The files share one budget of bytes ([`DEFAULT_BUDGET`] in the chat): a file that does
//!   not fit is cut at a line end and its block ends with `[cut: first N of M lines]`.
//! - [`complete_mention`] lists the entries of a directory whose names start with what was
//!   typed, under the same rules (ignored entries and `.git` are never offered).

use std::io::{BufRead, BufReader};
use std::path::Path;

use qore_core::CancellationToken;

use crate::mention::mentions;
use crate::rooted::file_looks_binary;
use crate::util::{human_bytes, plural};
use crate::{NotADir, Sandbox, Walked};

/// The bytes of file text one message attaches at most, all files together (64 KiB).
pub const DEFAULT_BUDGET: usize = 64 * 1024;

/// The entries a directory's listing shows at most.
pub const LISTING_LIMIT: usize = 200;

/// Why a message's mentions cannot be attached; the message is not to be sent.
#[derive(Debug, thiserror::Error)]
pub enum MentionError {
    #[error("@{mention} is refused: {reason}")]
    Refused { mention: String, reason: String },
    #[error("@{mention} cannot be read: {source}")]
    Unreadable {
        mention: String,
        #[source]
        source: std::io::Error,
    },
}

/// A message with its attachments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attached {
    /// The text, then one block per attached path.
    pub message: String,
    /// Mentions of paths that are not in the project, as typed; nothing was attached for them.
    pub unmatched: Vec<String>,
}

/// `text` with what its mentions attach after it, or why one of them is refused.
pub fn attach_mentions(
    sandbox: &Sandbox,
    text: &str,
    budget: usize,
) -> Result<Attached, MentionError> {
    let mut left = budget;
    let mut seen = Vec::new();
    let mut message = text.to_owned();
    let mut unmatched = Vec::new();
    for mention in mentions(text) {
        let abs = sandbox
            .resolve(&mention.path)
            .map_err(|reason| MentionError::Refused {
                mention: mention.path.clone(),
                reason: reason.to_string(),
            })?;
        if seen.contains(&abs) {
            continue;
        }
        match block(sandbox, &abs, &mention.path, (budget, &mut left))? {
            Some(block) => {
                message.push_str("\n\n");
                message.push_str(&block);
            }
            None => unmatched.push(mention.path),
        }
        seen.push(abs);
    }
    Ok(Attached { message, unmatched })
}

/// The attachment of the resolved path `abs`, mentioned as `mention`; none when nothing is
/// there.
fn block(
    sandbox: &Sandbox,
    abs: &Path,
    mention: &str,
    (budget, left): (usize, &mut usize),
) -> Result<Option<String>, MentionError> {
    let rel = sandbox.relative(abs);
    let unreadable = |source| MentionError::Unreadable {
        mention: mention.to_owned(),
        source,
    };
    let meta = match sandbox.metadata(abs) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(unreadable(err)),
    };
    if meta.is_dir() {
        return listing(sandbox, &rel, mention).map(Some);
    }
    let mut file = sandbox.open_file(abs).map_err(unreadable)?;
    if file_looks_binary(&mut file).map_err(unreadable)? {
        let size = human_bytes(meta.len());
        return Ok(Some(format!(
            "<file path=\"{rel}\">[a binary file of {size}, not shown]</file>"
        )));
    }
    let (shown, cut) = text_within(file, *left).map_err(unreadable)?;
    *left -= shown.len();
    let mut block = format!("<file path=\"{rel}\">\n{shown}");
    if !shown.is_empty() && !shown.ends_with('\n') {
        block.push('\n');
    }
    if let Some((lines, total)) = cut {
        let budget = human_bytes(budget as u64);
        block.push_str(&format!(
            "[cut: first {lines} of {total} lines; the attachments of a message share {budget}]\n"
        ));
    }
    block.push_str("</file>");
    Ok(Some(block))
}

/// The file's text up to `budget` bytes, cut at a line end when it does not fit, and then
/// (lines shown, lines in the file). Invalid UTF-8 is shown with replacement characters.
fn text_within(
    file: std::fs::File,
    budget: usize,
) -> std::io::Result<(String, Option<(usize, usize)>)> {
    let mut reader = BufReader::new(file);
    let mut shown = String::new();
    let (mut lines, mut total) = (0, 0);
    let mut full = true;
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        total += 1;
        if full && shown.len() + line.len() <= budget {
            shown.push_str(&String::from_utf8_lossy(&line));
            lines += 1;
        } else {
            full = false;
        }
    }
    Ok((shown, (!full).then_some((lines, total))))
}

/// A directory's entries, one level, as a block.
fn listing(sandbox: &Sandbox, rel: &str, mention: &str) -> Result<String, MentionError> {
    let dir = sandbox.walk_dir(rel).map_err(|why| refused(mention, why))?;
    let cancel = CancellationToken::new();
    let mut names = Vec::new();
    let mut more = 0;
    for walked in sandbox.entries(&dir, Some(1), &cancel) {
        let Walked::Entry(entry) = walked else {
            continue;
        };
        if names.len() == LISTING_LIMIT {
            more += 1;
            continue;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let slash = if is_dir { "/" } else { "" };
        names.push(format!("{}{slash}", sandbox.relative(entry.path())));
    }
    let shown = match rel {
        "." => "./".to_owned(),
        rel => format!("{rel}/"),
    };
    let mut block = format!("<directory path=\"{shown}\">\n");
    for name in names {
        block.push_str(&name);
        block.push('\n');
    }
    if more > 0 {
        block.push_str(&format!("[… and {} more]\n", plural(more, "entry")));
    }
    block.push_str("</directory>");
    Ok(block)
}

fn refused(mention: &str, why: NotADir) -> MentionError {
    let reason = match why {
        NotADir::Refused(reason) => reason,
        NotADir::Missing(path) | NotADir::Other(path) => format!("`{path}` is not a directory"),
    };
    MentionError::Refused {
        mention: mention.to_owned(),
        reason,
    }
}

/// The completions of `typed` (what follows an `@`): the entries of its directory part
/// whose names start with its last part, as paths relative to the root the way they were
/// typed, directories ending in `/`. None when the directory is refused or missing.
pub fn complete_mention(sandbox: &Sandbox, typed: &str) -> Vec<String> {
    let (dir, prefix) = match typed.rfind('/') {
        Some(slash) => (&typed[..=slash], &typed[slash + 1..]),
        None => ("", typed),
    };
    let Ok(abs) = sandbox.walk_dir(if dir.is_empty() { "." } else { dir }) else {
        return Vec::new();
    };
    let cancel = CancellationToken::new();
    let mut found = Vec::new();
    for walked in sandbox.entries(&abs, Some(1), &cancel) {
        let Walked::Entry(entry) = walked else {
            continue;
        };
        let name = entry.file_name().to_string_lossy();
        if !name.starts_with(prefix) {
            continue;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let slash = if is_dir { "/" } else { "" };
        found.push(format!("{dir}{name}{slash}"));
    }
    found
}

#[cfg(test)]
#[path = "attach_tests.rs"]
mod tests;
