//! `[pricing]`: what an agent's model costs, in dollars per million tokens, and what a
//! turn's usage cost at those prices.
//!
//! Promises: `input` and `output` are required, `cache_read` and `cache_write` (input read
//! from and written to the provider's prompt cache) optional, each `input` when not given;
//! every price is finite and non-negative (an unknown key in the table is an error at its
//! line, like any wrong field). [`Pricing::cost`] takes a usage whose `input_tokens` is the
//! whole prompt, cache reads and writes included (qore-session's `tokens::prompt_tokens`
//! gives that on every wire): the cost is `fresh × input + reads × cache_read + writes ×
//! cache_write + output_tokens × output`, over 10⁶, where `fresh` is the prompt less its
//! reads and writes; there is none when the provider did not report both `input_tokens` and
//! `output_tokens` (a cost from half the counts would be too low without saying so).

use qore_core::Usage;
use serde::{Deserialize, Serialize};

/// Dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Pricing {
    /// Per million input (prompt) tokens.
    #[serde(deserialize_with = "price")]
    pub input: f64,
    /// Per million output (completion) tokens.
    #[serde(deserialize_with = "price")]
    pub output: f64,
    /// Per million input tokens read from the prompt cache (`input` when not given).
    #[serde(default, deserialize_with = "some_price")]
    pub cache_read: Option<f64>,
    /// Per million input tokens written to the prompt cache (`input` when not given).
    #[serde(default, deserialize_with = "some_price")]
    pub cache_write: Option<f64>,
}

impl Pricing {
    /// What `usage` cost, in dollars (`input_tokens` the whole prompt, see the module doc);
    /// `None` unless both counts were reported.
    pub fn cost(&self, usage: &Usage) -> Option<f64> {
        let (prompt, output) = (usage.input_tokens?, usage.output_tokens?);
        let reads = usage.cached_input_tokens.unwrap_or(0);
        let writes = usage.cache_creation_input_tokens.unwrap_or(0);
        let fresh = prompt.saturating_sub(reads.saturating_add(writes));
        let dollars = fresh as f64 * self.input
            + reads as f64 * self.cache_read.unwrap_or(self.input)
            + writes as f64 * self.cache_write.unwrap_or(self.input)
            + output as f64 * self.output;
        Some(dollars / 1_000_000.0)
    }
}

/// An optional price (see [`price`]).
fn some_price<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    price(deserializer).map(Some)
}

/// A price: a finite, non-negative number.
fn price<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    let price = f64::deserialize(deserializer)?;
    match price.is_finite() && price >= 0.0 {
        true => Ok(price),
        false => Err(serde::de::Error::custom(format!(
            "{price} is no price: give dollars per million tokens, 0 or more"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: Option<u64>, output: Option<u64>) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    fn cached(input: u64, reads: u64, writes: u64, output: u64) -> Usage {
        Usage {
            cached_input_tokens: Some(reads),
            cache_creation_input_tokens: Some(writes),
            ..usage(Some(input), Some(output))
        }
    }

    #[test]
    fn cost_is_tokens_times_the_price_per_million() {
        let sonnet = Pricing {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write: Some(3.75),
        };
        let flat = Pricing {
            cache_read: None,
            cache_write: None,
            ..sonnet
        };
        // (prices, usage, cost)
        let cases = [
            // 1000 × $3/M + 500 × $15/M = $0.003 + $0.0075.
            (&flat, usage(Some(1000), Some(500)), Some(0.0105)),
            (&flat, usage(Some(1_000_000), Some(0)), Some(3.0)),
            (&flat, usage(Some(0), Some(2_000_000)), Some(30.0)),
            (&flat, usage(Some(1000), None), None),
            (&flat, usage(None, Some(500)), None),
            // A 10,000-token prompt: 8,000 read from the cache, 1,000 written, 1,000 fresh;
            // 1000 × $3/M + 8000 × $0.30/M + 1000 × $3.75/M + 100 × $15/M.
            (
                &sonnet,
                cached(10_000, 8_000, 1_000, 100),
                Some(0.003 + 0.0024 + 0.00375 + 0.0015),
            ),
            // Without cache prices every prompt token costs `input`.
            (&flat, cached(10_000, 8_000, 1_000, 0), Some(0.03)),
            // More cache than prompt: nothing fresh, and never a negative count.
            (&sonnet, cached(500, 800, 0, 0), Some(800.0 * 0.3 / 1e6)),
        ];
        for (prices, usage, want) in cases {
            let got = prices.cost(&usage);
            match (got, want) {
                (Some(got), Some(want)) => assert!((got - want).abs() < 1e-12, "{got} {want}"),
                (got, want) => assert_eq!(got, want, "{usage:?}"),
            }
        }
    }

    #[test]
    fn prices_are_read_from_toml_and_bad_ones_refused() {
        let read = |text: &str| toml::from_str::<Pricing>(text).map_err(|e| e.to_string());
        assert_eq!(
            read("input = 3.0\noutput = 15"),
            Ok(Pricing {
                input: 3.0,
                output: 15.0,
                cache_read: None,
                cache_write: None,
            })
        );
        assert_eq!(
            read("input = 3.0\noutput = 15\ncache_read = 0.3\ncache_write = 3.75"),
            Ok(Pricing {
                input: 3.0,
                output: 15.0,
                cache_read: Some(0.3),
                cache_write: Some(3.75),
            })
        );
        for (bad, why) in [
            ("input = -1.0\noutput = 15.0", "no price"),
            ("input = 1.0\noutput = 1.0\ncache_read = -0.1", "no price"),
            ("input = 3.0", "missing field `output`"),
            (
                "input = 3.0\noutput = 1.0\ncached = 0.3",
                "unknown field `cached`",
            ),
        ] {
            let error = read(bad).expect_err(bad);
            assert!(error.contains(why), "{bad}: {error}");
        }
    }
}
