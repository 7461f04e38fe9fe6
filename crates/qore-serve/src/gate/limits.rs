//! A key's limits in memory: the requests and tokens of its last 60 seconds, and its
//! lifetime tokens.
//!
//! Promises:
//! - `rpm` counts the requests admitted in the sliding 60 seconds before now; the one that
//!   would pass it is refused with the seconds until the oldest leaves the window;
//! - `tpm` counts the tokens recorded (in and out, as providers report them) in the sliding 60
//!   seconds; a request is refused when those tokens and its estimate would pass the limit,
//!   with the seconds until enough of them leave; with an empty window any one request is
//!   admitted (else one larger than the limit could never pass). Requests still running are
//!   not counted until they report, so a burst of concurrent requests may pass `tpm` once;
//! - `budget_tokens` (refused once reached, or when the request's estimate would pass it) is
//!   checked against the key's lifetime tokens: the store's sum, reread
//!   at most every [`SPENT_REREAD`], plus what this process recorded since; a spent budget
//!   never frees up, so its refusal carries no `Retry-After`.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::{ErrorKind, ServeError};

/// The window of `rpm` and `tpm`.
pub const WINDOW: Duration = Duration::from_secs(60);

/// How old the stored lifetime tokens may be before a budget check rereads them.
pub const SPENT_REREAD: Duration = Duration::from_secs(30);

/// One key's recent requests and tokens.
#[derive(Debug, Default)]
pub(crate) struct Meter {
    requests: VecDeque<Instant>,
    tokens: VecDeque<(Instant, u64)>,
    tokens_sum: u64,
    /// Lifetime tokens and when they were read from the store.
    spent: Option<(u64, Instant)>,
}

/// What a request may still do in the current window (for rate-limit headers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Admission {
    /// The key's `rpm`, and the requests left in the window after this one.
    pub requests: Option<(u64, u64)>,
    /// The key's `tpm`, and the tokens left in the window before this one.
    pub tokens: Option<(u64, u64)>,
}

impl Meter {
    fn expire(&mut self, now: Instant) {
        let gone = |at: Instant| now.saturating_duration_since(at) >= WINDOW;
        while self.requests.front().is_some_and(|at| gone(*at)) {
            self.requests.pop_front();
        }
        while let Some(&(at, n)) = self.tokens.front() {
            if !gone(at) {
                break;
            }
            self.tokens_sum = self.tokens_sum.saturating_sub(n);
            self.tokens.pop_front();
        }
    }

    /// Admit one request estimated at `estimate` tokens, or say how long to wait.
    pub fn admit(
        &mut self,
        rpm: Option<u64>,
        tpm: Option<u64>,
        estimate: u64,
        now: Instant,
    ) -> Result<Admission, ServeError> {
        self.expire(now);
        let wait_for = |at: Instant| {
            let left = WINDOW.saturating_sub(now.saturating_duration_since(at));
            left.as_secs() + u64::from(left.subsec_nanos() > 0)
        };
        if let Some(rpm) = rpm {
            if self.requests.len() as u64 >= rpm {
                let retry = (self.requests.front()).map_or(1, |at| wait_for(*at)).max(1);
                let error = ServeError::new(
                    ErrorKind::RateLimit,
                    format!("this key's limit of {rpm} requests per minute is reached"),
                );
                return Err(error.with_retry_after(retry));
            }
        }
        if let Some(tpm) = tpm {
            let used = self.tokens_sum;
            if used > 0 && used.saturating_add(estimate) > tpm {
                // Wait until enough of the window's tokens leave it (all of them at most).
                let need = used.saturating_add(estimate).saturating_sub(tpm).min(used);
                let mut freed = 0u64;
                let mut retry = 1;
                for &(at, n) in &self.tokens {
                    freed = freed.saturating_add(n);
                    retry = wait_for(at);
                    if freed >= need {
                        break;
                    }
                }
                let error = ServeError::new(
                    ErrorKind::RateLimit,
                    format!(
                        "this key's limit of {tpm} tokens per minute is reached ({used} used, \
                         this request about {estimate})"
                    ),
                );
                return Err(error.with_retry_after(retry.max(1)));
            }
        }
        self.requests.push_back(now);
        let count = self.requests.len() as u64;
        Ok(Admission {
            requests: rpm.map(|rpm| (rpm, rpm.saturating_sub(count))),
            tokens: tpm.map(|tpm| (tpm, tpm.saturating_sub(self.tokens_sum))),
        })
    }

    /// Count `tokens` reported now (window and lifetime).
    pub fn add_tokens(&mut self, tokens: u64, now: Instant) {
        if tokens == 0 {
            return;
        }
        self.expire(now);
        self.tokens.push_back((now, tokens));
        self.tokens_sum = self.tokens_sum.saturating_add(tokens);
        if let Some((spent, _)) = &mut self.spent {
            *spent = spent.saturating_add(tokens);
        }
    }

    /// The lifetime tokens when they were read less than [`SPENT_REREAD`] ago.
    pub fn spent(&self, now: Instant) -> Option<u64> {
        (self.spent)
            .filter(|(_, read)| now.saturating_duration_since(*read) < SPENT_REREAD)
            .map(|(spent, _)| spent)
    }

    /// Take the store's lifetime tokens (never below what this process counted).
    pub fn set_spent(&mut self, stored: u64, now: Instant) -> u64 {
        let spent = self.spent.map_or(stored, |(ours, _)| ours.max(stored));
        self.spent = Some((spent, now));
        spent
    }
}

/// The refusal of a request that would pass a key's lifetime budget.
pub(crate) fn over_budget(budget: u64, spent: u64, estimate: u64) -> Option<ServeError> {
    (spent >= budget || spent.saturating_add(estimate) > budget).then(|| {
        ServeError::new(
            ErrorKind::RateLimit,
            format!(
                "this key's budget of {budget} tokens is spent ({spent} used, this request \
                 about {estimate})"
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpm_slides_over_60_seconds() {
        let start = Instant::now();
        let mut meter = Meter::default();
        // (seconds after start, admitted, retry_after when refused)
        let steps = [
            (0, true, None),
            (10, true, None),
            (20, true, None),
            (30, false, Some(30)),
            (59, false, Some(1)),
            (60, true, None),
            (61, false, Some(9)),
        ];
        for (second, admitted, retry) in steps {
            let now = start + Duration::from_secs(second);
            let result = meter.admit(Some(3), None, 0, now);
            assert_eq!(result.is_ok(), admitted, "at {second}s");
            if let Err(e) = result {
                assert_eq!((e.status, e.retry_after), (429, retry), "at {second}s");
            }
        }
    }

    #[test]
    fn tpm_counts_reported_tokens_and_the_estimate() {
        let start = Instant::now();
        let at = |s| start + Duration::from_secs(s);
        let mut meter = Meter::default();
        // An empty window admits even a request over the limit.
        assert!(meter.admit(None, Some(100), 500, at(0)).is_ok());
        meter.add_tokens(60, at(0));
        meter.add_tokens(30, at(20));
        let ok = meter.admit(None, Some(100), 10, at(21)).unwrap();
        assert_eq!(ok.tokens, Some((100, 10)));
        let refused = meter.admit(None, Some(100), 11, at(21)).unwrap_err();
        assert_eq!(refused.retry_after, Some(39));
        // 70 tokens must leave: both reports.
        let refused = meter.admit(None, Some(100), 80, at(21)).unwrap_err();
        assert_eq!(refused.retry_after, Some(59));
        assert!(meter.admit(None, Some(100), 50, at(60)).is_ok());
    }

    #[test]
    fn the_budget_counts_stored_and_recorded_tokens() {
        let now = Instant::now();
        let mut meter = Meter::default();
        assert_eq!(meter.spent(now), None);
        assert_eq!(meter.set_spent(90, now), 90);
        meter.add_tokens(5, now);
        assert_eq!(meter.spent(now), Some(95));
        assert_eq!(meter.spent(now + SPENT_REREAD), None);
        // The store had not seen our 5 yet: ours wins.
        assert_eq!(meter.set_spent(92, now), 95);
        // (budget, spent, estimate, refused)
        for (budget, spent, estimate, refused) in [
            (100, 95, 5, false),
            (100, 95, 6, true),
            (100, 100, 0, true),
            (100, 99, 0, false),
            (100, 101, 0, true),
        ] {
            let error = over_budget(budget, spent, estimate);
            assert_eq!(error.is_some(), refused, "{budget} {spent} {estimate}");
            if let Some(e) = error {
                assert_eq!((e.status, e.retry_after), (429, None));
            }
        }
    }
}
