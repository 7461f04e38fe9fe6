//! The conformance suite (`conformance/`) against SQLite: every case on a fresh temporary
//! file, copies from one fresh file to another.

mod common;
#[macro_use]
mod conformance;

/// A new SQLite file in its own temporary directory.
fn fresh() -> conformance::Place {
    conformance::sqlite_place()
}

conformance_suite!(
    fresh = crate::fresh,
    pairs = [sqlite_to_sqlite => (crate::fresh, crate::fresh)]
);
