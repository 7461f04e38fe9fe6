//! The gate's counters, in one place the server's `/metrics` registers and the gate counts
//! into: [`StoreErrors`] (store failures by kind, [`store_error_kind`], with the usage
//! writer's counters) and [`UsageMetrics`] (usage rows dropped by reason, rows not written
//! yet). Cheap to clone: clones count together. Depends on nothing else in the crate, so
//! `metrics` and the gate both depend on it and never on each other.

use std::sync::atomic::AtomicI64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StoreErrorLabels {
    kind: &'static str,
}

/// The count of store failures by kind, and the usage writer's counters (gate/usage.rs);
/// cheap to clone (clones count together), so the gate and its background tasks count into
/// the server's metrics.
#[derive(Clone, Debug, Default)]
pub struct StoreErrors(Family<StoreErrorLabels, Counter>, UsageMetrics);

impl StoreErrors {
    /// Registers the failure count and the usage writer's counters in `registry`.
    pub(crate) fn register(&self, registry: &mut Registry) {
        registry.register(
            "qore_store_errors",
            "Store failures, by kind",
            self.0.clone(),
        );
        self.1.register(registry);
    }

    /// The usage writer's counters, counted together with these.
    pub(crate) fn usage(&self) -> &UsageMetrics {
        &self.1
    }

    /// Count one failure.
    pub fn count(&self, error: &qore_store::StoreError) {
        let labels = StoreErrorLabels {
            kind: store_error_kind(error),
        };
        self.0.get_or_create(&labels).inc();
    }
}

/// The `kind` label of a store failure: `unavailable` (the database cannot be reached: refused,
/// timed out, no free connection), `corrupt` (stored data that does not read), `task` (a
/// store task that did not finish), else `other`.
pub fn store_error_kind(error: &qore_store::StoreError) -> &'static str {
    use qore_store::StoreError as E;
    match error {
        E::Unavailable(_) => "unavailable",
        E::Corrupt { .. } => "corrupt",
        E::Task(_) => "task",
        _ => "other",
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DropLabels {
    reason: &'static str,
}

/// The usage writer's metrics (registered by the server's [`crate::metrics::Metrics`]).
#[derive(Clone, Debug, Default)]
pub struct UsageMetrics {
    dropped: Family<DropLabels, Counter>,
    pub(super) unwritten: Gauge<i64, AtomicI64>,
}

impl UsageMetrics {
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "qore_usage_rows_dropped",
            "Usage rows (one per request) lost before reaching the store, by reason",
            self.dropped.clone(),
        );
        registry.register(
            "qore_usage_rows_unwritten",
            "Usage rows (one per request) queued or held, not in the store yet",
            self.unwritten.clone(),
        );
    }

    /// `rows` dropped for `reason`.
    pub(super) fn dropped(&self, reason: &'static str, rows: u64) {
        self.dropped
            .get_or_create(&DropLabels { reason })
            .inc_by(rows);
    }

    /// How many were dropped for `reason` so far.
    pub fn dropped_for(&self, reason: &'static str) -> u64 {
        self.dropped.get_or_create(&DropLabels { reason }).get()
    }
}
