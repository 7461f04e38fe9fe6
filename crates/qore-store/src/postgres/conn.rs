//! One pooled connection as the store's code uses it: cached prepared statements, every
//! statement counted, pipelined transactions that never leak.
//!
//! Promises:
//! - every statement sent (a query, `BEGIN`, `COMMIT`, and a prepare the connection's
//!   statement cache did not have) adds one to the statements counted; every `COMMIT` that
//!   succeeded, and every write that is one statement on its own, adds one to the
//!   transactions;
//! - statements are prepared before anything is pipelined, so futures of [`Conn::query`]
//!   joined in order reach the server in that order, in one write (`futures_util`'s joins
//!   poll in order);
//! - a connection dropped inside a transaction (an error, or the caller's future dropped
//!   between two round trips) is taken out of the pool and closed, so the server rolls the
//!   transaction back and no later caller finds it open;
//! - a row's column that does not decode is an error naming it, never a panic.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::Poll;

use deadpool_postgres::Object;
use tokio_postgres::types::{FromSql, ToSql};
use tokio_postgres::{Row, Statement};

use super::errors::Teller;
use crate::{StoreCounters, StoreError};

/// Parameters of one statement.
pub(super) type Params<'a> = [&'a (dyn ToSql + Sync)];

/// One statement of a pipeline: its rows (none for `BEGIN` and `COMMIT`).
pub(super) type Step<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<Row>, tokio_postgres::Error>> + Send + 'a>>;

/// Send every step's statement at once, in order, then read their answers in order: one
/// round trip. The first failure is the answer; the statements after it still reach the
/// server (inside a transaction they fail, and a pipelined `COMMIT` then rolls back).
pub(super) async fn pipeline(steps: Vec<Step<'_>>) -> Result<Vec<Vec<Row>>, tokio_postgres::Error> {
    let mut started = Vec::with_capacity(steps.len());
    for mut step in steps {
        // The first poll sends the statement (the statements are prepared already).
        let first = std::future::poll_fn(|cx| Poll::Ready(step.as_mut().poll(cx))).await;
        match first {
            Poll::Ready(Err(e)) => return Err(e),
            Poll::Ready(Ok(rows)) => {
                started.push(Box::pin(std::future::ready(Ok(rows))) as Step<'_>)
            }
            Poll::Pending => started.push(step),
        }
    }
    let mut answers = Vec::with_capacity(started.len());
    for step in started {
        answers.push(step.await?);
    }
    Ok(answers)
}

/// What a store has sent (see the module doc).
#[derive(Debug, Default)]
pub(super) struct Counters {
    statements: AtomicU64,
    transactions: AtomicU64,
}

impl Counters {
    pub(super) fn read(&self) -> StoreCounters {
        StoreCounters {
            statements: self.statements.load(Ordering::Relaxed),
            transactions: self.transactions.load(Ordering::Relaxed),
        }
    }

    fn statement(&self) {
        self.statements.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn transaction(&self) {
        self.transactions.fetch_add(1, Ordering::Relaxed);
    }
}

/// A store's counters and how it tells errors, shared by its connections.
#[derive(Debug)]
pub(super) struct Shared {
    pub counters: Counters,
    pub teller: Teller,
}

/// A connection taken from the pool (returned when dropped).
pub(super) struct Conn<'s> {
    /// `Some` from creation until drop.
    client: Option<Object>,
    pub shared: &'s Shared,
    in_transaction: AtomicBool,
}

impl<'s> Conn<'s> {
    pub(super) fn new(client: Object, shared: &'s Shared) -> Conn<'s> {
        Conn {
            client: Some(client),
            shared,
            in_transaction: AtomicBool::new(false),
        }
    }

    fn client(&self) -> &Object {
        match &self.client {
            Some(client) => client,
            None => unreachable!("a connection is held until it is dropped"),
        }
    }

    /// The statement for `sql`, from the connection's cache or prepared now.
    pub(super) async fn prepare(&self, doing: &str, sql: &str) -> Result<Statement, StoreError> {
        let client = self.client();
        let before = client.statement_cache.size();
        let prepared = client.prepare_cached(sql).await;
        if client.statement_cache.size() > before {
            self.shared.counters.statement();
        }
        prepared.map_err(self.shared.teller.err(doing))
    }

    /// Run a prepared statement; its rows. Sent on the first poll.
    pub(super) async fn query(
        &self,
        statement: &Statement,
        params: &Params<'_>,
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        self.shared.counters.statement();
        self.client().query(statement, params).await
    }

    /// Run a prepared statement; the rows it changed. Sent on the first poll.
    pub(super) async fn execute(
        &self,
        statement: &Statement,
        params: &Params<'_>,
    ) -> Result<u64, tokio_postgres::Error> {
        self.shared.counters.statement();
        self.client().execute(statement, params).await
    }

    /// Prepare and run `sql`, which answers exactly one row (else an error).
    pub(super) async fn row(
        &self,
        doing: &str,
        sql: &str,
        params: &Params<'_>,
    ) -> Result<Row, StoreError> {
        let statement = self.prepare(doing, sql).await?;
        self.shared.counters.statement();
        (self.client().query_one(&statement, params).await).map_err(self.shared.teller.err(doing))
    }

    /// A pipeline step running a prepared statement.
    pub(super) fn step<'a>(&'a self, statement: &'a Statement, params: &'a Params<'a>) -> Step<'a> {
        Box::pin(self.query(statement, params))
    }

    /// A pipeline step opening a transaction (`BEGIN` and its options, e.g. `BEGIN ISOLATION
    /// LEVEL REPEATABLE READ READ ONLY`).
    pub(super) fn step_begin<'a>(&'a self, begin: &'static str) -> Step<'a> {
        self.in_transaction.store(true, Ordering::Relaxed);
        Box::pin(async move { self.simple(begin).await.map(|()| Vec::new()) })
    }

    /// A pipeline step committing; call [`Conn::committed`] once the pipeline succeeded.
    pub(super) fn step_commit(&self) -> Step<'_> {
        Box::pin(async move { self.simple("COMMIT").await.map(|()| Vec::new()) })
    }

    /// Prepare and run `sql` (one round trip once prepared), errors told as `doing`.
    pub(super) async fn rows(
        &self,
        doing: &str,
        sql: &str,
        params: &Params<'_>,
    ) -> Result<Vec<Row>, StoreError> {
        let statement = self.prepare(doing, sql).await?;
        (self.query(&statement, params).await).map_err(self.shared.teller.err(doing))
    }

    /// The transaction (or the one-statement write) is committed.
    pub(super) fn committed(&self) {
        self.in_transaction.store(false, Ordering::Relaxed);
        self.shared.counters.transaction();
    }

    /// End the open transaction, writing nothing (when even that fails, dropping this
    /// connection closes it).
    pub(super) async fn abandon(&self) {
        if self.simple("ROLLBACK").await.is_ok() {
            self.in_transaction.store(false, Ordering::Relaxed);
        }
    }

    /// End a failed transaction, then give back `error`.
    pub(super) async fn rollback(&self, error: StoreError) -> StoreError {
        self.abandon().await;
        error
    }

    async fn simple(&self, sql: &str) -> Result<(), tokio_postgres::Error> {
        self.shared.counters.statement();
        self.client().batch_execute(sql).await
    }
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        if self.in_transaction.load(Ordering::Relaxed) {
            if let Some(client) = self.client.take() {
                drop(Object::take(client));
            }
        }
    }
}

/// One row's columns, decoded with errors told as `doing`.
pub(super) struct Cols<'r> {
    pub row: &'r Row,
    pub teller: &'r Teller,
    pub doing: &'r str,
}

impl<'r> Cols<'r> {
    pub(super) fn of(row: &'r Row, conn: &'r Conn<'_>, doing: &'r str) -> Cols<'r> {
        Cols {
            row,
            teller: &conn.shared.teller,
            doing,
        }
    }

    /// Column `i`.
    pub(super) fn at<T: FromSql<'r>>(&self, i: usize) -> Result<T, StoreError> {
        (self.row.try_get(i)).map_err(self.teller.err(self.doing))
    }
}
