//! [`PgStore`]: the [`Store`](crate::Store) on PostgreSQL (being written).

/// The store on PostgreSQL.
pub struct PgStore {
    _private: (),
}
