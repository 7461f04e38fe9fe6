//! Usage in one sense whatever the wire answered: `input_tokens` is the whole prompt, cache
//! reads and writes included (as OpenAI reports it; Anthropic reports them beside the
//! input; qore-session's `tokens::whole_prompt` knows each wire's way). Dialects that
//! report them beside (Anthropic Messages) subtract; accounting counts the whole prompt.
//!
//! [`Normalized`] wraps what the relay reads, so every `Usage` event and the outcome reach
//! the dialect, the metrics and the key's usage already in that sense.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::Stream;
use qore_client::Protocol;
use qore_core::{ResponseEvent, StreamOutcome};
use qore_session::tokens::whole_prompt;

use crate::events::EventSource;

fn outcome_in_sense(outcome: &StreamOutcome, wire: &dyn Protocol) -> StreamOutcome {
    let mut outcome = outcome.clone();
    match &mut outcome {
        StreamOutcome::Finished { usage, .. }
        | StreamOutcome::Failed { usage, .. }
        | StreamOutcome::Cancelled { usage } => *usage = whole_prompt(usage, wire),
    }
    outcome
}

/// An event source whose usage is in the one sense.
pub struct Normalized<S> {
    inner: S,
    /// The wire the usage was reported on.
    wire: Arc<dyn Protocol>,
    outcome: Option<StreamOutcome>,
}

impl<S: EventSource> Normalized<S> {
    pub fn new(inner: S, wire: Arc<dyn Protocol>) -> Self {
        Normalized {
            inner,
            wire,
            outcome: None,
        }
    }

    /// An event as the dialect sees it.
    pub fn event(&self, event: ResponseEvent) -> ResponseEvent {
        match event {
            ResponseEvent::Usage { usage } => ResponseEvent::Usage {
                usage: whole_prompt(&usage, &*self.wire),
            },
            other => other,
        }
    }

    fn settle(&mut self) {
        if self.outcome.is_none() {
            if let Some(outcome) = self.inner.outcome() {
                self.outcome = Some(outcome_in_sense(outcome, &*self.wire));
            }
        }
    }
}

impl<S: EventSource> Stream for Normalized<S> {
    type Item = ResponseEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ResponseEvent>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_next(cx);
        match polled {
            Poll::Ready(Some(event)) => {
                this.settle();
                Poll::Ready(Some(this.event(event)))
            }
            Poll::Ready(None) => {
                this.settle();
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: EventSource> EventSource for Normalized<S> {
    fn outcome(&self) -> Option<&StreamOutcome> {
        self.outcome.as_ref()
    }
}
