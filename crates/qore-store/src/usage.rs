//! `qore serve`'s usage counters: requests, errors and tokens per UTC day, key, model and
//! agent.
//!
//! Promises:
//! - [`Db::record_usage`] adds a row's counts to the stored ones (one UPSERT, so writers
//!   in several processes add up and never lose each other's counts); a row with a new
//!   (day, key, model, agent) starts at its own counts;
//! - the day is the UTC date `YYYY-MM-DD` ([`utc_day`]); anything else is refused
//!   ([`StoreError::BadDay`]), so rows sort and compare by day as text;
//! - `''` stands for "no key" and "no agent" (the columns are part of the primary key, so
//!   never NULL);
//! - [`Db::tokens_used`] is a key's lifetime tokens, in and out, for budgets;
//! - every method is one plain SQL statement (`INSERT … ON CONFLICT … DO UPDATE` is standard
//!   in SQLite and PostgreSQL): the surface another backend implements.

use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::params;

use crate::keys::{from_sql_count, to_sql_count};
use crate::store::{millis, Db};
use crate::StoreError;

/// Add one row's counts to its stored row (`INSERT … ON CONFLICT … DO UPDATE`: standard in
/// SQLite and PostgreSQL).
pub(crate) const UPSERT: &str = "
INSERT INTO usage (day, key_id, model, agent, requests, errors, tokens_in, tokens_out)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
ON CONFLICT (day, key_id, model, agent) DO UPDATE SET
    requests = usage.requests + excluded.requests,
    errors = usage.errors + excluded.errors,
    tokens_in = usage.tokens_in + excluded.tokens_in,
    tokens_out = usage.tokens_out + excluded.tokens_out";

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

impl Db {
    /// Add each row's counts to the stored row of its (day, key, model, agent), in one
    /// transaction; a keyed row's tokens also enter its key's `tpm` window (`rate_events`).
    pub fn record_usage(&mut self, rows: &[UsageRow]) -> Result<(), StoreError> {
        for row in rows {
            check_day(&row.day)?;
        }
        let now = millis(SystemTime::now());
        let tx = self.conn.transaction()?;
        {
            let mut upsert = tx.prepare_cached(UPSERT)?;
            let mut window = tx.prepare_cached(
                "INSERT INTO rate_events (key_id, at, requests, tokens) VALUES (?1, ?2, 0, ?3)",
            )?;
            for row in rows {
                upsert.execute(params![
                    row.day,
                    row.key_id,
                    row.model,
                    row.agent,
                    to_sql_count(row.requests),
                    to_sql_count(row.errors),
                    to_sql_count(row.tokens_in),
                    to_sql_count(row.tokens_out)
                ])?;
                let tokens = row.tokens_in.saturating_add(row.tokens_out);
                if !row.key_id.is_empty() && tokens > 0 {
                    window.execute(params![row.key_id, now, to_sql_count(tokens)])?;
                }
            }
        }
        crate::limits::expire_all(&tx, now)?;
        tx.commit()?;
        Ok(())
    }

    /// The stored rows, of one key id (`''`: no key) when given, from the day `since` on
    /// when given; by key, model, agent, then day.
    pub fn usage(
        &self,
        key_id: Option<&str>,
        since: Option<&str>,
    ) -> Result<Vec<UsageRow>, StoreError> {
        if let Some(day) = since {
            check_day(day)?;
        }
        let mut query = self.conn.prepare(
            "SELECT day, key_id, model, agent, requests, errors, tokens_in, tokens_out
             FROM usage WHERE (?1 IS NULL OR key_id = ?1) AND (?2 IS NULL OR day >= ?2)
             ORDER BY key_id, model, agent, day",
        )?;
        let rows = query.query_map(params![key_id, since], |row| {
            Ok(UsageRow {
                day: row.get(0)?,
                key_id: row.get(1)?,
                model: row.get(2)?,
                agent: row.get(3)?,
                requests: from_sql_count(row.get(4)?),
                errors: from_sql_count(row.get(5)?),
                tokens_in: from_sql_count(row.get(6)?),
                tokens_out: from_sql_count(row.get(7)?),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every token, in and out, ever recorded for a key id.
    pub fn tokens_used(&self, key_id: &str) -> Result<u64, StoreError> {
        let used: i64 = self.conn.query_row(
            "SELECT coalesce(sum(tokens_in + tokens_out), 0) FROM usage WHERE key_id = ?1",
            [key_id],
            |row| row.get(0),
        )?;
        Ok(from_sql_count(used))
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

fn check_day(day: &str) -> Result<(), StoreError> {
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

    #[test]
    fn rows_add_up_per_day_key_model_and_agent() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Db::open(dir.path().join("q.db")).unwrap();
        let row = |day: &str, key: &str, tokens_in| UsageRow {
            day: day.into(),
            key_id: key.into(),
            model: "local/m".into(),
            agent: String::new(),
            requests: 1,
            errors: 0,
            tokens_in,
            tokens_out: 2,
        };
        store.record_usage(&[row("2025-01-01", "k1", 10)]).unwrap();
        store.record_usage(&[row("2025-01-01", "k1", 5)]).unwrap();
        store.record_usage(&[row("2025-01-02", "k1", 1)]).unwrap();
        store.record_usage(&[row("2025-01-02", "", 7)]).unwrap();
        let k1 = store.usage(Some("k1"), None).unwrap();
        assert_eq!(
            (k1.iter())
                .map(|r| (r.day.as_str(), r.requests, r.tokens_in, r.tokens_out))
                .collect::<Vec<_>>(),
            [("2025-01-01", 2, 15, 4), ("2025-01-02", 1, 1, 2)]
        );
        assert_eq!(store.usage(None, Some("2025-01-02")).unwrap().len(), 2);
        assert_eq!(store.usage(None, None).unwrap().len(), 3);
        assert_eq!(store.tokens_used("k1").unwrap(), 22);
        assert_eq!(store.tokens_used("none").unwrap(), 0);
        assert!(matches!(
            store.usage(None, Some("yesterday")),
            Err(StoreError::BadDay(_))
        ));
        assert!(matches!(
            store.record_usage(&[row("1/1/2025", "k1", 1)]),
            Err(StoreError::BadDay(_))
        ));
    }
}
