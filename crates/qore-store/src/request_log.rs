//! `qore serve`'s request log: one row per request (who, which model and agent, how it ended,
//! tokens, cost, timings, the session and response it left), the query that pages through
//! it, and the usage sums the console shows; both backends store and answer them alike.
//!
//! Promises:
//! - a row's `id` is a lowercase ULID made from its start time ([`log_id`]), so ids sort by
//!   time and a page of rows newest first is "ids below the cursor, descending";
//! - a listing ([`crate::Store::request_log`]) never carries bodies (they may be large): only
//!   [`crate::Store::request_entry`] returns one row with them;
//! - a page holds at most [`MOST_PER_PAGE`] rows whatever the query asks (at least one);
//! - [`crate::Store::prune_request_log`] deletes rows that started before a time and says how
//!   many it deleted;
//! - [`UsageGroup`] sums are computed by the database (`GROUP BY`), over every stored row the
//!   filter keeps, never over a page of them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The most rows one page of the request log holds.
pub const MOST_PER_PAGE: u32 = 1000;

/// One request as the log keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestLogRow {
    /// A lowercase ULID of the start time ([`log_id`]).
    pub id: String,
    /// When the request started, milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// The key's id; `''` for none.
    pub key_id: String,
    /// The inbound API (`chat_completions`, `messages`, `responses`, `completions`, …).
    pub dialect: String,
    /// The model as the request named it.
    pub model: String,
    /// The agent that answered; `''` for none.
    pub agent: String,
    /// The upstream that answered (`provider/model`); `''` when none was reached.
    pub upstream: String,
    /// The HTTP status the caller got (499 when it went away first).
    pub status: u16,
    /// What went wrong (`rate_limited`, `upstream`, `cancelled`, …); `''` when nothing did.
    pub error_kind: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// What it cost in millionths of a dollar, when the profile has `[pricing]`.
    pub cost_micros: Option<i64>,
    /// Milliseconds to the first byte of the answer, when there was one.
    pub ttfb_ms: Option<u64>,
    pub duration_ms: u64,
    /// The stored session it wrote to; `''` for none.
    pub session_id: String,
    /// The reply's id (`chatcmpl-…`, `msg_…`, `resp_…`); `''` for none.
    pub response_id: String,
    /// The request body, only with `[serve] log_bodies` (cut to its cap).
    pub request_body: Option<String>,
    /// The answer's text, only with `[serve] log_bodies` (cut to its cap).
    pub response_body: Option<String>,
}

/// Which rows of the request log a listing wants (every filter optional).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogQuery {
    pub key_id: Option<String>,
    pub model: Option<String>,
    pub agent: Option<String>,
    /// Lowest status kept (e.g. 400 for failures only).
    pub status_min: Option<u16>,
    /// Highest status kept.
    pub status_max: Option<u16>,
    /// Rows that started at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Rows that started before this time (ms since the epoch).
    pub until_ms: Option<i64>,
    /// The cursor: rows whose id is below this one (the last id of the previous page).
    pub before: Option<String>,
    /// Rows per page (1 to [`MOST_PER_PAGE`]).
    pub limit: u32,
}

impl LogQuery {
    /// The page size the store uses: `limit` within 1 and [`MOST_PER_PAGE`].
    pub fn page_size(&self) -> u32 {
        self.limit.clamp(1, MOST_PER_PAGE)
    }
}

/// Which usage sums [`crate::Store::usage_sums`] gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageQuery {
    /// What the rows are grouped by (days in UTC).
    pub by: UsageGroup,
    /// Also split each group by the agent that answered (the agent in its field).
    pub by_agent: bool,
    /// Only this key's usage.
    pub key_id: Option<String>,
    /// From this UTC day (`YYYY-MM-DD`), included.
    pub since: Option<String>,
    /// To this UTC day, included.
    pub until: Option<String>,
}

impl UsageQuery {
    /// Everything, grouped by `by`.
    pub fn by(by: UsageGroup) -> UsageQuery {
        UsageQuery {
            by,
            by_agent: false,
            key_id: None,
            since: None,
            until: None,
        }
    }
}

/// What usage sums are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageGroup {
    /// One row: everything the filter keeps.
    Total,
    Day,
    Key,
    Model,
    Agent,
}

impl UsageGroup {
    /// The `usage` column grouped by (a fixed name, never caller text).
    pub(crate) fn column(self) -> Option<&'static str> {
        match self {
            UsageGroup::Total => None,
            UsageGroup::Day => Some("day"),
            UsageGroup::Key => Some("key_id"),
            UsageGroup::Model => Some("model"),
            UsageGroup::Agent => Some("agent"),
        }
    }

    /// The SQL of a grouped sum, split by agent too when `by_agent`; `{p}` stands for the
    /// backend's parameter marks in order key, since, until (`?1`… or `$1::text`…). Its
    /// columns: the grouped value, the agent (`''` unless split), then the four sums.
    pub(crate) fn sql(self, key: &str, since: &str, until: &str, by_agent: bool) -> String {
        let mut columns: Vec<&str> = self.column().into_iter().collect();
        if by_agent && self != UsageGroup::Agent {
            columns.push("agent");
        }
        let select = match self.column() {
            Some(column) => format!("CAST({column} AS TEXT)"),
            None => "CAST('' AS TEXT)".to_owned(),
        };
        let agent = match by_agent {
            true => "CAST(agent AS TEXT)",
            false => "CAST('' AS TEXT)",
        };
        let group = match columns.is_empty() {
            true => String::new(),
            false => format!("GROUP BY {list} ORDER BY {list}", list = columns.join(", ")),
        };
        format!(
            "SELECT {select}, {agent}, CAST(coalesce(sum(requests), 0) AS BIGINT),
                    CAST(coalesce(sum(errors), 0) AS BIGINT),
                    CAST(coalesce(sum(tokens_in), 0) AS BIGINT),
                    CAST(coalesce(sum(tokens_out), 0) AS BIGINT)
             FROM usage WHERE ({key} IS NULL OR key_id = {key})
                          AND ({since} IS NULL OR day >= {since})
                          AND ({until} IS NULL OR day <= {until})
             {group}"
        )
    }

    /// A summed row: the grouped value in its field, the agent when split by it, the other
    /// names `''`.
    pub(crate) fn row(self, value: String, agent: String, counts: [u64; 4]) -> crate::UsageRow {
        let mut row = crate::UsageRow {
            requests: counts[0],
            errors: counts[1],
            tokens_in: counts[2],
            tokens_out: counts[3],
            agent,
            ..Default::default()
        };
        match self {
            UsageGroup::Total => {}
            UsageGroup::Day => row.day = value,
            UsageGroup::Key => row.key_id = value,
            UsageGroup::Model => row.model = value,
            UsageGroup::Agent => row.agent = value,
        }
        row
    }
}

/// The id of a row that started at `at`: a lowercase ULID of that time.
pub fn log_id(at: SystemTime) -> String {
    ulid::Ulid::from_datetime(at).to_string().to_lowercase()
}

/// The smallest id of a row that started at `ms` (for a time bound on ids).
pub fn log_id_floor(ms: i64) -> String {
    let at = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    let millis = at
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    ulid::Ulid::from_parts(u64::try_from(millis).unwrap_or(u64::MAX), 0)
        .to_string()
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_start_time() {
        let at = |ms: u64| UNIX_EPOCH + Duration::from_millis(ms);
        let ids: Vec<String> = [1_000, 1_001, 2_000_000].map(|ms| log_id(at(ms))).into();
        assert!(ids[0] < ids[1] && ids[1] < ids[2], "{ids:?}");
        assert!(log_id_floor(1_001) <= ids[1] && log_id_floor(1_002) > ids[1]);
        assert_eq!(ids[0], ids[0].to_lowercase());
    }

    #[test]
    fn a_page_is_one_to_the_most_rows() {
        // (asked, given)
        for (asked, given) in [(0, 1), (1, 1), (50, 50), (1000, 1000), (5000, 1000)] {
            let query = LogQuery {
                limit: asked,
                ..Default::default()
            };
            assert_eq!(query.page_size(), given, "{asked}");
        }
    }
}
