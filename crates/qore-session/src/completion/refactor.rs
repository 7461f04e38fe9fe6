//! One quick refactor of a selection, asked of a reached chat model.
//!
//! Promises:
//! - the request is one system message (the agent's rendered system prompt; without an agent,
//!   the target's own `system`, else [`BUILT_IN_SYSTEM`]) and one user message: the file's
//!   language and path, then [`refactor_prompt`] (the selection between
//!   `<selection_start>` and `<selection_end>`, the instruction); no tools are offered;
//! - the selection is clamped to the text and read from its earlier end; an empty selection
//!   is an insertion at the cursor and is allowed; [`Refactored::range`] is that range, its
//!   start moved to the line's start when only blanks are left of it (the new text carries
//!   the indentation then);
//! - the reply goes through [`clean_refactor`] with the selection's indentation; a selection
//!   starting after code on its line gets a first line without indentation; a selection
//!   ending in a line break keeps it; the new text has the file's line ends (`\r\n` when the
//!   file has any);
//! - an agent that cannot chat (its body fills in the middle and reads no history), a failed
//!   request, a cancelled one and a reply with no code left after cleaning are each one
//!   [`ErrorInfo`] with a one-line message, never a panic.

use std::path::Path;

use qore_client::{CancellationToken, ChatRequest};
use qore_core::{ErrorCategory, ErrorInfo, History, Message};

use super::clean::clean_refactor;
use super::context::{language_of, refactor_prompt, Cursor, Range};
use crate::target::Target;

/// The system prompt of a refactor asked of a target without an agent or a system prompt.
pub const BUILT_IN_SYSTEM: &str = "You refactor code. You receive a piece of code and an \
    instruction; answer with the rewritten code only, in the same language and style, with no \
    explanation and no Markdown fences.";

/// What replaces what: `text` is the new text of `range` (the selection, clamped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refactored {
    /// The range replaced: the selection, clamped to the document.
    pub range: Range,
    /// The new text of the range.
    pub text: String,
}

/// Ask `target` to rewrite `selection` of `text` (the file at `path`) by `instruction`.
pub async fn refactor(
    target: &Target,
    text: &str,
    path: &Path,
    selection: Range,
    instruction: &str,
    cancel: CancellationToken,
) -> Result<Refactored, ErrorInfo> {
    if target.agent.as_ref().is_some_and(|a| !a.reads.chats()) {
        let name = target.agent.as_ref().map_or("", |a| a.name.as_str());
        return Err(ErrorInfo::config(format!(
            "agent {name:?} is a code-completion agent (fill-in-the-middle); a refactor needs \
             a chat agent"
        )));
    }
    let range = clamped(text, selection);
    let prompt = refactor_prompt(text, range, instruction);
    let mut user = String::new();
    if let Some(language) = language_of(path) {
        user.push_str(&format!("Language: {language}\n"));
    }
    user.push_str(&format!("File: {}\n\n{}", path.display(), prompt.message));
    let history = History::from(vec![
        Message::system(super::system_prompt(target, BUILT_IN_SYSTEM)),
        Message::user(user),
    ]);
    let request = ChatRequest {
        model: &target.model,
        history: &history,
        tools: &[],
        options: &target.options,
    };
    let stream = target.client.stream(&request, cancel);
    let reply = super::answer_text(stream, "the refactor").await?;
    let Some(new_text) = clean_refactor(&reply, &prompt.indent) else {
        return Err(ErrorInfo::new(
            ErrorCategory::Provider,
            "the model returned no code",
        ));
    };
    Ok(fitted(text, range, new_text))
}

/// `new_text` fitted to `range` of `text`: the range starts at its line's start when only
/// blanks are left of it, else the first line loses its indentation; a selection ending in a
/// line break keeps it; the file's line ends.
fn fitted(text: &str, mut range: Range, new_text: String) -> Refactored {
    let (from, to) = (range.start.offset_in(text), range.end.offset_in(text));
    let line_start = text[..from].rfind('\n').map_or(0, |i| i + 1);
    let mut new_text = match text[line_start..from].trim().is_empty() {
        true => {
            range.start.character = 0;
            new_text
        }
        false => new_text.trim_start_matches([' ', '\t']).to_owned(),
    };
    if text[from..to].ends_with('\n') && !new_text.ends_with('\n') {
        new_text.push('\n');
    }
    if text.contains("\r\n") {
        new_text = new_text.replace('\n', "\r\n");
    }
    Refactored {
        range,
        text: new_text,
    }
}

/// The system prompt: the agent's, else the target's own, else [`BUILT_IN_SYSTEM`].
/// `selection` clamped to `text` and read from its earlier end.
pub fn clamped(text: &str, selection: Range) -> Range {
    let (a, b) = (
        selection.start.offset_in(text),
        selection.end.offset_in(text),
    );
    Range {
        start: cursor_at(text, a.min(b)),
        end: cursor_at(text, a.max(b)),
    }
}

/// The LSP position (UTF-16 columns) of byte offset `at`, a char boundary of `text`.
fn cursor_at(text: &str, at: usize) -> Cursor {
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Cursor {
        line: count(before.matches('\n').count()),
        character: count(before[line_start..].encode_utf16().count()),
    }
}

#[cfg(test)]
#[path = "refactor_tests.rs"]
mod tests;
