//! What a destructive built-in call would do, worked out without doing it: the text a file
//! would go from and to, or the program a command would run and where. For showing a call
//! before it is approved.
//!
//! Promises: nothing is written or created (not even a parent directory); the path goes
//! through the same [`Sandbox::resolve_writable`] rules and the arguments through the same
//! parsing as the tool's own call, so a call the tool would refuse is previewed as
//! [`Preview::Refused`] with the tool's reason; `edit_file`'s new text comes from the tool's
//! own matching (exact, then whitespace-tolerant). The file may still change between the
//! preview and the call: the preview shows it as it is now.

use std::io::ErrorKind;
use std::path::PathBuf;

use serde_json::Value;

use crate::util::looks_binary;
use crate::{edit_file, write_file, Sandbox};

/// What one call would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preview {
    /// A text file would change: its path relative to the root, what it holds now (`None`:
    /// no file yet) and what it would hold.
    File {
        path: String,
        old: Option<String>,
        new: String,
    },
    /// A file that holds binary (or non-UTF-8) data now would be replaced by `new`.
    ReplacesBinary { path: String, new: String },
    /// A program would run, in `cwd`.
    Command { argv: Vec<String>, cwd: PathBuf },
    /// The call would be refused; the reason the tool gives.
    Refused(String),
}

/// What the call of the built-in `tool` with `input` would do in `sandbox`; `None` for a
/// tool that changes nothing or is not built in.
pub fn preview(sandbox: &Sandbox, tool: &str, input: &Value) -> Option<Preview> {
    let shown = match tool {
        "create_file" | "write_file" => write_file::preview_args(tool, input)
            .and_then(|(path, content)| whole_file(sandbox, tool, &path, content)),
        "edit_file" => edit(sandbox, input),
        "run_command" => command(sandbox, input),
        _ => return None,
    };
    Some(shown.unwrap_or_else(Preview::Refused))
}

fn whole_file(
    sandbox: &Sandbox,
    tool: &str,
    path: &str,
    content: String,
) -> Result<Preview, String> {
    let (rel, old) = current(sandbox, path)?;
    match old {
        Some(_) if tool == "create_file" => Err(format!(
            "`{rel}` already exists; use edit_file to change it or write_file to replace it"
        )),
        Some(old) => match text(old) {
            Some(old) => Ok(Preview::File {
                path: rel,
                old: Some(old),
                new: content,
            }),
            None => Ok(Preview::ReplacesBinary {
                path: rel,
                new: content,
            }),
        },
        None => Ok(Preview::File {
            path: rel,
            old: None,
            new: content,
        }),
    }
}

fn edit(sandbox: &Sandbox, input: &Value) -> Result<Preview, String> {
    let path = input
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (rel, bytes) = current(sandbox, path)?;
    let (old, new) = edit_file::preview(&rel, bytes.as_deref(), input)?;
    Ok(Preview::File {
        path: rel,
        old: Some(old),
        new,
    })
}

fn command(sandbox: &Sandbox, input: &Value) -> Result<Preview, String> {
    let argv = input.get("argv").and_then(Value::as_array);
    let words = argv.and_then(|argv| {
        (argv.iter().map(|w| w.as_str().map(str::to_owned))).collect::<Option<Vec<_>>>()
    });
    match words {
        Some(argv) if !argv.is_empty() => Ok(Preview::Command {
            argv,
            cwd: sandbox.root().to_path_buf(),
        }),
        _ => Err("invalid arguments for run_command: argv must be an array of strings".into()),
    }
}

/// `path` relative to the root and what the file holds now (`None`: nothing there), under
/// the rules of a write.
fn current(sandbox: &Sandbox, path: &str) -> Result<(String, Option<Vec<u8>>), String> {
    let abs = sandbox.resolve_writable(path).map_err(|e| e.to_string())?;
    let rel = sandbox.relative(&abs);
    match sandbox.metadata(&abs) {
        Ok(meta) if meta.is_dir() => Err(format!("`{rel}` is a directory; give a file path")),
        Ok(_) => match sandbox.read(&abs) {
            Ok(bytes) => Ok((rel, Some(bytes))),
            Err(e) => Err(format!("cannot read `{rel}`: {e}")),
        },
        Err(e) if e.kind() == ErrorKind::NotFound => Ok((rel, None)),
        Err(e) => Err(format!("cannot read `{rel}`: {e}")),
    }
}

/// `bytes` as text, unless they look binary or are not UTF-8.
fn text(bytes: Vec<u8>) -> Option<String> {
    match looks_binary(&bytes) {
        true => None,
        false => String::from_utf8(bytes).ok(),
    }
}

#[cfg(test)]
#[path = "preview_tests.rs"]
mod tests;
