//! `qore sessions …`: list, show, export, import, compress, remove and rename stored sessions.
//!
//! Promises: the store is the global `--store`'s (a `postgres://` URL or a SQLite file;
//! `QORE_STORE_URL`), else `qore.db` in `QORE_DATA_DIR` (else the platform's data dir), and
//! every subcommand behaves the same on either backend ([`crate::store::open`]);
//! a session is named by its id, its name or a unique id prefix (one resolver, qore-store's);
//! `list` is a table (JSON with `--json`) of this project's sessions, newest first, or of
//! every project's, with each one's token estimate (qore-session's, calibrated by its last
//! reported usage; the share of the window when its agent's profile sets one); `show` and
//! `export` print the transcript (qore-session's), `import` writes one new session;
//! `compress` writes a new session linked to the original (which stays) and prints its id. Results go to stdout, notes and errors to stderr; a failure is
//! one `error:` line and exit code 1. Nothing here panics on bad input.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Subcommand;
use comfy_table::{presets::NOTHING, Table};
use qore_session::compress::Keep;
use qore_session::target::resolve_project;
use qore_session::tokens::session_use;
use qore_session::transcript::{self, ExportFormat};
use qore_session::{Compressing, SessionManager};
use qore_store::{time_of, SessionInfo, Store};
use serde_json::json;

use crate::console::{note, outln};

const FAILURE: u8 = 1;

#[derive(Subcommand)]
pub enum SessionsCommand {
    /// List sessions, last written first: those of this project (the current directory, or
    /// --project), or every project's.
    List {
        /// One JSON array of sessions instead of a table.
        #[arg(long)]
        json: bool,
        /// Every project's sessions.
        #[arg(long, conflicts_with = "project")]
        all_projects: bool,
        /// The project whose sessions to list (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Print a session's transcript (Markdown; qore's JSON with --json).
    Show {
        /// Id, name or unique id prefix.
        id: String,
        #[arg(long)]
        json: bool,
        /// For a compressed session: show the original it was compressed from.
        #[arg(long)]
        original: bool,
    },
    /// Write a session out: qore's versioned JSON (importable) or Markdown.
    Export {
        /// Id, name or unique id prefix.
        id: String,
        #[arg(long, value_enum, default_value = "json")]
        format: Format,
        /// Write to FILE (replacing it) instead of stdout.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Store a file as a new session: qore's export, or a QodeAssist chat history (0.4, and
    /// the legacy 0.1/0.2 forms).
    Import {
        file: PathBuf,
        /// The project to file the session under (default: the export's own project; for a
        /// QodeAssist history, the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// Summarise a session's older turns with the compression roster's first agent into a
    /// new session linked to it (the original stays as it is); prints the new session's id.
    Compress {
        /// Id, name or unique id prefix.
        id: String,
        /// How many of the most recent turns are copied as they are (default 2).
        #[arg(long, value_name = "N")]
        keep: Option<usize>,
    },
    /// Delete a session with all its turns (sessions compressed from it stay).
    Rm {
        /// Id, name or unique id prefix.
        id: String,
    },
    /// Give a session a (unique) name, usable wherever an id is.
    Rename {
        /// Id, name or unique id prefix.
        id: String,
        name: String,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Json,
    Markdown,
}

pub async fn sessions(command: SessionsCommand, location: Option<&str>) -> ExitCode {
    let done = match (crate::store::open(location).await, command) {
        (Err(message), _) => Err(message),
        (Ok(store), SessionsCommand::Compress { id, keep }) => compress(store, &id, keep).await,
        (Ok(store), command) => run(store.as_ref(), command).await,
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(FAILURE)
        }
    }
}

async fn run(store: &dyn Store, command: SessionsCommand) -> Result<(), String> {
    match command {
        SessionsCommand::List {
            json,
            all_projects,
            project,
        } => {
            let project = if all_projects {
                None
            } else {
                Some(project_dir(project)?)
            };
            list(store, project.as_deref(), json).await
        }
        SessionsCommand::Show { id, json, original } => {
            let mut info = store.session(&id).await.map_err(|e| e.to_string())?;
            if original {
                let parent = info.parent_id.ok_or_else(|| {
                    format!(
                        "session {} has no original: it was not compressed from another \
                         session (or that one was removed)",
                        info.id
                    )
                })?;
                info = store.session(&parent).await.map_err(|e| e.to_string())?;
            }
            let format = if json {
                ExportFormat::Json
            } else {
                ExportFormat::Markdown
            };
            let text = transcript::export(store, &info.id, format)
                .await
                .map_err(|e| e.to_string())?;
            crate::console::out(&text);
            Ok(())
        }
        SessionsCommand::Export { id, format, output } => {
            let format = match format {
                Format::Json => ExportFormat::Json,
                Format::Markdown => ExportFormat::Markdown,
            };
            let text = transcript::export(store, &id, format)
                .await
                .map_err(|e| e.to_string())?;
            match output {
                None => {
                    crate::console::out(&text);
                }
                Some(file) => {
                    std::fs::write(&file, text)
                        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
                    note!("exported to {}", file.display());
                }
            }
            Ok(())
        }
        SessionsCommand::Import { file, project } => {
            let project = project.map(|dir| project_dir(Some(dir))).transpose()?;
            let here = project_dir(None)?;
            let imported = transcript::import_file(store, &file, project.as_deref(), Some(&here))
                .await
                .map_err(|e| e.to_string())?;
            for line in &imported.notes {
                note!("note: {line}");
            }
            outln!(
                "imported {} ({}, {} turn{})",
                imported.id,
                imported.source,
                imported.turns,
                if imported.turns == 1 { "" } else { "s" }
            );
            Ok(())
        }
        SessionsCommand::Compress { .. } => Err("compress needs the session manager".into()),
        SessionsCommand::Rm { id } => {
            let info = store.session(&id).await.map_err(|e| e.to_string())?;
            store.remove(&info.id).await.map_err(|e| e.to_string())?;
            outln!("removed {}{}", info.id, titled(&info));
            Ok(())
        }
        SessionsCommand::Rename { id, name } => {
            let info = store.session(&id).await.map_err(|e| e.to_string())?;
            store
                .rename(&info.id, &name)
                .await
                .map_err(|e| e.to_string())?;
            outln!("renamed {} to '{}'", info.id, name.trim());
            Ok(())
        }
    }
}

async fn list(store: &dyn Store, project: Option<&Path>, json: bool) -> Result<(), String> {
    let sessions = store
        .list_sessions(project)
        .await
        .map_err(|e| e.to_string())?;
    if json {
        let config = crate::agents::load();
        let mut rows = Vec::new();
        for s in &sessions {
            let mut row = json_row(s);
            row["tokens"] = json!(session_use(store, &config.catalog, s)
                .await
                .map_err(|e| e.to_string())?);
            rows.push(row);
        }
        outln!("{}", serde_json::Value::Array(rows));
        return Ok(());
    }
    if sessions.is_empty() {
        match project {
            Some(dir) => note!(
                "no sessions in {} (--all-projects lists every project's)",
                dir.display()
            ),
            None => note!("no sessions yet"),
        }
        return Ok(());
    }
    let config = crate::agents::load();
    let ids = store.session_ids().await.map_err(|e| e.to_string())?;
    let width = prefix_len(&ids);
    let mut table = Table::new();
    table.load_preset(NOTHING).set_header([
        "ID", "NAME", "TITLE", "TURNS", "TOKENS", "UPDATED", "PROJECT",
    ]);
    for s in &sessions {
        let tokens = session_use(store, &config.catalog, s)
            .await
            .map_err(|e| e.to_string())?;
        let tokens = match tokens.percent {
            Some(percent) => format!("{} ({percent:.0}%)", tokens.used),
            None => tokens.used.to_string(),
        };
        table.add_row([
            s.id.get(..width).unwrap_or(&s.id).to_owned(),
            s.name.clone().unwrap_or_default(),
            shortened(s.title.as_deref().unwrap_or(""), 40),
            s.turn_count.to_string(),
            tokens,
            minute(s.updated_at),
            s.project_dir.clone().unwrap_or_default(),
        ]);
    }
    for line in table.lines() {
        outln!("{}", line.trim_end());
    }
    Ok(())
}

/// `qore sessions compress`: the new session's id on stdout, what was done on stderr.
async fn compress(store: Arc<dyn Store>, key: &str, keep: Option<usize>) -> Result<(), String> {
    let manager = SessionManager::new(Some(store), crate::agents::load(), crate::connect::notes());
    let cancel = crate::run::cancel_on_ctrl_c();
    let keep = keep.map(Keep::Turns);
    let done = (manager.compress(Compressing::Stored(key), keep, &cancel)).await;
    let done = done.map_err(|e| e.into_info().message)?;
    note!(
        "qore: compressed {} into a new session: {} turn{} summarised, {} kept (the original stays)",
        done.parent_id,
        done.summarised_turns,
        if done.summarised_turns == 1 { "" } else { "s" },
        done.kept_turns
    );
    outln!("{}", done.session_id);
    Ok(())
}

fn json_row(s: &SessionInfo) -> serde_json::Value {
    json!({
        "id": s.id,
        "name": s.name,
        "title": s.title,
        "project_dir": s.project_dir,
        "agent": s.agent,
        "model": s.model,
        "created_at": rfc3339(s.created_at),
        "updated_at": rfc3339(s.updated_at),
        "parent_id": s.parent_id,
        "turns": s.turn_count,
        "messages": s.message_count,
        "input_tokens": s.last_usage.as_ref().and_then(|u| u.input_tokens),
    })
}

/// The shortest length (at least 8) at which every id differs from its neighbours;
/// `ids` in order.
fn prefix_len(ids: &[String]) -> usize {
    let shared = |a: &str, b: &str| a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    (ids.windows(2))
        .map(|pair| shared(&pair[0], &pair[1]) + 1)
        .fold(8, usize::max)
}

fn shortened(text: &str, most: usize) -> String {
    if text.chars().count() <= most {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(most - 1).collect();
    cut.push('…');
    cut
}

fn titled(info: &SessionInfo) -> String {
    (info.title.as_deref()).map_or(String::new(), |t| format!(" ({})", shortened(t, 60)))
}

fn rfc3339(millis: i64) -> String {
    humantime::format_rfc3339_millis(time_of(millis)).to_string()
}

/// `2026-11-25 14:58` (UTC).
fn minute(millis: i64) -> String {
    let text = humantime::format_rfc3339_seconds(time_of(millis)).to_string();
    text.get(..16).unwrap_or(&text).replacen('T', " ", 1)
}

/// `dir`, or the current directory, as sessions record projects
/// ([`qore_session::target::resolve_project`]).
fn project_dir(dir: Option<PathBuf>) -> Result<PathBuf, String> {
    resolve_project(dir.as_deref()).map_err(|e| match dir {
        Some(dir) => format!("cannot resolve {}: {e}", dir.display()),
        None => format!("cannot read the current directory: {e}"),
    })
}

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod tests;
