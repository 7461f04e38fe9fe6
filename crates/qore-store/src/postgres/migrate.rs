//! The PostgreSQL schema, migrated with `refinery` from `migrations/postgres/` (embedded at
//! build time) under an advisory lock.
//!
//! Promises: [`migrate`] runs on a connection of its own, holding
//! `pg_advisory_lock(hashtextextended('qore store migration', 0))` while refinery reads and
//! applies what is missing, so processes opening one empty database at once take turns: the
//! first migrates, the others wait, find everything applied, and go on. The lock is released
//! when the connection closes, also if the process dies mid-way. A database that cannot be
//! reached is [`StoreError::Unavailable`].

use tokio_postgres_rustls::MakeRustlsConnect;

use super::config::DEFAULT_CONNECT_TIMEOUT;
use super::errors::Teller;
use crate::StoreError;

mod embedded {
    refinery::embed_migrations!("migrations/postgres");
}

const LOCK: &str = "SELECT pg_advisory_lock(hashtextextended('qore store migration', 0))";
const UNLOCK: &str = "SELECT pg_advisory_unlock(hashtextextended('qore store migration', 0))";

/// Bring the database's schema to the latest version (see the module doc).
pub(super) async fn migrate(
    config: &tokio_postgres::Config,
    tls: MakeRustlsConnect,
    teller: &Teller,
) -> Result<(), StoreError> {
    // The connect timeout bounds the socket's connect; this bounds TLS and the start-up too.
    let limit = (config.get_connect_timeout().copied()).unwrap_or(DEFAULT_CONNECT_TIMEOUT);
    let connected = match tokio::time::timeout(limit, config.connect(tls)).await {
        Ok(connected) => connected,
        Err(_) => {
            return Err(StoreError::Unavailable(format!(
                "{}: cannot connect: no answer within {limit:?}",
                teller.location
            )))
        }
    };
    let (mut client, connection) = connected.map_err(teller.err("connect"))?;
    let driver = tokio::spawn(connection);
    let migrated = async {
        (client.batch_execute(LOCK).await).map_err(teller.err("lock the schema"))?;
        let report = embedded::migrations::runner().run_async(&mut client).await;
        report.map_err(|e| teller.migration(e))?;
        (client.batch_execute(UNLOCK).await).map_err(teller.err("unlock the schema"))
    }
    .await;
    drop(client);
    // The connection ends once the client is gone; a failure then changes nothing.
    let _ = driver.await;
    migrated
}
