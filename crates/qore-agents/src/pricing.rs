//! `[pricing]`: what an agent's model costs, in dollars per million tokens, and what a
//! turn's usage cost at those prices.
//!
//! Promises: `input` and `output` are both required, finite and non-negative (an unknown key
//! in the table is an error at its line, like any wrong field); the cost of a usage is
//! `input_tokens × input / 10⁶ + output_tokens × output / 10⁶`, counted as the provider
//! reported them, and there is none when the provider did not report both counts (a cost
//! from half the counts would be too low without saying so).

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
}

impl Pricing {
    /// What `usage` cost, in dollars; `None` unless both counts were reported.
    pub fn cost(&self, usage: &Usage) -> Option<f64> {
        let (input, output) = (usage.input_tokens?, usage.output_tokens?);
        Some((input as f64 * self.input + output as f64 * self.output) / 1_000_000.0)
    }
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

    #[test]
    fn cost_is_tokens_times_the_price_per_million() {
        let sonnet = Pricing {
            input: 3.0,
            output: 15.0,
        };
        let cases = [
            // 1000 × $3/M + 500 × $15/M = $0.003 + $0.0075.
            (usage(Some(1000), Some(500)), Some(0.0105)),
            (usage(Some(1_000_000), Some(0)), Some(3.0)),
            (usage(Some(0), Some(2_000_000)), Some(30.0)),
            (usage(Some(1000), None), None),
            (usage(None, Some(500)), None),
        ];
        for (usage, want) in cases {
            let got = sonnet.cost(&usage);
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
                output: 15.0
            })
        );
        for (bad, why) in [
            ("input = -1.0\noutput = 15.0", "no price"),
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
