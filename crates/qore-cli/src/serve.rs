//! `qore serve …`: the HTTP server's command line, its API keys and its usage report.
//!
//! Promises:
//! - the store is the one `--store` names (or `QORE_STORE_URL`): a `postgres://` URL or a
//!   SQLite file; without either, the CLI's `qore.db` (in `QORE_DATA_DIR`, else the
//!   platform's data dir). Every running `qore serve` on it polls it: a key created or revoked
//!   here takes effect there within a second, and several servers on one PostgreSQL share
//!   keys, limits, usage and stored conversations;
//! - `keys create` prints the new key once, alone on stdout (one line, nothing else); what
//!   was created goes to stderr; the key's text is never stored (only its SHA-256) and never
//!   shown again;
//! - `keys list` shows names, id prefixes, model patterns, limits and times, never a key or
//!   its hash; `keys revoke` takes a name, an id or a unique id prefix;
//! - `usage` is a table (JSON with `--json`) per key, model, agent and UTC day (both reports
//!   in [`report`]);
//! - a bad flag is a usage error naming it (exit 2); a failure is one `qore:` line on stderr
//!   (exit 1).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};
use qore_serve::gate::{check_pattern, hash_key, new_key};
use qore_store::{NewKey, Store};

use crate::console::{note, outln};

mod report;

/// `qore serve`: start the server, or manage its keys and read its usage.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    #[command(subcommand)]
    pub command: Option<ServeCommand>,
    /// Where to listen: ADDR:PORT, or a bare PORT on 127.0.0.1. Default: the config's
    /// [serve] listen, else 127.0.0.1:8787.
    #[arg(long, value_name = "ADDR", value_parser = listen)]
    pub listen: Option<String>,
    /// The settings file (TOML with a [serve] table). Default: the config dir's config.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Check no keys: anyone who reaches the address may use every model.
    #[arg(long)]
    pub no_auth: bool,
    /// After SIGTERM or Ctrl-C, how long streams in flight may finish, in seconds. Default:
    /// the config's, else 30.
    #[arg(long, value_name = "SECS", value_parser = crate::flags::seconds)]
    pub drain_timeout: Option<Duration>,
    /// The largest request body accepted, in bytes (larger: 413). Default: the config's,
    /// else 32 MiB.
    #[arg(long, value_name = "BYTES", value_parser = positive_usize)]
    pub body_limit: Option<usize>,
}

#[derive(Subcommand)]
pub enum ServeCommand {
    /// API keys: create NAME, list, revoke NAME|ID.
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Requests, errors and tokens per key, model, agent and UTC day.
    Usage {
        /// Only this key (name, id or unique id prefix).
        #[arg(long, value_name = "NAME|ID")]
        key: Option<String>,
        /// Only from this UTC day on.
        #[arg(long, value_name = "YYYY-MM-DD", value_parser = day)]
        since: Option<String>,
        /// One JSON array of rows instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum KeysCommand {
    /// Create a key and print it (once: only its hash is stored).
    Create {
        /// A unique name for the key (what list, revoke and usage show).
        name: String,
        /// A glob over agent names and provider/model the key may use (`claude-*`,
        /// `local/*`); repeat for more. Default: every model.
        #[arg(long = "models", value_name = "PATTERN", value_parser = pattern)]
        models: Vec<String>,
        /// Most requests in any 60 seconds.
        #[arg(long, value_name = "N", value_parser = positive)]
        rpm: Option<u64>,
        /// Most tokens (in and out) in any 60 seconds.
        #[arg(long, value_name = "N", value_parser = positive)]
        tpm: Option<u64>,
        /// Most tokens (in and out) over the key's whole life.
        #[arg(long, value_name = "N", value_parser = positive)]
        budget_tokens: Option<u64>,
    },
    /// List the keys (never the keys themselves).
    List {
        /// One JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key (it stays listed; a running server refuses it within a second).
    Revoke {
        /// Name, id or unique id prefix.
        key: String,
    },
}

/// Run `qore serve …` on the store at `store` (`--store`; `None`: `QORE_STORE_URL`, else the
/// default file).
pub async fn serve(args: ServeArgs, store: Option<String>) -> ExitCode {
    let done = match open(store.as_deref()).await {
        Err(message) => Err(message),
        Ok(store) => match args.command {
            Some(ServeCommand::Keys { command }) => keys(&*store, command).await,
            Some(ServeCommand::Usage { key, since, json }) => {
                report::usage(&*store, key.as_deref(), since.as_deref(), json).await
            }
            None => start(args, store).await,
        },
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => crate::fail(message),
    }
}

/// Start the server.
async fn start(args: ServeArgs, store: Arc<dyn Store>) -> Result<(), String> {
    crate::log::init("warn,qore_serve=info");
    qore_serve::run(args.flags(), store)
        .await
        .map_err(|e| e.to_string())
}

impl ServeArgs {
    /// The flags as the server's settings take them.
    pub fn flags(&self) -> qore_serve::config::ServeFlags {
        qore_serve::config::ServeFlags {
            listen: self.listen.clone(),
            config: self.config.clone(),
            no_auth: self.no_auth,
            drain_timeout: self.drain_timeout,
            body_limit: self.body_limit,
        }
    }
}

async fn open(location: Option<&str>) -> Result<Arc<dyn Store>, String> {
    let opened = match location {
        Some(location) => qore_store::open(location).await,
        None => qore_store::open_configured().await,
    };
    opened.map_err(|e| e.to_string())
}

async fn keys(store: &dyn Store, command: KeysCommand) -> Result<(), String> {
    match command {
        KeysCommand::Create {
            name,
            models,
            rpm,
            tpm,
            budget_tokens,
        } => {
            let key = new_key().map_err(|e| e.to_string())?;
            let new = NewKey {
                name,
                hash: hash_key(&key),
                models,
                rpm,
                tpm,
                budget_tokens,
            };
            let created = store.create_key(&new).await.map_err(|e| e.to_string())?;
            note!(
                "qore: created the key '{}' (id {}; models: {}; limits: {}). It is printed once, \
                 on stdout: keep it now, only its hash is stored.",
                created.name,
                created.id,
                report::models_text(&created),
                report::limits_text(&created)
            );
            outln!("{key}");
            Ok(())
        }
        KeysCommand::List { json } => report::list(store, json).await,
        KeysCommand::Revoke { key } => {
            let before = store.key(&key).await.map_err(|e| e.to_string())?;
            if let Some(at) = before.revoked_at {
                note!(
                    "qore: the key '{}' was already revoked on {}",
                    before.name,
                    report::minute(at)
                );
                return Ok(());
            }
            let revoked = (store.revoke_key(&before.id).await).map_err(|e| e.to_string())?;
            outln!("revoked the key '{}' ({})", revoked.name, revoked.id);
            Ok(())
        }
    }
}

/// `--rpm`, `--tpm`, `--budget-tokens`: a whole number of at least 1.
fn positive(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{text:?} is not a whole number of at least 1")),
    }
}

/// `--body-limit`: a whole number of bytes, at least 1.
fn positive_usize(text: &str) -> Result<usize, String> {
    let n = positive(text)?;
    usize::try_from(n).map_err(|_| format!("{text:?} is too large"))
}

/// `--models`: a glob the server can use.
fn pattern(text: &str) -> Result<String, String> {
    check_pattern(text)?;
    Ok(text.trim().to_owned())
}

/// `--listen`: an address the server can parse.
fn listen(text: &str) -> Result<String, String> {
    qore_serve::config::parse_listen(text.trim()).map_err(|e| e.to_string())?;
    Ok(text.trim().to_owned())
}

/// `--since`: a UTC day.
fn day(text: &str) -> Result<String, String> {
    if qore_store::is_day(text.trim()) {
        Ok(text.trim().to_owned())
    } else {
        Err(format!("{text:?} is not a day: expected YYYY-MM-DD"))
    }
}
