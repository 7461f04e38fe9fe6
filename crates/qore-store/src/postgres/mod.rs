//! [`PgStore`]: the [`Store`](crate::Store) on PostgreSQL, for several `qore serve`
//! processes sharing one database.
//!
//! Promises:
//! - [`PgStore::connect`] reads the URL (`config`), migrates the schema under an advisory
//!   lock (`migrate`), and builds a pool of at most `pool_max_size` connections, plus one
//!   connection of its own for the key list, its version and `ping` (so requests holding
//!   every pooled connection never starve the checks that let requests in); a call waits
//!   at most `pool_timeout` for a free one and connecting at most `connect_timeout`, then
//!   fails with [`StoreError::Unavailable`](crate::StoreError::Unavailable) (`errors`);
//! - every [`Store`](crate::Store) call as a whole (waiting for a connection and for every
//!   answer) ends within `call_timeout`, else fails `Unavailable` too; the connection of a
//!   call cut inside a transaction is closed (`conn`), one cut between statements goes back
//!   to the pool, whose next statement waits behind the unanswered one on the server;
//! - a pooled connection the server closed (a restart, a shutdown) is dropped when it is
//!   next taken, so once the server is back new calls succeed with the same `PgStore`;
//! - every method behaves as on SQLite (the same errors, order and checks, from the crate's
//!   shared records and rules); the SQL is in `sessions`, `read`, `keys`, `usage`,
//!   `limits`, `responses`, `copy`, and [`Store`](crate::Store) hands over to it in `api`;
//!   writes that need no decision in between are one statement or one pipelined round trip
//!   (`conn`);
//! - `updated_at` comes from the one-row table `store_clock`, bumped under its row lock to
//!   `greatest(last + 1, now)` in a short transaction of its own that waits for no disk
//!   (`clock`), so it strictly increases across every process writing to the database
//!   without making their writes wait for each other's fsyncs;
//! - [`Store::counters`](crate::Store::counters) counts statements sent and transactions
//!   committed, atomically, across the store's clones.

/// The database's clock in milliseconds since the epoch, read once per statement (a CTE
/// named `now` with the column `ms`).
macro_rules! now_ms {
    () => {
        "now AS MATERIALIZED (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms)"
    };
}

mod api;
mod clock;
mod config;
mod conn;
mod copy;
mod errors;
mod keys;
mod limits;
mod migrate;
mod read;
mod request_log;
mod responses;
mod sessions;
mod usage;

use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};

use self::config::Settings;
use self::conn::{Conn, Counters, Shared};
use self::errors::Teller;
use crate::StoreError;

/// The store on PostgreSQL. Cheap to clone: clones share the pools and the counters.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool,
    /// One connection of its own for what decides whether requests may go on at all (the
    /// key list and its version, `ping`): requests that take every connection of `pool`
    /// cannot starve it, so a busy server never fails its keyed requests closed for want of a
    /// connection to check its keys.
    watch: Pool,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("location", &self.shared.teller.location)
            .finish()
    }
}

impl PgStore {
    /// Connect to the database at `url` (`postgres://user[:password]@host:port/db?…`, see
    /// the `config` module for the parameters), migrating its schema as needed.
    pub async fn connect(url: &str) -> Result<PgStore, StoreError> {
        let settings = Settings::parse(url)?;
        let tls = settings.tls()?;
        let teller = Teller {
            location: settings.location.clone(),
            pool_max_size: settings.pool_max_size,
            pool_timeout: settings.pool_timeout,
            call_timeout: settings.call_timeout,
        };
        migrate::migrate(&settings.pg, tls.clone(), &teller).await?;
        let connect_timeout =
            (settings.pg.get_connect_timeout().copied()).unwrap_or(config::DEFAULT_CONNECT_TIMEOUT);
        let pool_of = |max_size: usize| {
            let manager = Manager::from_config(
                settings.pg.clone(),
                tls.clone(),
                ManagerConfig {
                    recycling_method: RecyclingMethod::Fast,
                },
            );
            Pool::builder(manager)
                .max_size(max_size)
                .wait_timeout(Some(settings.pool_timeout))
                .create_timeout(Some(connect_timeout))
                .recycle_timeout(Some(connect_timeout))
                .runtime(Runtime::Tokio1)
                .build()
                .map_err(|e| StoreError::PgConfig(e.to_string()))
        };
        let (pool, watch) = (pool_of(settings.pool_max_size)?, pool_of(1)?);
        Ok(PgStore {
            pool,
            watch,
            shared: Arc::new(Shared {
                counters: Counters::default(),
                teller,
            }),
        })
    }

    /// A connection from the pool, for `doing`.
    async fn conn(&self, doing: &str) -> Result<Conn<'_>, StoreError> {
        match self.pool.get().await {
            Ok(client) => Ok(Conn::new(client, &self.shared)),
            Err(e) => Err(self.shared.teller.pool(doing, e)),
        }
    }

    /// `call`, given up after `call_timeout` (see the module doc).
    async fn within<T>(
        &self,
        doing: &str,
        call: impl std::future::Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout(self.shared.teller.call_timeout, call).await {
            Ok(answer) => answer,
            Err(_) => Err(self.shared.teller.no_answer(doing)),
        }
    }

    /// The watch connection (see [`PgStore`]), for `doing`.
    async fn watch_conn(&self, doing: &str) -> Result<Conn<'_>, StoreError> {
        match self.watch.get().await {
            Ok(client) => Ok(Conn::new(client, &self.shared)),
            Err(e) => Err(self.shared.teller.pool(doing, e)),
        }
    }
}
