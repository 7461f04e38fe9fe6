//! `@path` mentions in a chat message, on the project's sandbox (qore-tools' `mention` and
//! `attach` modules do the work; this is where the chat meets them).
//!
//! Promises: a message without a mention is sent as typed; with mentions it is sent with
//! their files and listings after it (cut to [`DEFAULT_BUDGET`], saying so), which the
//! session stores with the turn; a mention of nothing in the project (`@property` in pasted
//! code, a typo) stays text, with a note on stderr; a refused mention (outside the project, ignored, missing)
//! refuses the whole message with the reason, and nothing is sent. Tab in the editor
//! completes the path after an `@` to what the sandbox allows ([`MentionHelper`]). `qore
//! run` attaches the mentions of its arguments the same way ([`attach_words`]).

use std::path::Path;

use crate::console::note;
use qore_core::{ErrorCategory, ErrorInfo};
use qore_tools::DEFAULT_BUDGET;
use qore_tools::{attach_mentions, complete_mention, mentions, typed_mention, Sandbox};
use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

/// `text` with its mentions attached, from the project at `project`; the refusal when one
/// of them cannot be attached (it says that Up recalls the message).
pub fn attach(text: String, project: Option<&Path>) -> Result<String, ErrorInfo> {
    attach_with(text, project, "; Up recalls the message to change it")
}

/// `qore run`'s `prompt` with what the mentions in its arguments (`words`, which end the
/// prompt) attach; an `@` in piped stdin or a `--file` is text, never a mention.
pub fn attach_words(
    prompt: String,
    words: &[String],
    project: Option<&Path>,
) -> Result<String, ErrorInfo> {
    let said = words.join(" ");
    let attached = attach_with(said.clone(), project, "")?;
    let blocks = attached.strip_prefix(&said).unwrap_or_default();
    Ok(prompt + blocks)
}

fn attach_with(text: String, project: Option<&Path>, hint: &str) -> Result<String, ErrorInfo> {
    if mentions(&text).is_empty() {
        return Ok(text);
    }
    let project =
        project.ok_or_else(|| ErrorInfo::config("no project directory for @ mentions"))?;
    let sandbox = Sandbox::new(project).map_err(|error| ErrorInfo::config(error.to_string()))?;
    let attached = attach_mentions(&sandbox, &text, DEFAULT_BUDGET).map_err(|error| {
        let message = format!("{error}. Nothing was sent{hint}");
        ErrorInfo::new(ErrorCategory::Validation, message)
    })?;
    for path in &attached.unmatched {
        note!("qore: @{path} is not in the project: sent as text, nothing attached");
    }
    Ok(attached.message)
}

/// The line editor's helper: completion of `@` paths in the project (none without one).
pub struct MentionHelper {
    sandbox: Option<Sandbox>,
}

impl MentionHelper {
    pub fn new(project: Option<&Path>) -> MentionHelper {
        MentionHelper {
            sandbox: project.and_then(|project| Sandbox::new(project).ok()),
        }
    }
}

impl Completer for MentionHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = line.get(..pos).unwrap_or(line);
        let (Some(sandbox), Some(start)) = (&self.sandbox, typed_mention(before)) else {
            return Ok((pos, Vec::new()));
        };
        let candidates = complete_mention(sandbox, &before[start..])
            .into_iter()
            .map(|path| Pair {
                replacement: path.replace(' ', "\\ "),
                display: path,
            })
            .collect();
        Ok((start, candidates))
    }
}

impl Hinter for MentionHelper {
    type Hint = String;
}

impl Highlighter for MentionHelper {}

impl Validator for MentionHelper {}

impl Helper for MentionHelper {}
