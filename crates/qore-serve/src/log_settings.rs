//! How the request log is kept: `[serve] log_bodies`, `log_body_cap` and
//! `log_retention_days`.
//!
//! Promises: bodies are kept only with `log_bodies = true`, each cut to `log_body_cap` bytes
//! on a character boundary; rows are kept `log_retention_days` days (0: every row). Reads no
//! other module of the crate (the settings and the request log both depend on it).

use std::time::Duration;

/// Days a request log row is kept unless `[serve] log_retention_days` says otherwise.
pub const DEFAULT_RETENTION_DAYS: u64 = 30;
/// The most bytes kept of each body with `log_bodies` unless `log_body_cap` says otherwise.
pub const DEFAULT_BODY_CAP: usize = 64 * 1024;
/// How often old rows are pruned.
pub const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// How the request log is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSettings {
    pub bodies: bool,
    pub body_cap: usize,
    /// Days rows are kept; 0 keeps every row.
    pub retention_days: u64,
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            bodies: false,
            body_cap: DEFAULT_BODY_CAP,
            retention_days: DEFAULT_RETENTION_DAYS,
        }
    }
}

impl LogSettings {
    /// `[serve] log_bodies`, `log_body_cap` and `log_retention_days` over the defaults.
    pub fn of(bodies: Option<bool>, body_cap: Option<usize>, days: Option<u64>) -> LogSettings {
        let default = LogSettings::default();
        LogSettings {
            bodies: bodies.unwrap_or(default.bodies),
            body_cap: body_cap.unwrap_or(default.body_cap),
            retention_days: days.unwrap_or(default.retention_days),
        }
    }

    /// `text` when bodies are kept, cut to the cap.
    pub fn body(&self, text: impl FnOnce() -> String) -> Option<String> {
        self.bodies.then(|| cut(text(), self.body_cap))
    }
}

/// `text` cut to at most `cap` bytes on a character boundary.
fn cut(mut text: String, cap: usize) -> String {
    if text.len() > cap {
        let mut end = cap;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_kept_only_when_asked_and_cut_on_a_character() {
        let on = |cap| LogSettings {
            bodies: true,
            body_cap: cap,
            ..LogSettings::default()
        };
        // (settings, text, kept)
        let cases = [
            (LogSettings::default(), "hello", None),
            (on(10), "hello", Some("hello")),
            (on(3), "hello", Some("hel")),
            (on(2), "été", Some("é")),
            (on(0), "x", Some("")),
        ];
        for (settings, text, kept) in cases {
            let got = settings.body(|| text.to_owned());
            assert_eq!(got.as_deref(), kept, "{settings:?} {text}");
        }
    }
}
