//! How long a turn took: [`Clock`] runs from the send and notes the first output of the
//! stream; [`Timing`] is what it measured. Shared by the conversation, which times each
//! turn, and the status line, which shows the times.
//!
//! Promises: the first token is the first text, reasoning or tool call of the turn's
//! stream (never a message start or usage); the total runs to [`Clock::stop`].

use std::time::{Duration, Instant};

use qore_client::tool_loop::LoopEvent;
use qore_core::ResponseEvent;

/// When a turn started and when its first token came.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    started: Instant,
    first: Option<Duration>,
}

/// A turn's times.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timing {
    /// From the send to the first text, reasoning or tool call (`None`: none came).
    pub first_token: Option<Duration>,
    pub total: Duration,
}

impl Clock {
    pub fn start() -> Clock {
        Clock {
            started: Instant::now(),
            first: None,
        }
    }

    /// Note `event`: the first output of the stream stops the first-token time.
    pub fn saw(&mut self, event: &LoopEvent<'_>) {
        let output = matches!(
            event,
            LoopEvent::Response(
                ResponseEvent::TextDelta { .. }
                    | ResponseEvent::ThinkingDelta { .. }
                    | ResponseEvent::ToolCallStart { .. }
            )
        );
        if output && self.first.is_none() {
            self.first = Some(self.started.elapsed());
        }
    }

    pub fn stop(&self) -> Timing {
        Timing {
            first_token: self.first,
            total: self.started.elapsed(),
        }
    }
}
