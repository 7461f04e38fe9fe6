//! The store's clock on PostgreSQL: `updated_at` values that strictly increase across every
//! process writing to the database.
//!
//! Promises: [`tick`] hands out `greatest(last + 1, now)` from the one-row `store_clock`, in a
//! transaction of its own committed with `synchronous_commit = off`, so the row's lock is held
//! for one UPDATE and never across a WAL fsync. (Bumped inside each write's own transaction,
//! the lock lasted until that write's commit had reached the disk, so every write in every
//! process waited its turn behind one fsync: the scale-out benchmark's appends were bounded by
//! that.) A tick is durable as soon as any later synchronous commit is, since the WAL is
//! flushed in order: a write that used it never outlives it, and a tick lost in a database
//! crash was used by no committed write. One round trip: `BEGIN`, `SET LOCAL`, the UPDATE and
//! `COMMIT` pipelined.

use crate::StoreError;

use super::conn::{pipeline, Conn, Step};

const TICK: &str = "UPDATE store_clock SET last = greatest(last + 1, $1::bigint) RETURNING last";

/// The next `updated_at`: greater than every one handed out before, and not before `now` (ms).
pub(super) async fn tick(conn: &Conn<'_>, doing: &str, now: i64) -> Result<i64, StoreError> {
    let statement = conn.prepare(doing, TICK).await?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&now];
    let steps: Vec<Step<'_>> = vec![
        conn.step_begin("BEGIN"),
        conn.step_begin("SET LOCAL synchronous_commit = off"),
        conn.step(&statement, &params),
        conn.step_commit(),
    ];
    let answers = match pipeline(steps).await {
        Ok(answers) => answers,
        Err(e) => {
            let error = conn.shared.teller.db(doing, e);
            return Err(conn.rollback(error).await);
        }
    };
    conn.committed();
    let row = answers.get(2).and_then(|rows| rows.first());
    let Some(row) = row else {
        return Err(StoreError::PgUnexpected(format!(
            "{doing}: the store clock gave no row"
        )));
    };
    super::conn::Cols::of(row, conn, doing).at::<i64>(0)
}
