//! The connection cap and accept errors.
//!
//! - At start the soft `RLIMIT_NOFILE` is raised to the hard one. The cap, unless set, is
//!   `clamp((soft - reserve) / 2, 1, 4096)` with `reserve = min(256, soft / 2)`: each
//!   client connection may need a second descriptor for its upstream, and the reserve keeps
//!   room for the store, the log and the listener (soft 1024 → 384; 256 → 64; 65536 → 4096).
//! - An accept error never ends the loop and never spins it: a connection reset or aborted
//!   before it was accepted is skipped; running out of descriptors or memory (`EMFILE`,
//!   `ENFILE`, `ENOBUFS`, `ENOMEM`) or anything else is counted, logged at most once per
//!   [`LOG_EVERY`] (with how many were not logged), and followed by a pause of [`PAUSE`].

use std::time::{Duration, Instant};

use super::counts::ConnectionCounts;
use crate::config::DEFAULT_MAX_CONNECTIONS_CEILING;

/// The pause after an accept error that is not the client's.
pub const PAUSE: Duration = Duration::from_secs(1);
/// At most one accept error logged per this long.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// The cap for a soft descriptor limit of `soft`.
pub fn cap_for(soft: u64) -> usize {
    let reserve = (soft / 2).min(256);
    let cap = (soft.saturating_sub(reserve) / 2).clamp(1, DEFAULT_MAX_CONNECTIONS_CEILING as u64);
    usize::try_from(cap).unwrap_or(1)
}

/// Raise the soft descriptor limit to the hard one; the cap it allows.
pub fn descriptor_cap() -> usize {
    #[cfg(unix)]
    {
        let soft = match rlimit::increase_nofile_limit(u64::MAX) {
            Ok(soft) => soft,
            Err(err) => {
                tracing::warn!("cannot raise the open file limit: {err}");
                rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _)| soft)
            }
        };
        cap_for(soft)
    }
    #[cfg(not(unix))]
    {
        DEFAULT_MAX_CONNECTIONS_CEILING
    }
}

/// What an accept error means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The client's: reset or aborted before it was accepted. Go on.
    Client,
    /// No descriptor or buffer left.
    Descriptors,
    Other,
}

pub fn classify(error: &std::io::Error) -> Failure {
    use std::io::ErrorKind as K;
    if matches!(
        error.kind(),
        K::ConnectionAborted | K::ConnectionReset | K::ConnectionRefused | K::Interrupted
    ) {
        return Failure::Client;
    }
    #[cfg(unix)]
    if let Some(code) = error.raw_os_error() {
        if [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM].contains(&code) {
            return Failure::Descriptors;
        }
        if [libc::ECONNABORTED, libc::EPROTO, libc::EPERM].contains(&code) {
            return Failure::Client;
        }
    }
    Failure::Other
}

/// The accept errors seen, for rate-limited logging.
#[derive(Debug, Default)]
pub struct AcceptErrors {
    last_logged: Option<Instant>,
    unlogged: u64,
}

impl AcceptErrors {
    /// Count and perhaps log `error`; how long to pause before accepting again.
    pub fn failed(
        &mut self,
        error: &std::io::Error,
        counts: &ConnectionCounts,
    ) -> Option<Duration> {
        let kind = match classify(error) {
            Failure::Client => return None,
            Failure::Descriptors => "descriptors",
            Failure::Other => "other",
        };
        counts.accept_error(kind);
        let now = Instant::now();
        if self.last_logged.is_some_and(|at| now - at < LOG_EVERY) {
            self.unlogged += 1;
        } else {
            let more = std::mem::take(&mut self.unlogged);
            let hint = if kind == "descriptors" {
                " (out of file descriptors: lower max_connections or raise the open file limit)"
            } else {
                ""
            };
            tracing::error!(
                "accepting a connection failed: {error}{hint}; {more} more since the last \
                 report; pausing {PAUSE:?}"
            );
            self.last_logged = Some(now);
        }
        Some(PAUSE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_follows_the_descriptor_limit() {
        // (soft limit, cap)
        for (soft, cap) in [
            (1024, 384),
            (256, 64),
            (65536, 4096),
            (1_048_576, 4096),
            (16, 4),
            (1, 1),
            (0, 1),
        ] {
            assert_eq!(cap_for(soft), cap, "soft {soft}");
        }
    }

    #[test]
    fn accept_errors_are_told_apart_counted_and_paused_on() {
        use std::io::{Error, ErrorKind};
        let counts = ConnectionCounts::default();
        let mut errors = AcceptErrors::default();
        // (error, pause)
        let cases = [
            (Error::from(ErrorKind::ConnectionReset), None),
            (Error::from(ErrorKind::ConnectionAborted), None),
            (Error::from_raw_os_error(libc::EMFILE), Some(PAUSE)),
            (Error::from_raw_os_error(libc::ENFILE), Some(PAUSE)),
            (Error::other("odd"), Some(PAUSE)),
        ];
        for (error, pause) in &cases {
            assert_eq!(errors.failed(error, &counts), *pause, "{error}");
        }
        // Logged once; the rest waited for the next report.
        assert_eq!(errors.unlogged, 2);
    }
}
