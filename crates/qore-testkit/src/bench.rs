//! What the benches (`crates/*/benches/`) share: the run settings they read from the command
//! line and the environment, and the statistics their tables print.
//!
//! - [`BenchRun::from_env`]: `--bench` without `--test`/`--list` means `cargo bench` (not
//!   criterion's test mode under `cargo test --benches`); `QORE_BENCH_RATIOS=1` asks for the
//!   ratio mode instead of criterion; `QORE_BENCH_K` is the runs per variant there (a
//!   positive number, else the bench's default); `QORE_BENCH_CASES` keeps the cases whose
//!   name contains it.
//! - [`median`] of samples (zero for none); [`us`] formats seconds as microseconds.

use std::time::Duration;

/// How this bench process was asked to run.
#[derive(Debug, Clone)]
pub struct BenchRun {
    /// Run by `cargo bench` (full sizes, checks and tables), not as a quick test.
    pub benchmarking: bool,
    /// `QORE_BENCH_RATIOS=1`: K alternating runs per variant and the ratio table, no
    /// criterion.
    pub ratios: bool,
    /// `QORE_BENCH_K`, else the bench's default.
    pub k: usize,
    /// `QORE_BENCH_CASES`: keep only the cases whose name contains this.
    pub filter: Option<String>,
}

impl BenchRun {
    pub fn from_env(default_k: usize) -> Self {
        let args: Vec<String> = std::env::args().collect();
        let has = |flag: &str| args.iter().any(|a| a == flag);
        BenchRun {
            benchmarking: has("--bench") && !has("--test") && !has("--list"),
            ratios: std::env::var_os("QORE_BENCH_RATIOS").is_some_and(|v| v == "1"),
            k: std::env::var("QORE_BENCH_K")
                .ok()
                .and_then(|v| v.parse().ok())
                .filter(|&k| k > 0)
                .unwrap_or(default_k),
            filter: std::env::var("QORE_BENCH_CASES").ok(),
        }
    }

    /// The case called `name` is kept by the filter.
    pub fn keeps(&self, name: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| name.contains(f))
    }
}

/// The median of `samples` (the upper one of an even count); zero for none.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// `seconds` as microseconds with one decimal.
pub fn us(seconds: f64) -> String {
    format!("{:.1}", seconds * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        let ms = |v: &[u64]| v.iter().map(|&m| Duration::from_millis(m)).collect();
        assert_eq!(median(ms(&[5, 1, 3])), Duration::from_millis(3));
        assert_eq!(median(ms(&[4, 1, 3, 2])), Duration::from_millis(3));
        assert_eq!(median(Vec::new()), Duration::ZERO);
        assert_eq!(us(0.000_012_34), "12.3");
    }
}
