//! A key's limits, decided by the store: what to ask it ([`check_of`]) and how its verdict
//! reaches the caller ([`answer`]).
//!
//! Promises:
//! - a key without `rpm`, `tpm` or `budget_tokens` is never asked about ([`check_of`] is
//!   `None`): such requests do not touch the store;
//! - a key with limits is decided by [`qore_store::Store::admit`], one atomic step in the
//!   database, so every process sharing the store counts the same window: with `rpm = 10`
//!   exactly 10 requests are admitted in any 60 seconds, wherever they arrive;
//! - a refusal is a 429 naming the limit; `rpm` and `tpm` refusals carry `Retry-After`, the
//!   store's wait rounded up to whole seconds (at least 1); a spent budget never frees up, so
//!   its refusal carries none;
//! - an admitted request carries the requests and tokens left ([`Admission`]), for the
//!   `x-ratelimit-*` headers.

use qore_store::{KeyRecord, LimitCheck, LimitVerdict};

use crate::{ErrorKind, ServeError};

/// What a request may still do in the current window (for rate-limit headers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Admission {
    /// The key's `rpm`, and the requests left in the window after this one.
    pub requests: Option<(u64, u64)>,
    /// The key's `tpm`, and the tokens left in the window before this one.
    pub tokens: Option<(u64, u64)>,
}

/// What the store is asked for one request of `key` estimated at `estimate` tokens; `None`
/// when the key has no limit.
pub(crate) fn check_of(key: &KeyRecord, estimate: u64) -> Option<LimitCheck> {
    if key.rpm.is_none() && key.tpm.is_none() && key.budget_tokens.is_none() {
        return None;
    }
    Some(LimitCheck {
        key_id: key.id.clone(),
        rpm: key.rpm,
        tpm: key.tpm,
        budget_tokens: key.budget_tokens,
        estimate,
    })
}

/// The store's verdict on `check` as the caller sees it; `estimate` is the request's own
/// (the check's may include usage not written yet).
pub(crate) fn answer(
    check: &LimitCheck,
    verdict: LimitVerdict,
    estimate: u64,
) -> Result<Admission, ServeError> {
    let seconds = |ms: u64| ms.div_ceil(1000).max(1);
    match verdict {
        LimitVerdict::Admitted {
            requests_left,
            tokens_left,
        } => Ok(Admission {
            requests: (check.rpm).map(|rpm| (rpm, requests_left.unwrap_or(0))),
            tokens: (check.tpm).map(|tpm| (tpm, tokens_left.unwrap_or(0))),
        }),
        LimitVerdict::Requests { retry_after_ms } => {
            let rpm = check.rpm.unwrap_or_default();
            let error = ServeError::new(
                ErrorKind::RateLimit,
                format!("this key's limit of {rpm} requests per minute is reached"),
            );
            Err(error.with_retry_after(seconds(retry_after_ms)))
        }
        LimitVerdict::Tokens { retry_after_ms } => {
            let tpm = check.tpm.unwrap_or_default();
            let error = ServeError::new(
                ErrorKind::RateLimit,
                format!(
                    "this key's limit of {tpm} tokens per minute is reached (this request \
                     about {estimate})"
                ),
            );
            Err(error.with_retry_after(seconds(retry_after_ms)))
        }
        LimitVerdict::Budget { spent } => {
            let budget = check.budget_tokens.unwrap_or_default();
            Err(ServeError::new(
                ErrorKind::RateLimit,
                format!(
                    "this key's budget of {budget} tokens is spent ({spent} used, this request \
                     about {estimate})"
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(rpm: Option<u64>, tpm: Option<u64>, budget: Option<u64>) -> KeyRecord {
        KeyRecord {
            id: "k1".into(),
            name: "k".into(),
            hash: "h".into(),
            models: Vec::new(),
            rpm,
            tpm,
            budget_tokens: budget,
            created_at: 0,
            revoked_at: None,
        }
    }

    #[test]
    fn only_a_key_with_limits_asks_the_store() {
        // (rpm, tpm, budget, asks)
        let cases = [
            (None, None, None, false),
            (Some(3), None, None, true),
            (None, Some(100), None, true),
            (None, None, Some(1000), true),
        ];
        for (rpm, tpm, budget, asks) in cases {
            let check = check_of(&key(rpm, tpm, budget), 7);
            assert_eq!(check.is_some(), asks, "{rpm:?} {tpm:?} {budget:?}");
            if let Some(check) = check {
                assert_eq!(
                    (check.rpm, check.tpm, check.budget_tokens),
                    (rpm, tpm, budget)
                );
                assert_eq!((check.key_id.as_str(), check.estimate), ("k1", 7));
            }
        }
    }

    #[test]
    fn verdicts_become_admissions_or_429s() {
        let check = check_of(&key(Some(10), Some(100), Some(1000)), 5).unwrap();
        // (verdict, admission, or (retry_after, words))
        type Expected = Result<Admission, (Option<u64>, &'static str)>;
        let cases: &[(LimitVerdict, Expected)] = &[
            (
                LimitVerdict::Admitted {
                    requests_left: Some(9),
                    tokens_left: Some(95),
                },
                Ok(Admission {
                    requests: Some((10, 9)),
                    tokens: Some((100, 95)),
                }),
            ),
            (
                LimitVerdict::Requests {
                    retry_after_ms: 59_001,
                },
                Err((Some(60), "10 requests per minute")),
            ),
            (
                LimitVerdict::Requests { retry_after_ms: 0 },
                Err((Some(1), "10 requests per minute")),
            ),
            (
                LimitVerdict::Tokens {
                    retry_after_ms: 1_500,
                },
                Err((Some(2), "100 tokens per minute")),
            ),
            (
                LimitVerdict::Budget { spent: 1000 },
                Err((None, "budget of 1000 tokens is spent (1000 used")),
            ),
        ];
        for (verdict, expected) in cases {
            match (answer(&check, *verdict, check.estimate), expected) {
                (Ok(admission), Ok(wanted)) => assert_eq!(admission, *wanted),
                (Err(e), Err((retry, words))) => {
                    assert_eq!((e.kind, e.status), (ErrorKind::RateLimit, 429));
                    assert_eq!(e.retry_after, *retry, "{verdict:?}");
                    assert!(e.message.contains(words), "{verdict:?}: {}", e.message);
                }
                (got, _) => panic!("{verdict:?}: {got:?}"),
            }
        }
    }
}
