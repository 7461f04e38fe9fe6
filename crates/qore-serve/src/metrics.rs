//! `/metrics`: the server's counters in Prometheus' text format (prometheus-client).
//! Labels hold endpoint names, model names the server routed (an unknown name is counted as
//! `unknown`), error categories and hint names; never a key, a prompt or a URL.
//!
//! - `qore_requests_total{endpoint, model}` and `qore_errors_total{endpoint, model, category}`
//! - `qore_tokens_total{model, direction="in"|"out"}`
//! - `qore_time_to_first_byte_seconds{endpoint}`, `qore_request_duration_seconds{endpoint}`
//!   and `qore_added_seconds{endpoint}` (total time minus time waiting on the provider):
//!   histograms
//! - `qore_streams_in_flight`, `qore_dropped_hints_total{endpoint, hint}`
//! - `qore_store_statements_total` and `qore_store_transactions_total`: the store handle's
//!   own counters ([`qore_store::Store::counters`]), read at each scrape
//! - `qore_store_errors_total{kind}`: store failures the server met, by kind
//!   (`unavailable`, `corrupt`, `task`, `other`: see [`store_error_kind`])
//! - `qore_usage_rows_dropped_total{reason}` (`queue_full`, `held_full`, `too_old`,
//!   `refused`) and `qore_usage_rows_unwritten`: usage rows, one per request, lost before
//!   the store and not written yet (gate/usage.rs)
//! - the listener's connections, timeouts and cap: see [`crate::listen::ConnectionCounts`]

use std::sync::atomic::AtomicI64;
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

pub use crate::gate::{store_error_kind, StoreErrors};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    endpoint: &'static str,
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    endpoint: &'static str,
    model: String,
    category: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabels {
    model: String,
    direction: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HintLabels {
    endpoint: &'static str,
    hint: String,
}

type Histograms = Family<EndpointLabels, Histogram, fn() -> Histogram>;

fn seconds() -> Histogram {
    // 50 µs to ~27 min, doubling.
    Histogram::new(exponential_buckets(0.00005, 2.0, 25))
}

/// Every metric the server keeps.
pub struct Metrics {
    registry: Registry,
    requests: Family<ModelLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    tokens: Family<TokenLabels, Counter>,
    first_byte: Histograms,
    duration: Histograms,
    added: Histograms,
    in_flight: Gauge<i64, AtomicI64>,
    dropped: Family<HintLabels, Counter>,
    store_errors: StoreErrors,
    /// The listener's connections, timeouts and cap.
    pub connections: crate::listen::ConnectionCounts,
}

/// The store handle's counters, read at each scrape.
struct StoreCounters(Arc<dyn qore_store::Store>);

impl std::fmt::Debug for StoreCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StoreCounters").finish()
    }
}

impl prometheus_client::collector::Collector for StoreCounters {
    fn encode(
        &self,
        mut encoder: prometheus_client::encoding::DescriptorEncoder,
    ) -> Result<(), std::fmt::Error> {
        use prometheus_client::encoding::EncodeMetric as _;
        use prometheus_client::metrics::counter::ConstCounter;
        use prometheus_client::metrics::MetricType;
        let counters = self.0.counters();
        for (name, help, value) in [
            (
                "qore_store_statements",
                "Statements this server sent to the store",
                counters.statements,
            ),
            (
                "qore_store_transactions",
                "Transactions this server committed in the store",
                counters.transactions,
            ),
        ] {
            let metric = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
            ConstCounter::new(value).encode(metric)?;
        }
        Ok(())
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let requests = Family::<ModelLabels, Counter>::default();
        let errors = Family::<ErrorLabels, Counter>::default();
        let tokens = Family::<TokenLabels, Counter>::default();
        let histograms = || Histograms::new_with_constructor(seconds as fn() -> Histogram);
        let (first_byte, duration, added) = (histograms(), histograms(), histograms());
        let in_flight = Gauge::<i64, AtomicI64>::default();
        let dropped = Family::<HintLabels, Counter>::default();
        registry.register("qore_requests", "Requests answered", requests.clone());
        registry.register("qore_errors", "Requests that failed", errors.clone());
        registry.register("qore_tokens", "Tokens in and out", tokens.clone());
        registry.register(
            "qore_time_to_first_byte_seconds",
            "Time to the first byte of the answer",
            first_byte.clone(),
        );
        registry.register(
            "qore_request_duration_seconds",
            "Time to the end of the answer",
            duration.clone(),
        );
        registry.register(
            "qore_added_seconds",
            "Time qore added: total time minus time waiting on the provider",
            added.clone(),
        );
        registry.register(
            "qore_streams_in_flight",
            "Streams open now",
            in_flight.clone(),
        );
        registry.register(
            "qore_dropped_hints",
            "Request hints not passed on, by name",
            dropped.clone(),
        );
        let store_errors = StoreErrors::default();
        // Store failures by kind, and the usage writer's rows: dropped (by reason) and not
        // written yet (gate/usage.rs).
        store_errors.register(&mut registry);
        let connections = crate::listen::ConnectionCounts::register(&mut registry);
        Metrics {
            registry,
            requests,
            errors,
            tokens,
            first_byte,
            duration,
            added,
            in_flight,
            dropped,
            store_errors,
            connections,
        }
    }

    /// These metrics with the counters of `store` (read at each scrape).
    pub fn with_store(store: Arc<dyn qore_store::Store>) -> Metrics {
        let mut metrics = Metrics::new();
        (metrics.registry).register_collector(Box::new(StoreCounters(store)));
        metrics
    }

    /// The store failure counter, to count into from elsewhere.
    pub fn store_errors(&self) -> StoreErrors {
        self.store_errors.clone()
    }

    pub fn request(&self, endpoint: &'static str, model: &str) {
        let labels = ModelLabels {
            endpoint,
            model: model.to_owned(),
        };
        self.requests.get_or_create(&labels).inc();
    }

    pub fn error(&self, endpoint: &'static str, model: &str, category: &'static str) {
        let labels = ErrorLabels {
            endpoint,
            model: model.to_owned(),
            category,
        };
        self.errors.get_or_create(&labels).inc();
    }

    pub fn tokens(&self, model: &str, input: u64, output: u64) {
        for (direction, n) in [("in", input), ("out", output)] {
            if n > 0 {
                let labels = TokenLabels {
                    model: model.to_owned(),
                    direction,
                };
                self.tokens.get_or_create(&labels).inc_by(n);
            }
        }
    }

    pub fn first_byte(&self, endpoint: &'static str, took: Duration) {
        (self.first_byte.get_or_create(&EndpointLabels { endpoint })).observe(took.as_secs_f64());
    }

    /// The whole request took `total`, of which `waited` was spent waiting on the provider.
    pub fn finished(&self, endpoint: &'static str, total: Duration, waited: Duration) {
        let labels = EndpointLabels { endpoint };
        self.duration
            .get_or_create(&labels)
            .observe(total.as_secs_f64());
        let added = total.saturating_sub(waited);
        self.added
            .get_or_create(&labels)
            .observe(added.as_secs_f64());
    }

    pub fn dropped(&self, endpoint: &'static str, hint: &str) {
        let labels = HintLabels {
            endpoint,
            hint: hint.to_owned(),
        };
        self.dropped.get_or_create(&labels).inc();
    }

    /// A stream opened; the gauge goes down when the guard is dropped.
    pub fn stream_opened(&self) -> InFlight {
        self.in_flight.inc();
        InFlight(self.in_flight.clone())
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}

/// Counts one open stream until dropped.
pub struct InFlight(Gauge<i64, AtomicI64>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_has_every_family_and_no_secret() {
        let metrics = Metrics::new();
        metrics.request("chat_completions", "local/default");
        metrics.error("messages", "claude", "rate_limit");
        metrics.tokens("local/default", 12, 3);
        metrics.first_byte("chat_completions", Duration::from_millis(2));
        metrics.finished(
            "chat_completions",
            Duration::from_millis(9),
            Duration::from_millis(8),
        );
        metrics.dropped("messages", "cache_control");
        let guard = metrics.stream_opened();
        let text = metrics.render();
        for needle in [
            "qore_requests_total{endpoint=\"chat_completions\",model=\"local/default\"} 1",
            "qore_errors_total{endpoint=\"messages\",model=\"claude\",category=\"rate_limit\"} 1",
            "qore_tokens_total{model=\"local/default\",direction=\"in\"} 12",
            "qore_time_to_first_byte_seconds_count{endpoint=\"chat_completions\"} 1",
            "qore_added_seconds_sum{endpoint=\"chat_completions\"} 0.001",
            "qore_streams_in_flight 1",
            "qore_dropped_hints_total{endpoint=\"messages\",hint=\"cache_control\"} 1",
        ] {
            assert!(text.contains(needle), "{needle} missing from\n{text}");
        }
        drop(guard);
        assert!(metrics.render().contains("qore_streams_in_flight 0"));
    }

    #[tokio::test]
    async fn store_counters_and_store_errors_by_kind_are_exposed() {
        let dir = tempfile::tempdir().unwrap();
        let store = qore_store::SqliteStore::open(dir.path().join("qore.db")).unwrap();
        let store: Arc<dyn qore_store::Store> = Arc::new(store);
        store.ping().await.unwrap();
        let metrics = Metrics::with_store(store.clone());
        let errors = metrics.store_errors();
        // (error, times counted)
        let cases = [
            (qore_store::StoreError::Unavailable("refused".into()), 2),
            (qore_store::StoreError::Task("gone".into()), 1),
            (qore_store::StoreError::NotFound("x".into()), 1),
        ];
        for (error, times) in &cases {
            for _ in 0..*times {
                errors.count(error);
            }
        }
        let text = metrics.render();
        let counters = store.counters();
        for needle in [
            "qore_store_errors_total{kind=\"unavailable\"} 2".to_owned(),
            "qore_store_errors_total{kind=\"task\"} 1".to_owned(),
            "qore_store_errors_total{kind=\"other\"} 1".to_owned(),
            format!("qore_store_statements_total {}", counters.statements),
            format!("qore_store_transactions_total {}", counters.transactions),
        ] {
            assert!(
                text.lines().any(|l| l == needle),
                "{needle} missing from\n{text}"
            );
        }
    }
}
