//! The listener's metrics, registered beside the server's others in `/metrics`:
//!
//! - `qore_connections_open` (gauge) and `qore_connections_accepted_total`
//! - `qore_connections_closed_total{reason}`: closed by a limit, `reason` one of
//!   `first_byte_timeout` (nothing sent), `header_timeout` (a head not whole in time, or
//!   keep-alive idle), `h2_idle_timeout`, `body_timeout` (408), `write_stall` (the client
//!   stopped reading), `tls_handshake_timeout`, `tls_handshake_failed`
//! - `qore_connections_cap` (gauge: the cap) and `qore_connections_cap_waits_total`: how
//!   often the accept loop waited for a free slot (connections then wait in the backlog)
//! - `qore_accept_errors_total{kind}`: `descriptors` (EMFILE, ENFILE, ENOBUFS, ENOMEM) or
//!   `other`
//! - `qore_tls_reloads_total{result}`: `ok` or `failed` (the old certificate is kept)

use std::sync::atomic::AtomicI64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

/// The listener's counters; clones count together.
#[derive(Clone, Debug, Default)]
pub struct ConnectionCounts {
    open: Gauge<i64, AtomicI64>,
    accepted: Counter,
    closed: Family<ReasonLabels, Counter>,
    cap: Gauge<i64, AtomicI64>,
    cap_waits: Counter,
    accept_errors: Family<KindLabels, Counter>,
    tls_reloads: Family<ResultLabels, Counter>,
}

impl ConnectionCounts {
    /// New counters, registered in `registry`.
    pub fn register(registry: &mut Registry) -> ConnectionCounts {
        let counts = ConnectionCounts::default();
        registry.register(
            "qore_connections_open",
            "Client connections open now",
            counts.open.clone(),
        );
        registry.register(
            "qore_connections_accepted",
            "Client connections accepted",
            counts.accepted.clone(),
        );
        registry.register(
            "qore_connections_closed",
            "Client connections closed by a limit, by reason",
            counts.closed.clone(),
        );
        registry.register(
            "qore_connections_cap",
            "The most client connections open at once",
            counts.cap.clone(),
        );
        registry.register(
            "qore_connections_cap_waits",
            "Times the accept loop waited for a connection to end (the cap was reached)",
            counts.cap_waits.clone(),
        );
        registry.register(
            "qore_accept_errors",
            "Accept failures, by kind",
            counts.accept_errors.clone(),
        );
        registry.register(
            "qore_tls_reloads",
            "Certificate reloads, by result",
            counts.tls_reloads.clone(),
        );
        counts
    }

    /// A connection was accepted; the open gauge goes down when the guard is dropped.
    pub fn opened(&self) -> OpenGuard {
        self.accepted.inc();
        self.open.inc();
        OpenGuard(self.open.clone())
    }

    pub fn closed(&self, reason: &'static str) {
        self.closed.get_or_create(&ReasonLabels { reason }).inc();
    }

    pub fn set_cap(&self, cap: usize) {
        self.cap.set(i64::try_from(cap).unwrap_or(i64::MAX));
    }

    pub fn cap_waited(&self) {
        self.cap_waits.inc();
    }

    pub fn accept_error(&self, kind: &'static str) {
        self.accept_errors.get_or_create(&KindLabels { kind }).inc();
    }

    pub fn tls_reload(&self, result: &'static str) {
        self.tls_reloads
            .get_or_create(&ResultLabels { result })
            .inc();
    }

    /// How many connections `reason` closed (for tests).
    pub fn closed_count(&self, reason: &'static str) -> u64 {
        self.closed.get_or_create(&ReasonLabels { reason }).get()
    }
}

/// Counts one open connection until dropped.
pub struct OpenGuard(Gauge<i64, AtomicI64>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}
