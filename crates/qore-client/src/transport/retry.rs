//! When and how long to wait before sending a request again.
//!
//! Promises:
//! - only answers that say "try later" are retried: HTTP 429, 500, 502, 503, 504 and 529
//!   (Anthropic's overload), and transport failures before the response head; the response
//!   stream adds the rule that nothing is retried once an event has reached the consumer;
//! - the wait is the server's own when it gives one (`retry-after-ms`, `retry-after` in
//!   seconds or as an HTTP date, or a codec-read hint such as Gemini's `RetryInfo`), else
//!   exponential backoff with full jitter between half and all of the step;
//! - a server asking for a longer wait than [`RetryPolicy::max_delay`] is not retried: the
//!   caller gets the error at once instead of a silent long stall;
//! - attempts are bounded by [`RetryPolicy::max_attempts`] (the first one included).

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// How a client retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included; 1 disables retries.
    pub max_attempts: u32,
    /// The backoff step before the second attempt; doubled for each one after.
    pub initial_delay: Duration,
    /// The longest wait: backoff steps are capped here, and a server asking for longer is
    /// not retried.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The wait before attempt `attempt + 1` (after `attempt` failed ones), or `None` when
    /// no attempt is left or the server's wait is longer than allowed.
    pub fn delay(&self, attempt: u32, server_wait: Option<Duration>) -> Option<Duration> {
        if attempt >= self.max_attempts {
            return None;
        }
        if let Some(wait) = server_wait {
            return (wait <= self.max_delay).then_some(wait);
        }
        let step = self
            .initial_delay
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
            .min(self.max_delay);
        let half = step / 2;
        Some(half + half.mul_f64(fastrand::f64()))
    }
}

/// Whether an HTTP status says "try again later".
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504 | 529)
}

/// The wait a response asks for: `retry-after-ms`, else `retry-after` (seconds or HTTP date).
pub fn server_wait(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = header("retry-after")?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_grows_is_jittered_capped_and_bounded() {
        let policy = RetryPolicy {
            max_attempts: 6,
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
        };
        for _ in 0..50 {
            let first = policy.delay(1, None).unwrap();
            assert!((Duration::from_millis(50)..=Duration::from_millis(100)).contains(&first));
            let third = policy.delay(3, None).unwrap();
            assert!((Duration::from_millis(200)..=Duration::from_millis(400)).contains(&third));
            let fifth = policy.delay(5, None).unwrap();
            assert!(fifth <= Duration::from_millis(500), "{fifth:?}");
        }
        assert_eq!(policy.delay(6, None), None);
        assert_eq!(RetryPolicy::none().delay(1, None), None);
    }

    #[test]
    fn the_servers_wait_wins_unless_it_is_too_long() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(2))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(policy.delay(1, Some(Duration::from_secs(3600))), None);
    }

    #[test]
    fn reads_every_retry_after_form() {
        let mut headers = HeaderMap::new();
        assert_eq!(server_wait(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(server_wait(&headers), Some(Duration::from_secs(7)));
        headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(server_wait(&headers), Some(Duration::from_millis(1500)));
        headers.remove("retry-after-ms");
        let later = SystemTime::now() + Duration::from_secs(120);
        let date = httpdate::fmt_http_date(later);
        headers.insert("retry-after", HeaderValue::from_str(&date).unwrap());
        let wait = server_wait(&headers).unwrap();
        assert!(wait > Duration::from_secs(100) && wait <= Duration::from_secs(120));
        headers.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(server_wait(&headers), None);
    }

    #[test]
    fn only_try_later_statuses_are_retryable() {
        for status in [429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(status));
        }
        for status in [400, 401, 403, 404, 413, 422, 501] {
            assert!(!is_retryable_status(status));
        }
    }
}
