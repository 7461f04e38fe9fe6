//! `qore complete FILE:LINE:COL`: one code completion at a cursor (LINE and COL 1-based; COL
//! counts UTF-16 units, as editors do), printed as the text to insert, or with `--json` as
//! `{"text", "range", "agent", "model"}` (`range`: what the text overwrites, `L1:C1-L2:C2`
//! 1-based as `qore refactor --range` takes it). The agent is `--agent`, else the first of the
//! code_completion roster. Each `--open FILE` is another open document given as context
//! (whole; llama.cpp's `input_extra`, or before the code in a chat prompt). A position past
//! the file is clamped to it; an unreadable file, an unknown agent or a failed request is
//! one line on stderr and exit 1; so is an empty completion (nothing printed).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use qore_client::CancellationToken;
use qore_session::completion::clean::Mode;
use qore_session::completion::context::{CompletionContext, Cursor, OpenFile, Window};
use qore_session::completion::request::complete as ask;
use qore_session::{SessionManager, TargetSpec};

use crate::fail;
use crate::refactor::format_range;

#[derive(Args)]
pub struct CompleteArgs {
    /// The cursor: FILE:LINE:COL, LINE and COL 1-based.
    pub position: String,
    /// The agent (default: the first of pipelines.toml's code_completion roster).
    #[arg(long)]
    pub agent: Option<String>,
    /// Complete up to the end of the cursor's line only.
    #[arg(long)]
    pub single_line: bool,
    /// Print {"text", "range", "agent", "model"}.
    #[arg(long)]
    pub json: bool,
    /// Another open document to give as context (repeatable).
    #[arg(long = "open", value_name = "FILE")]
    pub open: Vec<PathBuf>,
}

/// FILE, and the 0-based cursor of `LINE:COL` (1-based; 0 counts as 1).
pub fn parse_position(position: &str) -> Option<(PathBuf, Cursor)> {
    let (rest, col) = position.rsplit_once(':')?;
    let (file, line) = rest.rsplit_once(':')?;
    let line: u32 = line.parse().ok()?;
    let col: u32 = col.parse().ok()?;
    if file.is_empty() {
        return None;
    }
    let cursor = Cursor {
        line: line.saturating_sub(1),
        character: col.saturating_sub(1),
    };
    Some((PathBuf::from(file), cursor))
}

pub async fn complete(args: CompleteArgs) -> ExitCode {
    let Some((path, cursor)) = parse_position(&args.position) else {
        crate::usage_error(format!(
            "{:?} is not FILE:LINE:COL (LINE and COL 1-based numbers)",
            args.position
        ));
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) => return fail(format!("cannot read {}: {err}", path.display())),
    };
    let mut open = Vec::with_capacity(args.open.len());
    for other in &args.open {
        match std::fs::read_to_string(other) {
            Ok(text) => open.push(OpenFile {
                path: other.display().to_string(),
                text,
            }),
            Err(err) => return fail(format!("cannot read {}: {err}", other.display())),
        }
    }
    let cursor = cursor.clamped_in(&text);
    let ctx = CompletionContext::new(&text, cursor, &Window::default());
    let manager = SessionManager::new(None, crate::agents::load(), crate::connect::notes());
    let spec = TargetSpec {
        agent: args.agent.clone(),
        ..TargetSpec::default()
    };
    let target = match manager.reach_completer(&spec).await {
        Ok(target) => target,
        Err(error) => return fail(error.message),
    };
    let mode = match args.single_line {
        true => Mode::Single,
        false => Mode::Multi,
    };
    let agent = target.agent.as_ref().map(|a| a.name.clone());
    match ask(&target, &ctx, &path, mode, &open, CancellationToken::new()).await {
        Ok(Some(completion)) if args.json => {
            let line = serde_json::json!({
                "text": completion.text,
                "range": format_range(&ctx.replaced(cursor.line, completion.replace)),
                "agent": agent,
                "model": target.model,
            });
            crate::console::out(&format!("{line}\n"));
            ExitCode::SUCCESS
        }
        Ok(Some(completion)) => {
            crate::console::out(&completion.text);
            ExitCode::SUCCESS
        }
        Ok(None) => fail("the model's completion was empty after cleaning"),
        Err(error) => fail(error.message),
    }
}

#[cfg(test)]
#[path = "complete_tests.rs"]
mod tests;
