//! What the editor says became of the completions it was given: shown, accepted, partially
//! accepted, rejected (Copilot's `notify*` requests and the `textDocument/did*Completion`
//! notifications), counted for the server's lifetime.
//!
//! Promises: each [`Feedback::record`] adds to its event's count (`n` at once for a rejection
//! of several items) and returns the counts after it, so the caller can log them with the
//! uuid; counting never blocks and never fails.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// What became of a completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Shown,
    Accepted,
    PartiallyAccepted,
    Rejected,
}

/// The counts, as one snapshot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub shown: u64,
    pub accepted: u64,
    pub partially_accepted: u64,
    pub rejected: u64,
}

impl fmt::Display for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "shown {}, accepted {}, partially accepted {}, rejected {}",
            self.shown, self.accepted, self.partially_accepted, self.rejected
        )
    }
}

/// The counters.
#[derive(Debug, Default)]
pub struct Feedback {
    shown: AtomicU64,
    accepted: AtomicU64,
    partially_accepted: AtomicU64,
    rejected: AtomicU64,
}

impl Feedback {
    /// Count `n` of `event`; the counts after it.
    pub fn record(&self, event: Event, n: u64) -> Counts {
        let counter = match event {
            Event::Shown => &self.shown,
            Event::Accepted => &self.accepted,
            Event::PartiallyAccepted => &self.partially_accepted,
            Event::Rejected => &self.rejected,
        };
        counter.fetch_add(n, Ordering::Relaxed);
        self.counts()
    }

    pub fn counts(&self) -> Counts {
        Counts {
            shown: self.shown.load(Ordering::Relaxed),
            accepted: self.accepted.load(Ordering::Relaxed),
            partially_accepted: self.partially_accepted.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Counts, Event, Feedback};

    #[test]
    fn each_event_adds_to_its_own_count() {
        let feedback = Feedback::default();
        let steps = [
            (
                Event::Shown,
                1,
                Counts {
                    shown: 1,
                    ..Counts::default()
                },
            ),
            (
                Event::Shown,
                1,
                Counts {
                    shown: 2,
                    ..Counts::default()
                },
            ),
            (
                Event::Accepted,
                1,
                Counts {
                    shown: 2,
                    accepted: 1,
                    ..Counts::default()
                },
            ),
            (
                Event::Rejected,
                3,
                Counts {
                    shown: 2,
                    accepted: 1,
                    rejected: 3,
                    ..Counts::default()
                },
            ),
            (
                Event::PartiallyAccepted,
                1,
                Counts {
                    shown: 2,
                    accepted: 1,
                    partially_accepted: 1,
                    rejected: 3,
                },
            ),
        ];
        for (event, n, expected) in steps {
            assert_eq!(feedback.record(event, n), expected, "{event:?}");
        }
        assert_eq!(
            feedback.counts().to_string(),
            "shown 2, accepted 1, partially accepted 1, rejected 3"
        );
    }
}
