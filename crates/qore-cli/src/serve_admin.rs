//! `qore serve admin create NAME`: an admin credential for `qore serve`'s admin API and
//! console, printed once on stdout (one line, nothing else); only its hash is stored, as
//! the key `admin:NAME` (revoked with `qore serve keys revoke admin:NAME`).

use clap::Subcommand;
use qore_store::Store;

use crate::console::{note, outln};

#[derive(Subcommand)]
pub enum AdminCommand {
    /// Create an admin credential and print it (once: only its hash is stored).
    Create {
        /// A unique name (stored as the key `admin:NAME`).
        name: String,
    },
}

pub async fn run(store: &dyn Store, command: AdminCommand) -> Result<(), String> {
    match command {
        AdminCommand::Create { name } => {
            let (secret, record) = qore_serve::admin::auth::create(store, &name)
                .await
                .map_err(|e| e.to_string())?;
            note!(
                "qore: created the admin credential '{}' (id {}). It is printed once, on \
                 stdout: keep it now, only its hash is stored. It calls no model; revoke it \
                 with `qore serve keys revoke {}`.",
                record.name,
                record.id,
                record.name
            );
            outln!("{secret}");
            Ok(())
        }
    }
}
