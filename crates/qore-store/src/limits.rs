//! Rate limits: the rule that decides one request against its key's window, the same for
//! both backends (each reads the window and counts an admitted request atomically, in its
//! own way: `sqlite::limits`, `postgres::limits`).
//!
//! Promises ([`Window::decide`]):
//! - `rpm` refuses the request that would pass it, with the milliseconds until the oldest
//!   counted request leaves the window;
//! - `tpm` refuses when the window's recorded tokens plus the estimate would pass it, with the
//!   milliseconds until enough tokens leave; with no tokens in the window any one request is
//!   admitted (else one larger than the limit could never pass);
//! - the budget refuses once the key's lifetime tokens (its usage rows) reach it, or when the
//!   estimate would pass it;
//! - the window is the last [`WINDOW_MS`] milliseconds: events older than that count no more.
//!
//! What the window holds: per key, one row per whole second ([`bucket_end`]), the requests
//! admitted and the tokens recorded in it, so a hot key's window is at most 61 rows whatever
//! its rate (an event log grew with the rate, and reading it under the key's lock made every
//! admission of a busy key wait for the read of thousands of rows). A second counts until
//! [`WINDOW_MS`] after its end: an event stays counted 60 to 61 seconds, never less, so `rpm`
//! still holds in every 60 seconds and a refusal's wait is at most a second longer than an
//! event log's.

use crate::interface::{LimitCheck, LimitVerdict};

/// The window of `rpm` and `tpm`, in milliseconds.
pub(crate) const WINDOW_MS: i64 = 60_000;

/// The end (ms since the epoch) of the whole second holding `now`: the `at` of the window
/// row an event at `now` is added to.
pub(crate) fn bucket_end(now: i64) -> i64 {
    (now.div_euclid(1000) + 1) * 1000
}

/// One key's window as read in the admitting transaction: the same rule for both backends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    /// Milliseconds since the epoch, by the database's clock.
    pub now: i64,
    /// Requests counted in the window.
    pub requests: u64,
    /// The end of the oldest second holding a counted request.
    pub oldest_request: Option<i64>,
    /// (end of the second, tokens) recorded in the window, oldest first.
    pub tokens: Vec<(i64, u64)>,
    /// The key's lifetime tokens, when it has a budget.
    pub spent: Option<u64>,
}

impl Window {
    /// The verdict on `check`, by the rules in the module doc.
    pub(crate) fn decide(&self, check: &LimitCheck) -> LimitVerdict {
        let until = |at: i64| u64::try_from(at + WINDOW_MS - self.now).unwrap_or(0).max(1);
        if let (Some(budget), Some(spent)) = (check.budget_tokens, self.spent) {
            if spent >= budget || spent.saturating_add(check.estimate) > budget {
                return LimitVerdict::Budget { spent };
            }
        }
        if let Some(rpm) = check.rpm {
            if self.requests >= rpm {
                let oldest = self.oldest_request.unwrap_or(self.now);
                return LimitVerdict::Requests {
                    retry_after_ms: until(oldest),
                };
            }
        }
        let in_window: u64 = self.tokens.iter().map(|(_, n)| n).sum();
        if let Some(tpm) = check.tpm {
            if in_window > 0 && in_window.saturating_add(check.estimate) > tpm {
                let mut left = in_window;
                let mut free_at = self.now;
                for (at, n) in &self.tokens {
                    left = left.saturating_sub(*n);
                    free_at = *at;
                    if left == 0 || left.saturating_add(check.estimate) <= tpm {
                        break;
                    }
                }
                return LimitVerdict::Tokens {
                    retry_after_ms: until(free_at),
                };
            }
        }
        LimitVerdict::Admitted {
            requests_left: check.rpm.map(|rpm| rpm.saturating_sub(self.requests + 1)),
            tokens_left: check.tpm.map(|tpm| tpm.saturating_sub(in_window)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(rpm: Option<u64>, tpm: Option<u64>, budget: Option<u64>, estimate: u64) -> LimitCheck {
        LimitCheck {
            key_id: "k".into(),
            rpm,
            tpm,
            budget_tokens: budget,
            estimate,
        }
    }

    #[test]
    fn an_event_goes_to_the_end_of_its_second() {
        // (now, the end of its second)
        for (now, end) in [(0, 1_000), (999, 1_000), (1_000, 2_000), (61_500, 62_000)] {
            assert_eq!(bucket_end(now), end, "{now}");
        }
    }

    #[test]
    fn the_window_rule() {
        let window = |requests, oldest, tokens: Vec<(i64, u64)>, spent| Window {
            now: 100_000,
            requests,
            oldest_request: oldest,
            tokens,
            spent,
        };
        // (window, check, verdict)
        let cases = [
            (
                window(2, Some(50_000), vec![], None),
                check(Some(3), None, None, 0),
                LimitVerdict::Admitted {
                    requests_left: Some(0),
                    tokens_left: None,
                },
            ),
            (
                window(3, Some(50_000), vec![], None),
                check(Some(3), None, None, 0),
                LimitVerdict::Requests {
                    retry_after_ms: 10_000,
                },
            ),
            (
                window(0, None, vec![(45_000, 60), (70_000, 30)], None),
                check(None, Some(100), None, 20),
                LimitVerdict::Tokens {
                    retry_after_ms: 5_000,
                },
            ),
            (
                window(0, None, vec![], None),
                check(None, Some(100), None, 500),
                LimitVerdict::Admitted {
                    requests_left: None,
                    tokens_left: Some(100),
                },
            ),
            (
                window(0, None, vec![(90_000, 10)], None),
                check(None, Some(100), None, 20),
                LimitVerdict::Admitted {
                    requests_left: None,
                    tokens_left: Some(90),
                },
            ),
            (
                window(0, None, vec![], Some(1_000)),
                check(None, None, Some(1_000), 0),
                LimitVerdict::Budget { spent: 1_000 },
            ),
            (
                window(0, None, vec![], Some(900)),
                check(None, None, Some(1_000), 200),
                LimitVerdict::Budget { spent: 900 },
            ),
        ];
        for (i, (window, check, verdict)) in cases.into_iter().enumerate() {
            assert_eq!(window.decide(&check), verdict, "case {i}");
        }
    }
}
