//! Where the CLI keeps everything (the global `--store LOCATION`, `QORE_STORE_URL`), and
//! `qore store migrate`.
//!
//! Promises:
//! - [`open`] opens the store every command uses: `--store`'s location (clap also reads it
//!   from `QORE_STORE_URL`), a `postgres://…` / `postgresql://…` URL or a SQLite file path;
//!   without one (or an empty one), `qore.db` in `QORE_DATA_DIR`, else in the platform's data
//!   dir. A store that cannot be opened is one short line naming the location, never its
//!   password (neither `user:password@` nor a `password=` parameter, whatever the error
//!   says).
//! - `qore store migrate --from LOCATION --to LOCATION` copies every key, session (with its
//!   turns), usage row and stored response of one store into the other
//!   ([`qore_store::copy_store`]: ids and times kept, what the target has left alone, so a
//!   second run copies nothing) and prints the counts on stdout. A source SQLite file that
//!   does not exist, or a store that cannot be opened or written, is one line and exit 1;
//!   the same location twice is a usage error (exit 2).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Subcommand;
use qore_store::{copy_store, is_postgres, passwords, shown, SqliteStore, Store, StoreError};

use crate::console::{note, outln};

/// `qore store …`.
#[derive(Subcommand)]
pub enum StoreCommand {
    /// Copy everything one store holds (sessions, API keys, usage, stored responses) into
    /// another, keeping ids and times; what the target already has is left alone, so running
    /// it again copies nothing.
    Migrate {
        /// The store to copy from: a `postgres://` URL or a SQLite file path.
        #[arg(long, value_name = "LOCATION")]
        from: String,
        /// The store to copy into (created and migrated as needed).
        #[arg(long, value_name = "LOCATION")]
        to: String,
    },
}

/// Open the store at `location` (see the module doc); `None` or empty: the default file.
pub async fn open(location: Option<&str>) -> Result<Arc<dyn Store>, String> {
    let location = location.map(str::trim).filter(|l| !l.is_empty());
    let opened = match location {
        Some(location) => qore_store::open(location).await,
        None => open_default().await,
    };
    opened.map_err(|error| {
        let shown = location.map_or_else(default_location, shown);
        failure_line(&shown, location.unwrap_or(""), &error.to_string())
    })
}

/// `qore.db` in the data dir (not `QORE_STORE_URL`: clap has read it into `--store`).
async fn open_default() -> Result<Arc<dyn Store>, StoreError> {
    let opened = tokio::task::spawn_blocking(SqliteStore::open_default).await;
    let store = opened.map_err(|e| StoreError::Task(e.to_string()))??;
    Ok(Arc::new(store))
}

/// `qore store …`.
pub async fn store(command: StoreCommand) -> ExitCode {
    match command {
        StoreCommand::Migrate { from, to } => migrate(&from, &to).await,
    }
}

async fn migrate(from: &str, to: &str) -> ExitCode {
    let (from, to) = (from.trim(), to.trim());
    if from.is_empty() || to.is_empty() {
        crate::usage_error("--from and --to each need a location");
    }
    if same_location(from, to) {
        crate::usage_error(format!(
            "--from and --to name the same store ({}): nothing to copy",
            shown(from)
        ));
    }
    if !is_postgres(from) && !Path::new(from).exists() {
        return crate::fail(format!("no store at {from}: the file does not exist"));
    }
    let source = match open(Some(from)).await {
        Ok(store) => store,
        Err(message) => return crate::fail(message),
    };
    let target = match open(Some(to)).await {
        Ok(store) => store,
        Err(message) => return crate::fail(message),
    };
    match copy_store(source.as_ref(), target.as_ref()).await {
        Ok(report) => {
            note!(
                "qore: copied {} into {}",
                source.location(),
                target.location()
            );
            outln!("{report}");
            ExitCode::SUCCESS
        }
        Err(error) => crate::fail(failure_line(
            &format!("{} into {}", shown(from), shown(to)),
            &format!("{from} {to}"),
            &format!("the copy stopped: {error}"),
        )),
    }
}

/// Whether `a` and `b` are the same store: the same text, or the same existing file.
fn same_location(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    if is_postgres(a) || is_postgres(b) {
        return false;
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// One line about `shown` (a location without its password): `error`, with the passwords
/// in `secret_source` scrubbed out, naming `shown` when it does not already.
fn failure_line(shown: &str, secret_source: &str, error: &str) -> String {
    let mut error = error.replace('\n', " ");
    for secret in passwords(secret_source) {
        error = error.replace(&secret, "***");
    }
    match error.contains(shown) {
        true => error,
        false => format!("cannot open the store {shown}: {error}"),
    }
}

/// The default location, for messages.
fn default_location() -> String {
    match qore_store::data_dir() {
        Ok(dir) => dir.join(qore_store::DB_FILE).display().to_string(),
        Err(_) => qore_store::DB_FILE.to_owned(),
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
