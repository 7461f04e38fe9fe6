//! `qore serve`'s usage counters: requests, errors and tokens per UTC day, key, model and
//! agent; the row both backends store, and what a day is.
//!
//! Promises:
//! - recording a row adds its counts to the stored ones, so writers in several processes add
//!   up and never lose each other's counts; a row with a new (day, key, model, agent) starts
//!   at its own counts;
//! - the day is the UTC date `YYYY-MM-DD` ([`utc_day`]); anything else is refused
//!   ([`StoreError::BadDay`], [`check_day`]), so rows sort and compare by day as text;
//! - `''` stands for "no key" and "no agent" (the columns are part of the primary key, so
//!   never NULL);
//! - a key's lifetime tokens, in and out, are the sum of its rows, for budgets.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::StoreError;

/// One (day, key, model, agent) and its counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct UsageRow {
    /// UTC date, `YYYY-MM-DD`.
    pub day: String,
    /// The key's id; `''` for requests without a key.
    pub key_id: String,
    /// The model as the request named it (an agent's name or `provider/model`).
    pub model: String,
    /// The agent that answered; `''` for none.
    pub agent: String,
    pub requests: u64,
    /// Requests that failed (counted in `requests` too).
    pub errors: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
}

impl UsageRow {
    /// Add another row's counts to this one's (saturating).
    pub fn add(&mut self, other: &UsageRow) {
        self.requests = self.requests.saturating_add(other.requests);
        self.errors = self.errors.saturating_add(other.errors);
        self.tokens_in = self.tokens_in.saturating_add(other.tokens_in);
        self.tokens_out = self.tokens_out.saturating_add(other.tokens_out);
    }
}

/// The UTC date of `at` as `YYYY-MM-DD` (1970-01-01 for a time before the epoch).
pub fn utc_day(at: SystemTime) -> String {
    let seconds = at.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let days = i64::try_from(seconds / 86_400).unwrap_or(i64::MAX / 2);
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Whether `text` is a date `YYYY-MM-DD` (month 01–12, day 01–31).
pub fn is_day(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !digits(0..4) {
        return false;
    }
    if !digits(5..7) || !digits(8..10) {
        return false;
    }
    let number = |i: usize| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0');
    (1..=12).contains(&number(5)) && (1..=31).contains(&number(8))
}

/// `day` when it is a day ([`is_day`]), else [`StoreError::BadDay`].
pub(crate) fn check_day(day: &str) -> Result<(), StoreError> {
    if is_day(day) {
        Ok(())
    } else {
        Err(StoreError::BadDay(day.to_owned()))
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn days_are_utc_dates() {
        // (seconds since the epoch, date)
        let cases = [
            (0, "1970-01-01"),
            (86_399, "1970-01-01"),
            (86_400, "1970-01-02"),
            (951_782_400, "2000-02-29"),
            (1_709_164_800, "2024-02-29"),
            (1_735_689_599, "2024-12-31"),
            (1_735_689_600, "2025-01-01"),
        ];
        for (seconds, date) in cases {
            assert_eq!(utc_day(UNIX_EPOCH + Duration::from_secs(seconds)), date);
            assert!(is_day(date), "{date}");
        }
        for bad in [
            "",
            "2025-1-01",
            "2025-13-01",
            "2025-01-00",
            "2025/01/01",
            "２０２５-01-01",
        ] {
            assert!(!is_day(bad), "{bad}");
        }
    }
}
