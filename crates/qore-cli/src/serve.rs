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
    /// While a stream's upstream is silent, an SSE comment (`: keep-alive`) every SECS; 0
    /// turns it off. Default: the config's [serve] stream_keepalive_secs, else 15.
    #[arg(long, value_name = "SECS", value_parser = seconds_or_off)]
    pub stream_keepalive: Option<Duration>,
    /// A stream whose upstream sends nothing for SECS ends with the dialect's error event
    /// (an idle limit: never one on the whole stream); 0 turns it off. Default: the config's
    /// [serve] upstream_idle_secs, else 300.
    #[arg(long, value_name = "SECS", value_parser = seconds_or_off)]
    pub upstream_idle: Option<Duration>,
    #[command(flatten)]
    pub listener: ListenArgs,
}

/// The listener's limits and TLS (docs/deploy.md, "Timeouts, limits and TLS"). Each default
/// is the config's [serve] value, else the one named.
#[derive(Args, Default)]
pub struct ListenArgs {
    /// Seconds a connection may take to send its first byte, a whole request head, or the
    /// next request on a kept-alive connection. Default: 10.
    #[arg(long, value_name = "SECS", value_parser = crate::flags::seconds)]
    pub header_read_timeout: Option<Duration>,
    /// Seconds a whole request body may take, from its head (408 past it). Default: 60.
    #[arg(long, value_name = "SECS", value_parser = crate::flags::seconds)]
    pub body_timeout: Option<Duration>,
    /// Seconds a client may read nothing of what it is sent before it is closed (its
    /// upstream request is cancelled). Default: 60.
    #[arg(long, value_name = "SECS", value_parser = crate::flags::seconds)]
    pub write_stall_timeout: Option<Duration>,
    /// Seconds a TLS handshake may take. Default: 10.
    #[arg(long, value_name = "SECS", value_parser = crate::flags::seconds)]
    pub tls_handshake_timeout: Option<Duration>,
    /// Most connections open at once; more wait in the backlog. Default: from the open
    /// file limit, min(4096, (soft - min(256, soft/2)) / 2).
    #[arg(long, value_name = "N", value_parser = positive_usize)]
    pub max_connections: Option<usize>,
    /// Most header fields in a request (more: 431). Default: 100.
    #[arg(long, value_name = "N", value_parser = positive_usize)]
    pub max_headers: Option<usize>,
    /// The largest request head, in bytes (at least 8192). Default: 65536.
    #[arg(long, value_name = "BYTES", value_parser = positive_usize)]
    pub max_header_bytes: Option<usize>,
    /// Most concurrent streams on one HTTP/2 connection. Default: 100.
    #[arg(long, value_name = "N", value_parser = positive_u32)]
    pub h2_max_streams: Option<u32>,
    /// Serve HTTPS with this certificate chain (PEM); needs --tls-key. Reloaded on SIGHUP
    /// and when the file changes.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum ServeCommand {
    /// Admin credentials for the admin API and the console: create NAME.
    Admin {
        #[command(subcommand)]
        command: crate::serve_admin::AdminCommand,
    },
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
            Some(ServeCommand::Admin { command }) => {
                crate::serve_admin::run(&*store, command).await
            }
            Some(ServeCommand::Usage { key, since, json }) => {
                let agents = crate::agents::load();
                let filter = report::UsageFilter {
                    key: key.as_deref(),
                    since: since.as_deref(),
                };
                report::usage(&*store, &agents, filter, json).await
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
            listener: self.listener.flags(),
            stream_keepalive: self.stream_keepalive,
            upstream_idle: self.upstream_idle,
            // `run_command` under config.toml's [sandbox], as in `qore chat`.
            tool_options: Some(crate::sandbox::tool_options),
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

impl ListenArgs {
    fn flags(&self) -> qore_serve::listen::ListenFlags {
        qore_serve::listen::ListenFlags {
            header_read_timeout: self.header_read_timeout,
            body_timeout: self.body_timeout,
            write_stall_timeout: self.write_stall_timeout,
            tls_handshake_timeout: self.tls_handshake_timeout,
            max_connections: self.max_connections,
            max_headers: self.max_headers,
            max_header_bytes: self.max_header_bytes,
            h2_max_streams: self.h2_max_streams,
            tls_cert: self.tls_cert.clone(),
            tls_key: self.tls_key.clone(),
        }
    }
}

/// `--stream-keepalive`, `--upstream-idle`: seconds, or 0 for off.
fn seconds_or_off(text: &str) -> Result<Duration, String> {
    match text.trim().parse::<f64>() {
        Ok(0.0) => Ok(Duration::ZERO),
        _ => crate::flags::seconds(text),
    }
}

/// `--h2-max-streams`: a whole number, at least 1.
fn positive_u32(text: &str) -> Result<u32, String> {
    let n = positive(text)?;
    u32::try_from(n).map_err(|_| format!("{text:?} is too large"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_limit_flags_take_seconds_or_0_for_off() {
        let cases = [
            ("0", Ok(Duration::ZERO)),
            ("15", Ok(Duration::from_secs(15))),
            ("0.5", Ok(Duration::from_millis(500))),
        ];
        for (text, wanted) in cases {
            assert_eq!(seconds_or_off(text), wanted, "{text}");
        }
        for bad in ["-1", "x", ""] {
            assert!(seconds_or_off(bad).is_err(), "{bad}");
        }
    }
}
